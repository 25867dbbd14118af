"""Relay as an MCP tool server for LLM agents.

``relay mcp`` serves the tools over stdio as a client of Relay's HTTP API (``relay_client``),
with the identity the CLI uses (``RELAY_URL``, ``RELAY_TOKEN``, ``RELAY_AGENT_ID``).
"""
