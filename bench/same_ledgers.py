"""Whether a change of the code changed what the protocols write: the same scripted
discussions run with this checkout and with another, their files compared.

    python bench/same_ledgers.py --reference DIR

Five discussions -- pcs, council (debate flow; dp mode, 3 rounds), swarm (standard, 2
rounds), roundtable (standard, 2 rounds) -- each `python -m cascade discuss TOPIC ...
--auto` as a subprocess in a fresh git repository, against the fake endpoint with each
protocol's test script (tests/*_script.py of the checkout that runs), one call at a time
(CASCADE_CONCURRENCY=1: a wave's replies land in the order asked, not in the order they
arrive). Every file each leaves in discussions/ (ledger, record, graph, side files) is
compared byte for byte after what differs by design from one run to the next is masked:
the creation time and every time stamp, and the nonces, signatures and ledger bindings
(``n=``, ``sig=``, ``ledger=``: the binding digests the creation time). What `status`, `list`
and `stats --json` then print of each is compared too (exit code, stdout and stderr). Last,
the hook's loop: `cascade demo --keep` (the panel asks for changes), its output (its folder,
seconds, commit ids and dates masked), the ledger it commits, and `check --format json` there.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _table import table  # noqa: E402

TOPIC = "Which database for the event store?"
PANEL = "architect,security,pragmatist"
RUNS = {  # name: (the test script's module and class, discuss's options)
    "pcs": (None, ["--protocol", "pcs", "--participants", PANEL]),
    "council, debate": (("council_script", "Council"), ["--protocol", "council", "--flow",
                                                         "debate"]),
    "council, dp": (("council_script", "Council"), ["--protocol", "council", "--mode", "dp",
                                                     "--rounds", "3"]),
    "swarm": (("swarm_script", "Swarm"), ["--protocol", "swarm", "--mode", "standard",
                                          "--rounds", "2"]),
    "roundtable": (("roundtable_script", "Table"), ["--protocol", "roundtable", "--strategy",
                                                    "standard", "--participants", PANEL,
                                                    "--rounds", "2"]),
}
PCS_REPLY = json.dumps({"comment": "I accept this.", "vote": "READY",
                        "position": "Use Postgres.", "decision": "accept"})
_MASKS = ((re.compile(r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\dZ| UTC)"), "TIME"),
          (re.compile(r" (ledger|n|sig)=[0-9a-f]+"), r" \1=X"))
_DEMO_MASKS = ((re.compile(r"cascade-demo-\w+"), "cascade-demo-X"),  # its folder, seconds,
               (re.compile(r"\(\d+\.\ds\)"), "(Ts)"),  # commits and their date
               (re.compile(r"\b[0-9a-f]{7,40}\b"), "HASH"), (re.compile(r"Date: .*"), "Date: X"))


def _runner() -> str:
    """The code that runs one checkout's discussions (in a child: its own tests' scripts)."""
    return '''
import importlib, json, os, shutil, subprocess, sys, tempfile
from pathlib import Path
code, out, runs, pcs = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3]), sys.argv[4]
sys.path.insert(0, str(code / "tests"))
from fakellm import FakeLLM
for name, (script, args) in runs.items():
    with FakeLLM() as fake:
        if script:
            s = getattr(importlib.import_module(script[0]), script[1])(fake)
            fake.default(lambda request, s=s: s(request))
        else:
            fake.default(pcs)
        env = {**os.environ, "PYTHONPATH": str(code), "CASCADE_MODEL": "openai/fast",
               "CASCADE_MODEL_STRONG": "openai/strong", "CASCADE_API_BASE": fake.url,
               "CASCADE_CONCURRENCY": "1", "HOME": tempfile.mkdtemp(),
               "GIT_CONFIG_GLOBAL": os.devnull, "GIT_AUTHOR_NAME": "Bench",
               "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_COMMITTER_NAME": "Bench",
               "GIT_COMMITTER_EMAIL": "bench@example.com"}
        env.pop("CASCADE_FALLBACK_MODELS", None)
        tmp = Path(tempfile.mkdtemp())
        subprocess.run(["git", "init", "-q"], cwd=tmp, env=env, check=True)
        proc = subprocess.run([sys.executable, "-m", "cascade", "discuss", "%s", *args,
                               "--auto"], cwd=tmp, env=env, capture_output=True, text=True)
        dest = out / name
        dest.mkdir(parents=True)
        (dest / "exit code").write_text(f"{proc.returncode}\\n")
        for f in sorted((tmp / "discussions").glob("*")):
            shutil.copy(f, dest / f.name)
        for command, kept in ((["status"], "status.out"), (["list"], "list.out"),
                              (["stats", "--json"], "stats.json")):
            shown = subprocess.run([sys.executable, "-m", "cascade", *command], cwd=tmp,
                                   env=env, capture_output=True, text=True)
            (dest / kept).write_text(f"{shown.returncode}\\n{shown.stdout}{shown.stderr}")
        shutil.rmtree(tmp, ignore_errors=True)
with FakeLLM() as fake:  # the hook's loop: cascade demo, its panel asking for changes
    for persona in ("AI-Architect", "AI-Security", "AI-Pragmatist"):
        fake.script(f"Reply as {persona} ", json.dumps(
            {"comment": f"{persona} wants a rollback plan.", "vote": "CHANGES", "findings": [
                {"severity": "major", "where": "Decision", "what": "no rollback plan"}]}))
    env = {**os.environ, "PYTHONPATH": str(code), "CASCADE_MODEL": "openai/fake",
           "CASCADE_API_BASE": fake.url, "CASCADE_BACKOFF": "0.05", "CASCADE_CONCURRENCY": "1",
           "HOME": tempfile.mkdtemp()}
    proc = subprocess.run([sys.executable, "-m", "cascade", "demo", "--keep"], env=env,
                          capture_output=True, text=True)
    dest = out / "demo (the hook)"
    dest.mkdir(parents=True)
    (dest / "demo.out").write_text(f"{proc.returncode}\\n{proc.stdout}{proc.stderr}")
    kept = Path(proc.stdout.rsplit("is kept at ", 1)[1].strip().rstrip("."))
    for f in sorted((kept / "docs/adr/discussions").glob("*")):
        shutil.copy(f, dest / f.name)
    shown = subprocess.run([sys.executable, "-m", "cascade", "check", "--format", "json"],
                           cwd=kept, env=env, capture_output=True, text=True)
    (dest / "check.json").write_text(f"{shown.returncode}\\n{shown.stdout}{shown.stderr}")
    shutil.rmtree(kept, ignore_errors=True)
''' % TOPIC


def run(code: Path, out: Path) -> None:
    subprocess.run([sys.executable, "-c", _runner(), str(code), str(out), json.dumps(RUNS),
                    PCS_REPLY], cwd=code, check=True)


def masked(path: Path) -> str:
    text = path.read_text()
    shown = path.name in ("demo.out", "check.json")
    for pattern, replacement in _MASKS + (_DEMO_MASKS if shown else ()):
        text = pattern.sub(replacement, text)
    return text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", required=True, help="a checkout of the commit to compare")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    try:
        run(HERE.parent, tmp / "this")
        run(Path(args.reference).resolve(), tmp / "reference")
        rows = []
        for name in [*RUNS, "demo (the hook)"]:
            mine, theirs = tmp / "this" / name, tmp / "reference" / name
            files = sorted({p.name for p in mine.iterdir()} | {p.name for p in theirs.iterdir()})
            same = [f for f in files if (mine / f).is_file() and (theirs / f).is_file()
                    and masked(mine / f) == masked(theirs / f)]
            rows.append((name, len(files), len(same),
                         ", ".join(f for f in files if f not in same) or "-"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    table(f"The same scripted discussions, this checkout against {args.reference} (files "
          "compared byte for byte, times, nonces, signatures and ledger bindings masked)",
          ("discussion", "files", "the same", "differ"), rows)


if __name__ == "__main__":
    main()
