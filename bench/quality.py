"""How well a review finds what is wrong: one prompt, the panel and pcs over ADRs with seeded
flaws and clean controls.

    python bench/quality.py [--model M] [--configs one,panel,pcs] [--only A,B] [--limit N]
                            [--json]

The ADRs are the project's own (bench/data/quality/): each flawed one has one or two seeded
flaws (a missing rollback plan, a secret in plain text, unbounded retention, one region for a
99.99% target, ...), and the controls have none. ``manifest.yml`` names each file, whether it
is a control, and each flaw with its place: a quote of the document or a section heading (for
a flaw of omission, the section where the missing thing belongs), turned into the document's
line range when the bench runs (a quote that is not found is an error naming the file).

Each ADR is reviewed as a user's commit reviews it, once per configuration, in a fresh git
repository: a rule in ``.ai-rules.yml``, the plain hook (``cascade init --plain``), the ADR
staged and ``git commit`` run, with whatever model ``CASCADE_MODEL`` (``--model``) and
``CASCADE_API_BASE`` name (unset: the embedded model). The configurations:

- ``one``: one prompt -- the ``review`` protocol with one participant (the architect);
- ``panel``: the ``review`` protocol with the rule's default participants;
- ``pcs``: Propose / Challenge / Synthesize with the same participants, run by the hook to an
  outcome within the commit attempt.

Per configuration it prints: recall (seeded flaws located: a finding -- as ``status`` lists
them, ``CONCERN:`` markers included -- whose located lines overlap the flaw's lines), flaws mentioned but not located (a finding or a persona's comment
names the flaw by one of its keywords, but no finding's lines overlap it), findings given and
those not found in the document, false findings (critical or major findings on the
controls), tokens (prompt + completion, from the blocks' stamps) and the wall time of the
commits. With the embedded model (a 135M model) the figures only prove the mechanics.
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
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from _table import child_env, table

from cascade.config.rules import SEVERITIES
from cascade.ledger.parse import parse
from cascade.ledger.provenance import verify
from cascade.protocol.finding_life import numbered
from cascade.protocol.findings import Finding, locate

DATA = HERE / "data" / "quality"
MANIFEST = DATA / "manifest.yml"
FALSE = ("critical", "major")  # a finding of these on a control is a false finding
RULE = """\
rules:
  - name: adr
    match: "docs/adr/*.md"
    template: adr
    discussion: "docs/adr/discussions/{{stem}}.discussion.md"
    consensus: {{threshold_ready: 0.67, threshold_reject: 0.01, human_required: false}}
{extra}"""
CONFIGS = {  # name: what the rule adds
    "one": "    participants: [architect]\n",
    "panel": "",
    "pcs": "    protocol: pcs\n",
}


class Bad(Exception):
    """Bad input to the bench: one line naming the file."""


# ---- the documents and their flaws -------------------------------------------------------

@dataclass
class Flaw:
    id: str
    what: str
    severity: str
    lines: tuple[int, int]
    keywords: tuple[str, ...] = ()


@dataclass
class Adr:
    file: str
    path: Path
    control: bool
    flaws: list[Flaw] = field(default_factory=list)


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*\Z")


def section_lines(text: str, title: str) -> tuple[int, int] | None:
    """The lines of the section headed ``title`` (case aside): its heading to the line before
    the next heading of its level or above (trailing blank lines left out)."""
    lines = text.splitlines()
    for number, line in enumerate(lines, 1):
        m = _HEADING.match(line)
        if not m or _norm(m.group(2)) != _norm(title):
            continue
        end = len(lines)
        for later in range(number + 1, len(lines) + 1):
            n = _HEADING.match(lines[later - 1])
            if n and len(n.group(1)) <= len(m.group(1)):
                end = later - 1
                break
        while end > number and not lines[end - 1].strip():
            end -= 1
        return number, end
    return None


def _flaw(item: object, name: str, manifest: Path) -> Flaw:
    if not isinstance(item, dict) or not item.get("id"):
        raise Bad(f"{manifest}: {name}: a flaw without an id")
    where = f"{name}: flaw {item['id']!r}"
    if item.get("severity") not in SEVERITIES:
        raise Bad(f"{manifest}: {where}: severity must be one of {', '.join(SEVERITIES)}")
    if ("quote" in item) == ("section" in item):
        raise Bad(f"{manifest}: {where}: give a quote or a section (one of them)")
    document = manifest.parent / name
    text = document.read_text(encoding="utf-8")
    if "quote" in item:
        lines = locate(str(item["quote"]), text)  # as a finding's quote is located
        missing = f"quote not found in {document}: {item['quote']!r}"
    else:
        lines = section_lines(text, str(item["section"]))
        missing = f"section not found in {document}: {item['section']!r}"
    if lines is None:
        raise Bad(f"{manifest}: {where}: {missing}")
    return Flaw(str(item["id"]), str(item.get("what", "")), item["severity"], lines,
                tuple(str(k).casefold() for k in item.get("keywords") or ()))


def load(manifest: Path = MANIFEST) -> list[Adr]:
    """The ADRs of the manifest (the documents are beside it), in its order, each flaw placed
    on the document's lines."""
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise Bad(f"{manifest}: {exc}".splitlines()[0]) from None
    adrs = []
    for item in (data or {}).get("adrs") or [] if isinstance(data, dict) else []:
        name = str(item.get("file", "")) if isinstance(item, dict) else ""
        if not name or not (manifest.parent / name).is_file():
            raise Bad(f"{manifest}: no such document: {manifest.parent / name}")
        flaws = [_flaw(f, name, manifest) for f in item.get("flaws") or ()]
        control = bool(item.get("control"))
        if control == bool(flaws):
            raise Bad(f"{manifest}: {name}: a control has no flaws; any other ADR has some")
        adrs.append(Adr(name, manifest.parent / name, control, flaws))
    if not adrs:
        raise Bad(f"{manifest}: no adrs")
    return adrs


