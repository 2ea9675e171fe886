"""Mutation testing of the visibilities and the protocol rules (cosmic-ray), in two stages:
each mutant of the functions in scope against the fast table of its kind, then the
survivors against the slower end-to-end tests. Prints, per function, the mutants killed and
the survivors with their diffs.

    python -m venv /tmp/crvenv && /tmp/crvenv/bin/pip install cosmic-ray==8.7.0
    python bench/mutation.py --cosmic-ray /tmp/crvenv/bin/cosmic-ray [visibility outcomes exits]

``--fast-only`` stops after the fast tables and lists their survivors. Each stage first runs
its tests once without a mutant, and stops if they fail (a failing command would count every
mutant killed).

It mutates a copy of the tracked files in a temporary directory, never this checkout; the
tests run with this interpreter (the project's venv). A mutant the fast table kills takes a
few seconds, one it lets through the end-to-end run (two to three minutes): visibility and
outcomes, about an hour on two cores; exits (the exit rules and the conditions, about 630
mutants), half an hour before its survivors. The survivors expected are equivalent mutants:
``is`` for ``==`` where CPython makes them agree (small ints such as rounds and phase
indexes, constants compared with constants, one-letter group names), an order for an
equality where no value the ledger can hold tells them apart (a choice field's values), a
bound past a value the rule's own answers never reach (a phase index beyond the last), and
the like.
"""
from __future__ import annotations

import argparse
import ast
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL_TESTS = ("tests/test_pcs.py tests/test_swarm.py tests/test_roundtable.py "
                  "tests/test_council.py tests/test_delphi.py")
# scope: (module, functions (None: all), fast tests, end-to-end tests)
SCOPES = {
    "visibility": ("cascade/protocol/visibility.py", None, "tests/test_visibility_rules.py",
                   "tests/test_visibility.py " + PROTOCOL_TESTS),
    "outcomes": ("cascade/protocol/registry.py",
                 {"by_exit", "all_accept_outcome", "thresholds", "consent", "referee",
                  "accepted", "_names"}, "tests/test_outcome_rules.py", PROTOCOL_TESTS),
    "ballot": ("cascade/protocol/ballot.py", None, "tests/test_outcome_rules.py",
               "tests/test_discussion_state.py tests/test_consensus.py tests/test_trust.py"),
    "exits": ("cascade/protocol/registry.py",
              {"all_accept", "next_action", "converged", "_spread_within", "facilitated",
               "advance", "stay", "_too_easy", "scheduled", "_facilitation", "_ids",
               "open_conflicts", "escalated", "_step_role", "not_last"},
              "tests/test_exit_rules.py", "tests/test_behaviours.py " + PROTOCOL_TESTS),
}
KEY = "operator_name, occurrence, start_pos_row, start_pos_col"


def session(cr: str, work: Path, name: str, module: str, tests: str, keep) -> Path:
    """A cosmic-ray session of ``module`` run by ``tests``, all but ``keep(row)`` skipped."""
    config, db = work / f"{name}.toml", work / f"{name}.sqlite"
    command = (f"env PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONPATH={work / 'src'} {sys.executable} "
               f"-m pytest -q -x -p no:cacheprovider -o addopts= {tests}")
    config.write_text(f'[cosmic-ray]\nmodule-path = "{module}"\ntimeout = 600.0\n'
                      f'excluded-modules = []\ntest-command = "{command}"\n'
                      '[cosmic-ray.distributor]\nname = "local"\n')
    subprocess.run([cr, "init", str(config), str(db)], cwd=work / "src", check=True)
    kept = 0
    with sqlite3.connect(db) as c:
        for job, *row in c.execute(f"select job_id, definition_name, {KEY} from mutation_specs"):
            if keep(tuple(row)):
                kept += 1
            else:
                c.execute("insert into work_results (worker_outcome, output, job_id) "
                          "values ('SKIPPED', 'out of scope', ?)", (job,))
    if kept:  # a test that fails unmutated would count every mutant killed
        unmutated = subprocess.run(command, shell=True, cwd=work / "src", check=False,
                                   capture_output=True, text=True)
        if unmutated.returncode:
            sys.exit(f"{tests}: fail without a mutant (a file not tracked?):\n"
                     + unmutated.stdout[-2000:])
    subprocess.run([cr, "exec", str(config), str(db)], cwd=work / "src", check=True)
    return db


