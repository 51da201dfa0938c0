"""An MCP server written with the official MCP Python SDK whose tool returns as much text as
it is asked for, for the output budget tests of reticent's MCP client.

    python big_result_server.py [--http]

`page(megabytes)` returns `megabytes` million bytes of text with `MIDDLE-OF-THE-PAGE` at its
middle, `page-start` at its start and `page-end` at its end. Over stdio by default; with
`--http` it serves streamable HTTP on a free loopback port and prints
`URL http://127.0.0.1:PORT/mcp` as its first line on stdout.

Run by `tests/tests/mcp/client_budget.rs`; needs the virtual environment `.ci/run` creates.
"""

from __future__ import annotations

import argparse

import anyio
from mcp.server.mcpserver import MCPServer

from serve import serve_http

MIDDLE = "MIDDLE-OF-THE-PAGE"

server = MCPServer("big-results", version="1.0.0")


@server.tool(structured_output=False)
def page(megabytes: int) -> str:
    """Return a page of `megabytes` million bytes."""
    total = megabytes * 1_000_000
    start, end = "page-start ", " page-end"
    filler = total - len(start) - len(end) - len(MIDDLE)
    line = "all work and no play makes a long page.\n"
    body = (line * (filler // len(line) + 1))[:filler]
    half = filler // 2
    return start + body[:half] + MIDDLE + body[half:] + end


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true")
    args = parser.parse_args()
    if args.http:
        anyio.run(serve_http, server)
        return
    server.run("stdio")


if __name__ == "__main__":
    main()
