"""Relay's benchmarks: Relay and a bare aiohttp app, driven by wrk in the same run.

Run ``python -m bench`` (``--smoke`` for a quick check).
"""
