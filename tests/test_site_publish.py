"""docs/ci.md's workflow that publishes the decision log to GitHub Pages: it parses, it builds
from the whole history, the package it installs has the extra it names, its build step run
here writes the folder it uploads, and every page names the commit it was built from."""
from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

import inproc
import yaml
from conftest import git
from test_hook import DOC, loop_repo  # noqa: F401  (a fixture)

REPO = Path(__file__).resolve().parent.parent


def workflow() -> dict:
    text = (REPO / "docs/ci.md").read_text()
    section = text.split("## Publishing the decision log", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return yaml.safe_load(block)


def test_the_workflow_publishes_from_main_with_the_whole_history():
    flow = workflow()
    assert flow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads `on` as True
    assert flow["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    steps = flow["jobs"]["build"]["steps"]
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0
    deploy = flow["jobs"]["deploy"]
    assert deploy["needs"] == "build" and deploy["environment"]["name"] == "github-pages"
    assert deploy["steps"][-1]["uses"].startswith("actions/deploy-pages@")


def test_the_workflow_installs_the_extra_and_uploads_what_its_build_writes(loop_repo):
    steps = workflow()["jobs"]["build"]["steps"]
    runs = [s["run"] for s in steps if "run" in s]
    install = shlex.split(runs[0])
    assert install[:2] == ["pip", "install"]
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    package, extra = re.fullmatch(r"(\w+)\[(\w+)\]", install[2]).groups()
    assert package == "cascadingdev" and extra in extras
    build = shlex.split(runs[1])
    assert build[:2] == ["cascade", "site"]
    upload = next(s for s in steps if s.get("uses", "").startswith(
        "actions/upload-pages-artifact@"))
    git(loop_repo, "add", DOC)
    git(loop_repo, "commit", "-qm", "an ADR", "--no-verify")
    head = git(loop_repo, "rev-parse", "HEAD").strip()
    ran = inproc.cascade(loop_repo, *build[1:])
    assert ran.returncode == 0, ran.out
    out = loop_repo / upload["with"]["path"]
    pages = sorted(out.glob("*.html"))
    assert {p.name for p in pages} >= {"index.html", "stats.html", "0001.html"}
    for page in pages:
        assert f"Built from commit <code>{head[:12]}</code>" in page.read_text(), page.name
    assert not [p for p in out.rglob("*") if p.is_symlink()]  # Pages refuses links
