"""`/mcp` on the server: the route (`route`, always there) and the SDK's applications bridged into
aiohttp (`asgi`, loaded on the first authenticated request)."""
