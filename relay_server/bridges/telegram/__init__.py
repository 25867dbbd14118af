"""Telegram: the bot's messages out (``sending``) and its updates in (``receiving``)."""
