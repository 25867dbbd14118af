"""The reservation grant's lookup of overlapping patterns (``HeldPatterns``) finds exactly
what weighing every held pattern with ``overlap`` finds, for patterns drawn at random from the
pieces git's wildmatch is made of."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from relay_core.path_patterns import HeldPatterns, invalid, overlap

SEGMENTS = st.sampled_from(["src", "api", "x.py", "*", "**", "*.py", "a?", "[ab]", "docs", "s"])
PATTERNS = st.lists(SEGMENTS, min_size=1, max_size=4).map("/".join) | st.sampled_from(
    ["src/", "src/api/", "*.md", "**/x.py", "src/ap*", "sr"]
)


@settings(max_examples=300, deadline=None)
@given(held=st.lists(PATTERNS, max_size=30), wanted=PATTERNS)
def test_the_lookup_finds_what_weighing_every_pattern_finds(held: list[str], wanted: str) -> None:
    held = [pattern for pattern in held if invalid(pattern) is None]
    index = HeldPatterns((pattern, at) for at, pattern in enumerate(held))
    weighed = {at for at, pattern in enumerate(held) if overlap(wanted, pattern)}
    assert set(index.overlapping(wanted)) == weighed
