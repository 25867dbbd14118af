"""Slack: the Web API out (``sending``, through slack-sdk) and Slack's callbacks in, events and
interactions (``receiving``)."""

from relay_server.bridges.slack.sending import SlackBridge

__all__ = ["SlackBridge"]
