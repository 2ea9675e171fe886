"""What a commit attempt costs beyond the model's own time.

    python bench/hook_endpoint.py [--runs N] [--reference DIR]

`python -m cascade hook docs/adr/0001.md`, as a subprocess as a user (or pre-commit) runs it,
in a fresh git repository whose `.ai-rules.yml` gives the ADR three personas, all pending,
against an endpoint on 127.0.0.1 that answers every call in 1.0 s (tests/fakellm.py: its
OpenAI-compatible chat completions for an `openai/` model, its Anthropic Messages API for an
`anthropic/` model). Nothing is excluded: interpreter start, imports, git, rendering the
ledger, the three concurrent calls, writing. Target: wall - 1.0 s <= 0.5 s for both.

Per model: "litellm" is CASCADE_HTTP=litellm (every call through litellm, as before these
providers were asked directly); "direct (httpx)" is the default. With ``--reference DIR``
(a checkout of another commit), this checkout's hook and the reference's, each with its
default path, are timed in turns for both models (A B A B ...): medians with min-max, and
the load; beside the wall time, the CPU time of the hook and the git it ran, which a loaded
machine barely moves.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(HERE))

from _table import child_env, reference_env, spread, table

DELAY = 1.0
DOC = "docs/adr/0001.md"
RULES = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{stem}.discussion.md"
    participants: [architect, security, pragmatist]
    consensus: {threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}
"""


def make_repo(root: Path, env: dict[str, str]) -> Path:
    repo = root / "repo"
    repo.mkdir()
    for args in (["init", "-q"], ["config", "user.name", "Bench"],
                 ["config", "user.email", "bench@example.com"]):
        subprocess.run(["git", *args], cwd=repo, env=env, check=True)
    (repo / ".ai-rules.yml").write_text(RULES)
    subprocess.run(["git", "add", "."], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-qm", "start"], cwd=repo, env=env, check=True)
    (repo / "docs/adr").mkdir(parents=True)
    (repo / DOC).write_text(
        "# Use SQLite for the event store\n\n## Context\n\nWe need durable, ordered storage for "
        "domain events, read by three projections.\n\n## Decision\n\nUse SQLite in WAL mode, "
        "one file per tenant, with a nightly backup to object storage.\n")
    subprocess.run(["git", "add", DOC], cwd=repo, env=env, check=True)
    return repo


def hook_once(env: dict[str, str], fake) -> float:
    return hook_timed(env, fake)[0]


def hook_timed(env: dict[str, str], fake) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the hook and the git it ran: user + system) of one hook
    run. CPU time barely moves with the machine's load, which wall time does."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp), env)
        before = fake.calls()
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "cascade", "hook", DOC], cwd=repo, env=env,
                              capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime
        # blocked (exit 1) with three new reviews: anything else is not the case measured
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert fake.calls() - before == 3, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr, proc.stderr
        return wall, cpu


UNSET = ("CASCADE_FALLBACK_MODELS", "CASCADE_MAX_CALLS", "GIT_DIR", "GIT_INDEX_FILE",
         "CASCADE_HTTP", "CASCADE_API_BASE", "CASCADE_API_KEY", "OPENAI_API_KEY",
         "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_BASE", "ANTHROPIC_BASE_URL")


def model_settings(fake) -> dict[str, dict[str, str]]:
    """The environment that points each model at the fake endpoint, by model."""
    return {"openai/fake": {"CASCADE_MODEL": "openai/fake", "CASCADE_API_BASE": fake.url},
            "anthropic/claude-haiku-4-5": {"CASCADE_MODEL": "anthropic/claude-haiku-4-5",
                                           "ANTHROPIC_API_BASE": fake.root,
                                           "ANTHROPIC_API_KEY": "sk-ant-bench"}}


def clean(env: dict[str, str], **extra: str) -> dict[str, str]:
    for var in UNSET:
        env.pop(var, None)
    env.update(extra)
    return env


def bench_hook(runs: int) -> list[tuple]:
    from fakellm import FakeLLM, delayed

    rows = []
    with FakeLLM() as fake:
        fake.default(delayed(json.dumps({"comment": "Fine.", "vote": "READY"}), DELAY))
        for model, extra in model_settings(fake).items():
            for label, http in (("litellm (CASCADE_HTTP=litellm)", "litellm"),
                                ("direct (httpx)", "auto")):
                env = clean(child_env(), **extra, CASCADE_HTTP=http)
                hook_once(env, fake)  # warm the file cache (bytecode, site-packages)
                walls = [hook_once(env, fake) for _ in range(runs)]
                wall = statistics.median(walls)
                rows.append((model, label, f"{wall:.2f}", f"{wall - DELAY:+.2f}", "<= +0.50",
                             " ".join(f"{w:.2f}" for w in walls)))
    return rows


def compare(reference: Path, runs: int) -> None:
    """This checkout's hook and the reference's, each on its default path, in turns, for an
    openai/ and an anthropic/ model."""
    from fakellm import FakeLLM, delayed

    with FakeLLM() as fake:
        fake.default(delayed(json.dumps({"comment": "Fine.", "vote": "READY"}), DELAY))
        envs = {}
        for model, extra in model_settings(fake).items():
            envs[(model, "this checkout")] = clean(child_env(), **extra)
            envs[(model, f"reference {reference}")] = clean(reference_env(reference), **extra)
        for env in envs.values():
            hook_once(env, fake)  # warm-up
        times: dict[tuple[str, str], list[float]] = {key: [] for key in envs}
        cpus: dict[tuple[str, str], list[float]] = {key: [] for key in envs}
        start = os.getloadavg()
        for _ in range(runs):
            for key, env in envs.items():
                wall, cpu = hook_timed(env, fake)
                times[key].append(wall - DELAY)
                cpus[key].append(cpu)
    load = os.getloadavg()
    table(f"Hook run over the model's {DELAY:.1f} s, in turns (seconds, median (min-max) of "
          f"{runs}; load {start[0]:.1f} at the start, {load[0]:.1f} at the end)",
          ("model", "checkout", "wall - 1.0", "CPU (hook and its git)"),
          [(*key, spread(t), spread(cpus[key])) for key, t in times.items()])


def import_seconds(module: str, runs: int) -> float:
    def once(code: str) -> float:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                       env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
        return time.perf_counter() - start

    bare = statistics.median(once("pass") for _ in range(runs))
    return statistics.median(once(f"import {module}") for _ in range(runs)) - bare


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns with this one")
    args = ap.parse_args()
    if args.reference:
        compare(Path(args.reference), args.runs)
        return
    table(f"Hook run, three pending personas, endpoint answering in {DELAY:.1f} s "
          f"(seconds, median of {args.runs}; `python -m cascade hook` as a subprocess)",
          ("model", "path", "wall", "wall - 1.0", "target", "runs"), bench_hook(args.runs))
    table("Import time over a bare interpreter (seconds, median)", ("module", "import"),
          [(m, f"{import_seconds(m, max(3, args.runs)):.2f}")
           for m in ("asyncio", "asyncio, http.client", "asyncio, httpx", "litellm")])


if __name__ == "__main__":
    main()
