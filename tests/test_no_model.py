"""With no model configured -- no CASCADE_MODEL, no declared provider, the embedded model not
installed -- ``git commit`` of a governed document says so, in one line with how to configure
one, before it writes anything: no "asking ..." line, no ledger left behind untracked. A rule
or persona that names its own model is asked as before. A real repository and the hook
(tests/inproc.py ``commit``)."""
from __future__ import annotations

import pytest
from conftest import git
from inproc import commit
from test_hook import DOC, LEDGER, install_plain, loop_repo  # noqa: F401 - a fixture

from cascade.turns import tiers


@pytest.fixture
def no_model(loop_repo, monkeypatch):  # noqa: F811 - the fixture above, used here
    monkeypatch.delenv("CASCADE_MODEL", raising=False)
    monkeypatch.setattr(tiers, "local_model_available", lambda: False)  # without the extra
    install_plain(loop_repo)
    git(loop_repo, "add", DOC)
    return loop_repo


def test_no_model_configured_blocks_before_writing_anything(no_model):
    repo = no_model
    blocked = commit(repo)
    assert (blocked.returncode, blocked.hook_returncode) == (1, 2), blocked.out  # git: 1
    lines = blocked.out.strip().splitlines()
    assert len(lines) == 1, blocked.out
    assert lines[0].startswith(f"cascade: {DOC}: no model configured: set CASCADE_MODEL")
    assert "cascadingdev[local]" in lines[0] and ".cascade/providers.yml" in lines[0]
    assert "asking" not in blocked.out
    assert not (repo / LEDGER).exists()
    assert git(repo, "status", "--porcelain", "--untracked-files=all").splitlines() == [
        f"A  {DOC}"]


def test_a_rule_that_names_its_model_is_asked(no_model, fake_llm, monkeypatch):
    repo = no_model
    rules = (repo / ".ai-rules.yml").read_text()
    (repo / ".ai-rules.yml").write_text(rules.replace("    template: adr\n",
                                                      "    template: adr\n    model: openai/fake\n"))
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "a model", "--",
        ".ai-rules.yml")
    fake_llm.default(lambda request: '{"comment": "Fine.", "vote": "READY"}')
    done = commit(repo)
    assert "no model configured" not in done.out
    assert "cascade: asking" in done.out
    assert (repo / LEDGER).exists()
