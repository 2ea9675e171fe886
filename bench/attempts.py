"""How many `git commit` attempts a governed commit takes, as a person makes them.

    python bench/attempts.py [--reference DIR]

A fresh repository per case, the hook installed (the plain git hook from `cascade init
--plain`, or the pre-commit framework with a local `cascade` hook), an ADR staged, and a
simulated author who runs `git commit` until it lands (at most 8 attempts). After a blocked
attempt the author does what a person does: answers once in the ledger (`cascade comment`
mentioning the personas who voted CHANGES, then `git add` of the ledger) if a persona asked
for changes, answers a step protocol's open question with its recommended choice, and runs
the `git mv` / `git add` the hook printed, if any. Against the fake endpoint (tests/fakellm.py):

- unanimous: the panel votes READY at once;
- asks: architect and security vote CHANGES until the author answers, then READY;
- swarm auto: a `protocol: swarm` rule (lightweight) with `auto: true` (tests/swarm_script.py);
- swarm: the same rule without `auto`: its decision points wait for the author's answer.

Columns: attempts, the paths the author had to stage by hand from the hook's hints, and the
model calls. Target: 1 attempt when unanimous, 2 when the panel asks something. With
``--reference DIR`` (another checkout, e.g. the main branch's), each case runs on both, in
turns.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from _table import child_env, reference_env, table
from fakellm import FakeLLM
from swarm_script import Swarm

DOC = "docs/adr/0001-use-sqlite.md"
LEDGER = "docs/adr/discussions/0001-use-sqlite.discussion.md"
MAX_ATTEMPTS = 8
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""
SWARM = RULES.replace("participants: [architect, security, pragmatist]",
                      "protocol: swarm\n    mode: lightweight")
ANSWER = "Added nightly encrypted backups and a restore drill."
HINT = re.compile(r"((?:git mv \S+ \S+ && )?git add .+?)(?: && git commit.*)?$")
RECOMMENDED = re.compile(r"recommended: ([\w-]+)")
CASES = {  # case: (rules, the endpoint's replies)
    "unanimous": (RULES, "ready"),
    "asks": (RULES, "asks"),
    "swarm auto": (SWARM + "    auto: true\n", "swarm"),
    "swarm": (SWARM, "swarm"),
}


def panel_reply(request) -> str:
    """READY, except architect and security ask for changes until the author answered."""
    text = request.text
    asking = ("Reply as AI-Architect " in text or "Reply as AI-Security " in text)
    if asking and ANSWER not in text:
        return json.dumps({"comment": "Q: how are the files backed up?", "vote": "CHANGES"})
    return json.dumps({"comment": "Fine.", "vote": "READY"})


def git(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=False)


def make_repo(root: Path, env: dict[str, str], rules: str, hook: str) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "Bench Author"],
                 ["config", "user.email", "bench@example.com"]):
        git(repo, env, *args)
    (repo / ".ai-rules.yml").write_text(rules)
    (repo / "README.md").write_text("# Project\n")
    if hook == "pre-commit":
        (repo / ".pre-commit-config.yaml").write_text(
            "repos:\n  - repo: local\n    hooks:\n      - id: cascade\n        name: cascade\n"
            f"        entry: {sys.executable} -m cascade hook\n        language: system\n"
            "        require_serial: true\n")
    git(repo, env, "add", ".")
    git(repo, env, "commit", "-qm", "start")
    if hook == "pre-commit":
        subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=repo, env=env,
                       check=True, capture_output=True)
    else:
        subprocess.run([sys.executable, "-m", "cascade", "init", "--plain"], cwd=repo, env=env,
                       check=True, capture_output=True)
        git(repo, env, "add", "-A")
        git(repo, env, "commit", "-qm", "hooks", "--no-verify")
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text("# Use SQLite\n\n## Context\n\nEvents need durable, ordered "
                            "storage.\n\n## Decision\n\nSQLite in WAL mode, one file per "
                            "tenant.\n")
    git(repo, env, "add", DOC)
    return repo


def act(repo: Path, env: dict[str, str], out: str, answered: bool) -> tuple[bool, int]:
    """What the author does after a blocked attempt: (answered, paths staged from hints)."""
    ledger = repo / LEDGER
    text = ledger.read_text() if ledger.is_file() else ""
    blocked = [line.split("blocked: ", 1)[1] for line in out.splitlines() if "blocked: " in line]
    if not answered and "VOTE: CHANGES" in text:
        mentions = " ".join(f"@{a}" for a in ("architect", "security"))
        subprocess.run([sys.executable, "-m", "cascade", "comment", LEDGER,
                        f"{ANSWER} {mentions} does that cover it?"], cwd=repo, env=env,
                       check=True, capture_output=True)
        git(repo, env, "add", LEDGER)
        answered = True
    staged = 0
    for line in blocked:
        choice = RECOMMENDED.search(line) if "waiting for a person" in line else None
        if choice:
            with open(ledger, "a") as fh:
                fh.write(f"\n---\nName: Bench Author\n\nNEXT: {choice.group(1)}\n---\n")
            git(repo, env, "add", LEDGER)
        hint = HINT.search(line)
        if hint:
            command = hint.group(1)
            staged += len(shlex.split(command.rsplit("git add", 1)[1]))
            subprocess.run(["bash", "-c", command], cwd=repo, env=env, check=False,
                           capture_output=True)
    return answered, staged


def attempts(env: dict[str, str], fake, case: str, hook: str) -> tuple[int | str, int, int]:
    """(attempts until the commit landed -- or ">8" --, paths staged by hand, model calls)."""
    rules, kind = CASES[case]
    if kind == "swarm":
        Swarm(fake)
    elif kind == "asks":
        fake.default(panel_reply)
    else:
        fake.default(json.dumps({"comment": "Fine.", "vote": "READY"}))
    before = fake.calls()
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp), env, rules, hook)
        answered, staged = False, 0
        for attempt in range(1, MAX_ATTEMPTS + 1):
            proc = git(repo, env, "commit", "-m", "ADR 0001")
            out = proc.stdout + proc.stderr
            if "Traceback" in out or proc.returncode not in (0, 1):
                raise SystemExit(f"{case}/{hook}: exit {proc.returncode}:\n{out[-2000:]}")
            if proc.returncode == 0:
                return attempt, staged, fake.calls() - before
            answered, more = act(repo, env, out, answered)
            staged += more
    return f">{MAX_ATTEMPTS}", staged, fake.calls() - before


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reference", help="another checkout, run in turns with this one")
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated: " + ", ".join(CASES))
    args = ap.parse_args()
    rows = []
    with FakeLLM() as fake:
        extra = {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake.url,
                 "CASCADE_BACKOFF": "0.05"}
        checkouts = {"this checkout": child_env(**extra)}
        if args.reference:
            checkouts[f"reference {args.reference}"] = reference_env(Path(args.reference), **extra)
        for env in checkouts.values():
            env["HOME"] = tempfile.mkdtemp()  # no reply cache or git identity of the user's
            env["PRE_COMMIT_HOME"] = os.path.join(env["HOME"], "pre-commit")
            for var in ("CASCADE_FALLBACK_MODELS", "CASCADE_MAX_CALLS", "GIT_DIR",
                        "GIT_INDEX_FILE", "CASCADE_STAGE", "CASCADE_HTTP"):
                env.pop(var, None)
        for case in args.cases.split(","):
            for hook in ("plain", "pre-commit"):
                for label, env in checkouts.items():  # in turns
                    n, staged, calls = attempts(env, fake, case, hook)
                    rows.append((case, hook, label, n, staged, calls))
    table("Attempts per governed commit (`git commit` until it lands; target: 1 when "
          "unanimous, 2 when the panel asks)",
          ("case", "hook", "checkout", "attempts", "paths staged by hand", "model calls"), rows)


if __name__ == "__main__":
    main()
