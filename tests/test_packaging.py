"""The wheel carries everything the program reads, and works without the source tree."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(out), str(REPO)], check=True, capture_output=True, text=True)
    [whl] = out.glob("cascadingdev-*.whl")
    return whl


def test_wheel_contains_bundled_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder in ("templates", "rules", "personas", "protocols"):
        for path in (REPO / folder).rglob("*"):
            if path.is_file() and path.suffix in (".j2", ".yml", ".yaml", ".md"):
                rel = path.relative_to(REPO).as_posix()
                assert f"cascade/_bundled/{rel}" in names, rel
    assert "cascade/main.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "cascade = cascade.main:entry" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_unpacked_wheel_runs_without_the_source_tree(wheel, tmp_path):
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    run = subprocess.run([sys.executable, "-c",
                          "import cascade.base.resources as r; print(r.bundled('templates'))"],
                         cwd=work, env=env, capture_output=True, text=True, check=True)
    assert run.stdout.strip() == str(site / "cascade" / "_bundled" / "templates")
    run = subprocess.run([sys.executable, "-m", "cascade", "new", "Packaged", "--template", "adr"],
                         cwd=work, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    text = (work / "discussions" / "packaged.discussion.md").read_text()
    assert "# ADR: Packaged" in text
    run = subprocess.run([sys.executable, "-m", "cascade", "personas", "list"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0 and "AI-Visualizer" in run.stdout
