"""How a long text is shown where someone decides on it: its head and its tail, with a mark of
how much was left out between them, never silently cut (a command's dangerous part is often at
its end: ``… | sh``). Every surface that asks for a decision uses it: the bridges, the console's
card (its own copy in JavaScript), the MCP confirmation and ``relay approvals show``."""

from __future__ import annotations

from collections.abc import Callable


def left_out(count: int) -> str:
    """The mark put where ``count`` characters were left out."""
    return f" … {count:,} characters left out … "


def elide(text: str, limit: int) -> str:
    """``text`` whole when it has at most ``limit`` characters; else its head and tail around
    the mark, ``limit`` characters in all (the head a little longer than the tail)."""
    if len(text) <= limit:
        return text
    keep = limit
    for _ in range(3):  # the mark's length depends on the count it gives, itself on the mark's
        keep = max(0, limit - len(left_out(len(text) - keep)))
    tail = keep // 2
    head = keep - tail
    return text[:head] + left_out(len(text) - keep) + (text[len(text) - tail :] if tail else "")


def fit(text: str, limit: int, escape: Callable[[str], str]) -> str:
    """``text`` elided so that, once ``escape``d for a platform, it has at most ``limit``
    characters (escaping may lengthen it: ``<`` is ``&lt;`` on Slack)."""
    shown = escape(elide(text, limit))
    budget = limit
    while len(shown) > limit and budget > 0:
        budget -= len(shown) - limit
        shown = escape(elide(text, max(budget, 0)))
    return shown