def annotations(path: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The spans of a module's annotations: never evaluated (``from __future__ import
    annotations``), so a mutant there is equivalent by construction and is not run."""
    nodes = [n.annotation for n in ast.walk(ast.parse(path.read_text()))
             if isinstance(n, (ast.arg, ast.AnnAssign)) and n.annotation is not None]
    nodes += [n.returns for n in ast.walk(ast.parse(path.read_text()))
              if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.returns]
    return [((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in nodes]


def results(db: Path) -> list[tuple]:
    with sqlite3.connect(db) as c:
        return c.execute(f"select coalesce(m.definition_name, '(module)'), r.test_outcome, "
                         f"r.diff, {KEY} from "
                         "work_results r join mutation_specs m using (job_id) "
                         "where r.worker_outcome != 'SKIPPED'").fetchall()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cosmic-ray", required=True, help="the cosmic-ray command")
    parser.add_argument("--fast-only", action="store_true",
                        help="run the fast tables only: list their survivors, not run end to end")
    parser.add_argument("scopes", nargs="*", default=["visibility", "outcomes"],
                        choices=sorted(SCOPES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        work = Path(tmp)
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                               check=True).stdout
        subprocess.run(["tar", "-cf", str(work / "src.tar"), "--null", "-T", "-"], cwd=ROOT,
                       input=files, check=True)
        (work / "src").mkdir()
        subprocess.run(["tar", "-xf", str(work / "src.tar")], cwd=work / "src", check=True)
        for name in args.scopes:
            module, functions, fast, slow = SCOPES[name]
            spans = annotations(work / "src" / module)
            first = session(args.cosmic_ray, work, name, module, fast,
                            lambda row, functions=functions, spans=spans:
                            (functions is None or row[0] in functions)
                            and not any(a <= row[3:5] < b for a, b in spans))
            rows = results(first)
            survived = {r[3:] for r in rows if r[1] != "KILLED"}
            if args.fast_only:
                late = {r[3:]: r for r in rows if r[3:] in survived}
                print(f"\n{name}: {len(rows)} mutants, {len(rows) - len(survived)} killed by "
                      f"{fast} (the end-to-end tests not run)")
            else:
                second = session(args.cosmic_ray, work, name + "-e2e", module, slow,
                                 lambda row, survived=survived: row[1:] in survived)
                late = {r[3:]: r for r in results(second)}
                print(f"\n{name}: {len(rows)} mutants, {len(rows) - len(survived)} killed by "
                      f"{fast}, {sum(r[1] == 'KILLED' for r in late.values())} more by the "
                      f"end-to-end tests")
            for fn in sorted({r[0] for r in rows}):
                mine = [r for r in rows if r[0] == fn]
                again = [late[r[3:]][1] for r in mine if r[3:] in late]
                print(f"  {fn:<24} {len(mine):>4} mutants, "
                      f"{sum(r[1] == 'KILLED' for r in mine):>4} killed by the table, "
                      f"{again.count('KILLED'):>2} end to end, "
                      f"{len(again) - again.count('KILLED'):>2} left")
            for fn, outcome, diff, *_ in sorted(late.values(), key=lambda r: r[3:]):
                if outcome != "KILLED":
                    change = [line for line in (diff or "").splitlines()
                              if line[:1] in "+-" and line[:3] not in ("---", "+++")]
                    print(f"  {outcome} in {fn}: " + " => ".join(s.strip() for s in change))
    return 0


if __name__ == "__main__":
    sys.exit(main())
