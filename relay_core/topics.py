"""The hub's topics: what a commit publishes, and what a waiting reader waits on."""

from __future__ import annotations

FEED = "events"  # the hub topic of every event: it wakes the operator's feed readers
OUTBOX = "outbox"  # what wakes the outbox's sender: something in it became due now


def feed_topic(audience: str) -> str:
    """The hub topic of the events for ``audience``: an agent's feed readers wait on those of
    the audiences it reads, so that an event wakes only the readers it is for."""
    return f"events:{audience}"


def membership_topic(agent_id: str) -> str:
    """The hub topic of an agent's rooms changing: its streams then read other audiences."""
    return f"rooms-of:{agent_id}"


def feed_topics(audience: str) -> tuple[str, str]:
    """What a committed event for ``audience`` publishes."""
    return FEED, feed_topic(audience)