# ---- what a ledger holds ---------------------------------------------------------------

def _blocks(ledger: Path) -> list:
    """The blocks the tool wrote for personas (their stamp verifies)."""
    comments = parse(ledger.read_text(encoding="utf-8")).comments
    return [c for c in comments if c.origin == "ai" and verify(c) is None]


def findings_of(ledger: Path) -> list[Finding]:
    """Every finding of ``ledger`` as ``status`` lists them (cascade.protocol.findings): those
    stamped on the persona blocks, with the lines they were located at, and each CONCERN:
    marker (major, not located)."""
    return numbered(parse(ledger.read_text(encoding="utf-8")).comments)


def tokens_of(ledger: Path) -> int:
    """Prompt plus completion tokens of the persona blocks, from their stamps."""
    return sum(int(c.provenance.get(k, 0) or 0) for c in _blocks(ledger)
               for k in ("prompt_tokens", "completion_tokens"))


def said_of(ledger: Path) -> str:
    """What the personas wrote (their comments), case folded."""
    return "\n".join(c.body for c in _blocks(ledger)).casefold()


# ---- scoring -----------------------------------------------------------------------------

def _overlap(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


@dataclass
class Score:
    located: list[str] = field(default_factory=list)  # flaw ids
    mentioned: list[str] = field(default_factory=list)  # named, not located
    missed: list[str] = field(default_factory=list)
    findings: int = 0
    not_found: int = 0  # findings whose quote was not found in the document
    false: int = 0  # critical or major findings on a control
    tokens: int = 0
    seconds: float = 0.0


def _words(f: Finding) -> str:
    return f"{f.where} {f.what} {f.why} {f.suggestion}".casefold()


def score(adr: Adr, found: list[Finding], said: str) -> Score:
    """How ``found`` (and ``said``, the personas' comments) cover ``adr``'s flaws."""
    out = Score(findings=len(found), not_found=sum(f.lines is None for f in found))
    if adr.control:
        out.false = sum(f.severity in FALSE for f in found)
    for flaw in adr.flaws:
        if any(f.lines and _overlap(f.lines, flaw.lines) for f in found):
            out.located.append(flaw.id)
        elif any(k in _words(f) for f in found for k in flaw.keywords) or any(
                k in said for k in flaw.keywords):
            out.mentioned.append(flaw.id)
        else:
            out.missed.append(flaw.id)
    return out


# ---- one review, as a commit runs it -----------------------------------------------------

def _git(repo: Path, env: dict[str, str], *args: str) -> None:
    proc = subprocess.run(["git", *args], cwd=repo, env=env, check=False, capture_output=True,
                          text=True)
    if proc.returncode:
        raise Bad(f"git {' '.join(args)}: {(proc.stderr or proc.stdout).strip()[-300:]}")


def review(adr: Adr, config: str, env: dict[str, str]) -> Score:
    """``adr`` committed in a fresh repository whose rule is ``config``'s: the hook's
    findings, tokens and the commit's wall time."""
    with tempfile.TemporaryDirectory(prefix="cascade-quality-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        run_env = {**env, "CASCADE_CACHE_DIR": str(Path(tmp) / "cache")}  # no reply reused
        _git(repo, run_env, "init", "-q")
        _git(repo, run_env, "config", "user.name", "Bench")
        _git(repo, run_env, "config", "user.email", "bench@example.com")
        (repo / ".ai-rules.yml").write_text(RULE.format(extra=CONFIGS[config]))
        init = subprocess.run([sys.executable, "-m", "cascade", "init", "--plain"], cwd=repo, check=False,
                              env=run_env, capture_output=True, text=True)
        if init.returncode:
            raise Bad(f"cascade init: {(init.stderr or init.stdout).strip()[-300:]}")
        _git(repo, run_env, "add", ".")
        _git(repo, run_env, "commit", "-qm", "rules", "--no-verify")
        (repo / "docs/adr").mkdir(parents=True)
        shutil.copyfile(adr.path, repo / "docs/adr" / adr.file)
        _git(repo, run_env, "add", "docs/adr")
        start = time.perf_counter()
        proc = subprocess.run(["git", "commit", "-m", f"ADR {adr.file}"], cwd=repo, check=False,
                              env=run_env, capture_output=True, text=True)
        seconds = time.perf_counter() - start
        said = proc.stdout + proc.stderr
        ledger = repo / "docs/adr/discussions" / f"{Path(adr.file).stem}.discussion.md"
        if proc.returncode not in (0, 1) or "Traceback" in said or not ledger.is_file():
            raise Bad(f"{adr.file} ({config}): the commit failed (exit {proc.returncode}): "
                      f"{said.strip()[-600:]}")
        out = score(adr, findings_of(ledger), said_of(ledger))
        out.tokens, out.seconds = tokens_of(ledger), seconds
        return out


# ---- the table ---------------------------------------------------------------------------

def summary(adrs: list[Adr], scores: dict[str, Score]) -> dict[str, object]:
    flaws = sum(len(a.flaws) for a in adrs)
    located = sum(len(s.located) for s in scores.values())
    return {
        "adrs": len(adrs), "controls": sum(a.control for a in adrs), "flaws": flaws,
        "located": located, "recall": round(located / flaws, 3) if flaws else None,
        "mentioned_not_located": sum(len(s.mentioned) for s in scores.values()),
        "findings": sum(s.findings for s in scores.values()),
        "not_found": sum(s.not_found for s in scores.values()),
        "false_findings": sum(s.false for s in scores.values()),
        "tokens": sum(s.tokens for s in scores.values()),
        "seconds": round(sum(s.seconds for s in scores.values()), 2),
        "per_adr": {name: {"located": s.located, "mentioned": s.mentioned,
                           "missed": s.missed, "findings": s.findings,
                           "not_found": s.not_found, "false": s.false, "tokens": s.tokens,
                           "seconds": round(s.seconds, 2)} for name, s in scores.items()},
    }


def row(config: str, s: dict) -> tuple:
    recall = f"{s['located']}/{s['flaws']}" + (
        f" ({s['recall']:.0%})" if s["recall"] is not None else "")
    return (config, recall, f"{s['mentioned_not_located']}/{s['flaws']}",
            f"{s['findings']} ({s['not_found']} not found)",
            f"{s['false_findings']} on {s['controls']}", s["tokens"], f"{s['seconds']:.1f}")


def pick(adrs: list[Adr], only: str | None, limit: int | None, manifest: Path) -> list[Adr]:
    if only:
        wanted = [w.strip() for w in only.split(",") if w.strip()]
        chosen = []
        for w in wanted:
            match = [a for a in adrs if a.file == w or a.file.startswith(w)]
            if len(match) != 1:
                raise Bad(f"{manifest}: --only {w!r}: {'no' if not match else 'more than one'}"
                          " ADR of that name")
            chosen.append(match[0])
        adrs = chosen
    return adrs[:limit] if limit else adrs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="the model (CASCADE_MODEL); unset: the environment's")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"comma-separated, of {', '.join(CONFIGS)}")
    ap.add_argument("--only", help="comma-separated ADR file names (or their NNNN prefix)")
    ap.add_argument("--limit", type=int, help="the first N ADRs (after --only)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--manifest", type=Path, default=MANIFEST,
                    help="another set of ADRs (its manifest; the documents beside it)")
    args = ap.parse_args(argv)
    try:
        configs = [c.strip() for c in args.configs.split(",") if c.strip()]
        for c in configs:
            if c not in CONFIGS:
                raise Bad(f"--configs: unknown configuration {c!r} ({', '.join(CONFIGS)})")
        adrs = pick(load(args.manifest), args.only, args.limit, args.manifest)
        env = child_env(**({"CASCADE_MODEL": args.model} if args.model else {}))
        for var in ("GIT_DIR", "GIT_INDEX_FILE", "CASCADE_STAGE"):
            env.pop(var, None)
        load_at_start = os.getloadavg()[0]
        results = {c: summary(adrs, {a.file: review(a, c, env) for a in adrs})
                   for c in configs}
    except Bad as exc:
        print(f"quality: {exc}", file=sys.stderr)
        return 2
    model = env.get("CASCADE_MODEL") or "the embedded model"
    if args.json:
        print(json.dumps({"model": model, "load": [load_at_start, os.getloadavg()[0]],
                          "configs": results}, indent=2))
        return 0
    table(f"Review quality, {model}: {len(adrs)} ADRs ({sum(a.control for a in adrs)} "
          f"controls), load {load_at_start:.1f} at the start, {os.getloadavg()[0]:.1f} at "
          "the end", ("config", "located (recall)", "mentioned, not located", "findings",
                      "false findings (controls)", "tokens", "wall (s)"),
          [row(c, s) for c, s in results.items()])
    return 0


if __name__ == "__main__":
    sys.exit(main())
