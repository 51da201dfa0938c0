"""Serving an `MCPServer` over streamable HTTP on a free loopback port, for the test servers
in this folder (`fastmcp_server.py`, `big_result_server.py`): prints
`URL http://127.0.0.1:PORT/mcp` as its first line on stdout, then serves until killed.
"""

from __future__ import annotations

import socket

from mcp.server.mcpserver import MCPServer


async def serve_http(server: MCPServer) -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    # Listening before the URL is printed: a client that connects at once is queued, not
    # refused, while uvicorn starts.
    sock.listen(128)
    port = sock.getsockname()[1]
    app = server.streamable_http_app(host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning")
    print(f"URL http://127.0.0.1:{port}/mcp", flush=True)
    await uvicorn.Server(config).serve(sockets=[sock])
