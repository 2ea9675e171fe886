"""``cascade check [--from-ref R] [--to-ref R] [--format text|json|github|sarif]``: the CI gate
(docs/ci.md; the refs default to pre-commit's). Never calls a model nor imports litellm.
"""
from __future__ import annotations

import os
import sys

from cascade.check.gittree import is_null_ref
from cascade.check.formats import FORMATS, WITH_FINDINGS, github_errors
from cascade.check.run import run_check
from cascade.base.errors import CascadeError
from cascade.base.gitio import repo_root


def check(from_ref: str | None, to_ref: str | None, fmt: str = "text") -> int:
    from_ref = from_ref or os.environ.get("PRE_COMMIT_FROM_REF")
    to_ref = to_ref or os.environ.get("PRE_COMMIT_TO_REF")
    try:
        report = run_check(repo_root(), None if is_null_ref(from_ref) else from_ref,
                           None if is_null_ref(to_ref) else to_ref, findings=fmt in WITH_FINDINGS)
    except CascadeError as exc:
        if fmt == "github":  # on the file in the workflow's log, as the check's problems are
            github_errors(exc.errors, sys.stdout)
        raise
    FORMATS[fmt](report, sys.stdout)
    return 0 if report.ok else 1
