"""Operator platform bridges: ``local`` (built in, the default) and Telegram."""
