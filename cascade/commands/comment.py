from __future__ import annotations

import re

from cascade.commands._common import git_user_name
from cascade.errors import CascadeError, display_path
from cascade.loop.governance import open_discussion

_VOTE_LINE = re.compile(r"(?im)^vote:[ \t]*(READY|CHANGES|REJECT)\b.*$\n?")


def comment(path: str, text: str, vote: str | None, author: str | None) -> int:
    d = open_discussion(path)
    author = author or git_user_name()
    if d.personas.is_persona_name(author):
        raise CascadeError(f"{author!r} is a persona's name; people comment under their own name",
                           d.path)
    if vote is None:  # "VOTE: READY" typed into the text counts as the vote
        found = _VOTE_LINE.findall(text)
        if found:
            vote = found[-1].upper()
    text = _VOTE_LINE.sub("", text).strip()
    if not text and vote is None:
        raise CascadeError("empty comment: give some text or a --vote", d.path)
    d.add_comment(author, text, vote)
    d.save()
    print(f"Added comment from {author} to {display_path(d.path)}"
          + (f" (VOTE: {vote})." if vote else "."))
    return 0
