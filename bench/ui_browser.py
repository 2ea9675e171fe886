"""How long `cascade ui` takes to show its first screen over many large ledgers.

    python bench/ui_browser.py [--ledgers 1000] [--comments 50] [--repeat 3] [--reference DIR]

The repository is bench/check.py's (1,000 ledgers of ~50 one-kilobyte comments, each with a
revision of its document). Each run is a fresh process, timed from its start (imports
included) to the browser showing its rows (titles at least), to a screenful of rows whose
ledgers are read (the first ``--screen`` rows: title, protocol, where, outcome, votes), and
to every row read. The app
runs headless (Textual's ``run_test``), at 120x40, in the repository (as a person runs it). With ``--reference DIR`` the same is timed
for another checkout, in turns (A B A B ...). Medians with min-max, and the load.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _table import child_env, reference_env, spread, table  # noqa: E402
from check import build  # noqa: E402

# Run in the child: prints {"first": s, "all": s} -- seconds since the process started.
CHILD = r"""
import asyncio, json, sys, time
from pathlib import Path
start = time.perf_counter()
from cascade.ui.app import BrowserScreen, CascadeApp
root, screen = sys.argv[1], int(sys.argv[2])

def read(rows):  # a row whose ledger was read (a reference may not have placeholders)
    return [not getattr(r, "loading", False) for r in rows]

async def main():
    app = CascadeApp(Path(root))
    shown = first = done = errors = None
    async with app.run_test(size=(120, 40)) as pilot:
        while done is None and time.perf_counter() - start < 600:
            await pilot.pause(0.02)
            if not isinstance(app.screen, BrowserScreen) or not app.screen.rows:
                continue
            if app.screen.query_one("DataTable").row_count == 0:
                continue
            shown = shown or time.perf_counter() - start
            got = read(app.screen.rows)
            if first is None and all(got[:screen]):
                first = time.perf_counter() - start
            if first is not None and all(got):
                done = time.perf_counter() - start
                errors = sum(1 for r in app.screen.rows if getattr(r, "error", ""))
    print(json.dumps({"shown": shown, "first": first, "all": done, "errors": errors}))

asyncio.run(main())
"""


def run(env: dict[str, str], root: Path, screen: int) -> dict[str, float]:
    proc = subprocess.run([sys.executable, "-c", CHILD, str(root), str(screen)], env=env,
                          cwd=root, capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if got["errors"]:  # a row that says it cannot be read is not a row read
        raise SystemExit(f"{got['errors']} ledger(s) could not be read: {env['PYTHONPATH']}")
    return got


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ledgers", type=int, default=1000)
    ap.add_argument("--comments", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--screen", type=int, default=30, help="rows on the first screen")
    ap.add_argument("--reference", help="a checkout of another commit, timed in turns")
    args = ap.parse_args()
    envs = {"this checkout": child_env()}
    if args.reference:
        envs["reference"] = reference_env(Path(args.reference).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        size, _ = build(root, args.ledgers, args.comments)
        for env in envs.values():  # warm-up: bytecode written, the files in the page cache
            run(env, root, args.screen)
        times: dict[str, dict[str, list[float]]] = {
            k: {"shown": [], "first": [], "all": []} for k in envs}
        for _ in range(args.repeat):
            for label, env in envs.items():
                got = run(env, root, args.screen)
                for key in ("shown", "first", "all"):
                    times[label][key].append(got[key])
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    table(f"cascade ui over {args.ledgers} ledgers ({size / 2**20:.0f} MiB), seconds from the "
          f"process start, median (min-max) of {args.repeat}; 2 cores; load {load}",
          ("checkout", "browser shown", f"first screen ({args.screen} rows read)",
           "every row read"),
          [(label, spread(t["shown"]), spread(t["first"]), spread(t["all"]))
           for label, t in times.items()])


if __name__ == "__main__":
    main()
