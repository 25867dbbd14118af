"""Slack as an operator platform: the bridge (Web API calls, through slack-sdk, which speaks
HTTP with aiohttp: so it lives beside the server, not in ``relay_core``) and Slack's callbacks
into the server (events and interactions)."""

from relay_server.slack.bridge import SlackBridge
from relay_server.slack.callbacks import add_slack

__all__ = ["SlackBridge", "add_slack"]
