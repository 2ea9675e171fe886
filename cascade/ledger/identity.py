"""Who a person is, as git says it (``Name <email>``), and how identities match: by kind.

An e-mail address matches an e-mail address only -- the same local part, the domain in any
case -- and a name matches a name only, exactly. A ``deciders:`` entry with an ``@`` is an
address; any other entry is a name. A signed commit vouches for the address, not the name, so
a committer named ``carol@example.com`` is not carol@example.com.
"""
from __future__ import annotations

from cascade.base.gitio import Author


def split_identity(identity: str) -> tuple[str, str]:
    """``("Name", "email")`` of ``"Name <email>"`` (the address empty when there is none)."""
    author = Author.parse(identity)
    return author.name, author.email


def same_address(a: str, b: str) -> bool:
    """Two e-mail addresses are one: the local part exactly, the domain in any case."""
    local_a, at_a, domain_a = a.rpartition("@")
    local_b, at_b, domain_b = b.rpartition("@")
    return bool(at_a and at_b and local_a) and local_a == local_b \
        and domain_a.lower() == domain_b.lower()


def is_decider(identity: str, deciders: tuple[str, ...]) -> bool:
    """Whether ``identity`` (``Name <email>``) is one of ``deciders`` (addresses or names)."""
    name, email = split_identity(identity)
    for entry in deciders:
        entry = entry.strip()
        if "@" in entry:
            if email and same_address(email, entry):
                return True
        elif name and name == " ".join(entry.split()):
            return True
    return False


def same_person(claimed: str, author: str) -> bool:
    """Whether ``author`` (the git identity of the commit that added a text) is who the text
    claims (``claimed``: ``Name <email>``, or a bare name): by address when both give one,
    else by name."""
    name, email = split_identity(claimed)
    author_name, author_email = split_identity(author)
    if email and author_email:
        return same_address(email, author_email)
    return bool(name) and name == author_name


def recorded_name(name: str, email: str, deciders: tuple[str, ...]) -> str:
    """What a person's block records as its ``Name:`` when what it says counts only from a
    decider (a ``WAIVE(Fn):``): ``Name <email>`` when one of ``deciders`` is an e-mail address
    (an address matches an address only) and the person has one; else the name."""
    if email and any("@" in entry for entry in deciders):
        return f"{name} <{email}>"
    return name
