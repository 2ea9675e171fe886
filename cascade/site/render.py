"""Untrusted text as HTML that stays text (docs/site.md): every value goes into a page through
``esc`` (html.escape, quotes included), markdown through ``markdown_html`` -- markdown-it with
raw HTML off, then the nh3 sanitiser (ammonia) over its output. Links keep only http(s),
mailto and relative addresses. markdown-it-py and nh3 are the ``site`` extra, imported when a
page is rendered."""
from __future__ import annotations

import html
import re
from collections.abc import Callable
from functools import cache
from typing import Any

TAGS = frozenset({"a", "p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol",
                  "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr",
                  "th", "td", "s", "del", "img", "sup", "sub"})
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "th": {"style"},
              "td": {"style"}, "ol": {"start"}}
SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*)\s*:")
_CONTROL = re.compile(r"[\x00-\x20\x7f]+")


def esc(value: Any) -> str:
    """Any value as HTML text (an attribute's value too: quotes escaped)."""
    return html.escape("" if value is None else str(value), quote=True)


def safe_url(url: str) -> bool:
    """An address a page may link to: http(s), mailto, or relative (no scheme). What a
    browser would read as a scheme is looked for after the characters it ignores."""
    m = _SCHEME.match(_CONTROL.sub("", html.unescape(url)))
    return m is None or m.group(1).lower() in SCHEMES


@cache
def _parser() -> Any:
    from markdown_it import MarkdownIt  # the site extra: not installed with the hook

    md = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")
    md.enable("strikethrough")
    md.validateLink = safe_url  # an unsafe link is left as its text
    return md


def markdown_html(text: str, relink: Callable[[str, str], str | None] | None = None) -> str:
    """Markdown as HTML (raw HTML in it stays text) reduced to ``TAGS`` and ``ATTRIBUTES``,
    links to ``SCHEMES`` (nh3, ammonia); ``relink(attribute, address)``: what a relative href
    or src becomes (a governed document's: its page; an image beside it: its copy; None:
    dropped)."""
    import nh3  # the site extra: not installed with the hook

    def attribute(tag: str, name: str, value: str) -> str | None:
        if name in ("href", "src") and not safe_url(value):
            return None
        if name == "src" and (_SCHEME.match(value) or value.lstrip().startswith("//")):
            return None  # an image from another host: a page fetches nothing from the network
        if name == "style":  # markdown-it's table alignment only
            return value if value in ("text-align:left", "text-align:right",
                                      "text-align:center") else None
        if value and relink and name in ("href", "src") and _SCHEME.match(value) is None:
            return relink(name, value)
        return value

    return nh3.clean(_parser().render(text), tags=set(TAGS),
                     attributes={k: set(v) for k, v in ATTRIBUTES.items()},
                     url_schemes=set(SCHEMES), attribute_filter=attribute,
                     link_rel="noopener noreferrer nofollow", strip_comments=True)
