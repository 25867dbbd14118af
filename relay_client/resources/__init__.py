"""The SDK's resources: ``_generated`` (every operation's method, from the contract) and
what is written by hand on top (``events``: the stream)."""
