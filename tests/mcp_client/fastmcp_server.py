"""An MCP server written with the official MCP Python SDK, for reticent's MCP client tests.

    python fastmcp_server.py [--http] [--dotted] [--linger]

The server is the SDK's own high-level server: `MCPServer` from `mcp.server.mcpserver`, which
mcp 2.x calls what 1.x called `FastMCP` (`mcp.server.fastmcp` only raises an error pointing
there). Nothing in it is written for reticent: the tools are plain decorated functions.

Over stdio by default. With `--http` it serves streamable HTTP on a free loopback port, in
this process, and prints `URL http://127.0.0.1:PORT/mcp` as its first line on stdout.
`--dotted` adds a tool named `stats.count` (a valid MCP name, not a valid reticent one).
`--linger` makes the process outlive its stdin: once the stdio server returns, it ignores
SIGTERM and sleeps, as a server that does not exit when its client goes away.

Run by `tests/tests/mcp/client_python.rs`; needs the virtual environment `.ci/run` creates.
"""

from __future__ import annotations

import argparse
import base64
import os
import signal
import sys
import time

import anyio
from mcp.server.mcpserver import Image, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

from serve import serve_http

# The message the failing tools raise: the password must never reach the client's model.
SECRET_MESSAGE = "db password=hunter2 rejected"

server = MCPServer("py-tools", version="2.3.0")

# Calls of `slow` the client cancelled (or abandoned), in this process.
cancelled = 0
# Calls of `add` that reached its body.
added = 0


@server.tool(annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
def add(a: int, b: int) -> int:
    """Add two integers."""
    global added
    added += 1
    return a + b


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def additions() -> int:
    """How many calls of `add` reached the tool so far."""
    return added


@server.tool()
def query_db(sql: str) -> str:
    """Run a query against the orders database."""
    raise ToolError(SECRET_MESSAGE)


@server.tool()
def explain(sql: str) -> str:
    """Explain how the database would run a query."""
    raise ToolError("plan: " + "seq scan on orders; " * 200 + SECRET_MESSAGE)


@server.tool()
def crash() -> str:
    """A tool with a bug: it raises an unexpected exception."""
    raise RuntimeError(f"unexpected: {SECRET_MESSAGE}")


@server.tool()
def upstream() -> str:
    """Call an upstream service that refuses the server's credentials."""
    raise MCPError(code=-32001, message=f"upstream refused: {SECRET_MESSAGE}")


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
async def slow(seconds: float) -> str:
    """Wait `seconds` seconds, then say so."""
    global cancelled
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        cancelled += 1
        raise
    return f"waited {seconds}s"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def cancellations() -> int:
    """How many calls of `slow` were cancelled so far."""
    return cancelled


class Forecast(BaseModel):
    city: str
    celsius: float
    conditions: str


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def forecast(city: str, days: int = 1) -> Forecast:
    """Tomorrow's weather in a city."""
    if days < 1:
        raise ToolError("days must be at least 1")
    return Forecast(city=city, celsius=21.5, conditions="sunny")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def chart() -> list:
    """A chart of last week's orders, as an image and a caption."""
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    return [Image(data=png, format="png"), "orders per day, last week"]


@server.tool()
def die() -> str:
    """Ends the server's process in the middle of the call."""
    sys.stderr.flush()
    os._exit(3)


def add_dotted_tool() -> None:
    @server.tool(name="stats.count", annotations=ToolAnnotations(read_only_hint=True))
    def stats_count() -> int:
        """Count the orders."""
        return 42


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--dotted", action="store_true")
    parser.add_argument("--linger", action="store_true")
    args = parser.parse_args()
    if args.dotted:
        add_dotted_tool()
    if args.http:
        anyio.run(serve_http, server)
        return
    server.run("stdio")
    if args.linger:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(60)


if __name__ == "__main__":
    main()
