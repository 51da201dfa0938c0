"""The MCP Python SDK's client as the user who approves calls: it connects to a reticent server
built with `elicit_approval` (streamable HTTP, at the URL given) and calls its `close_account`,
a tool that needs approval, three times, answering each question differently:

- `accept`: accepts the form as it comes (its `digest` field filled in with the call's digest);
- `decline`: declines;
- `replay`: accepts with the digest of the call it was shown first (ACC-1), for a call of
  another account: an approval carried over to other arguments.

It prints one JSON line per call: the answer, the message and the digest it was shown, and the
result's text and `isError`. tests/tests/mcp/approval.rs runs it and checks the lines.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

REPLY_WITHIN = 60


async def main(url: str) -> None:
    answer = {"how": "accept"}
    shown: list[dict[str, Any]] = []

    async def user(_context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        schema = params.requested_schema
        if not isinstance(schema, dict):
            schema = schema.model_dump(by_alias=True, exclude_none=True)
        digest = schema["properties"]["digest"]["default"]
        shown.append({"message": params.message, "digest": digest})
        if answer["how"] == "decline":
            return types.ElicitResult(action="decline")
        if answer["how"] == "replay":
            return types.ElicitResult(action="accept", content={"digest": shown[0]["digest"]})
        return types.ElicitResult(action="accept", content={"digest": digest})

    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write, elicitation_callback=user) as session:
            with anyio.fail_after(REPLY_WITHIN):
                await session.initialize()
            for how, account in [("accept", "ACC-1"), ("decline", "ACC-1"), ("replay", "ACC-2")]:
                answer["how"] = how
                with anyio.fail_after(REPLY_WITHIN):
                    result = await session.call_tool("close_account", {"account": account})
                text = "".join(block.text for block in result.content if block.type == "text")
                line = {
                    "answer": how,
                    "account": account,
                    "shown": shown[-1] if shown else None,
                    "text": text,
                    "is_error": bool(result.is_error),
                }
                print(json.dumps(line), flush=True)


if __name__ == "__main__":
    anyio.run(main, sys.argv[1])
