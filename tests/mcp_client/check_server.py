"""Drive the `mcp_server` example with the official MCP Python SDK and check what a client sees.

    python check_server.py SERVER_BINARY [--http]

Starts `SERVER_BINARY --test-tools` (over stdio, or with `--http 127.0.0.1:0` and connects to
the URL it prints), then checks: the tool list with schemas, output schemas, titles and
annotations, a succeeding call, argument errors, a failing tool whose error holds a secret
(absent from every message the client received, present in the server's log), a panicking
tool, a timeout, an unknown tool, a cancelled call, structured output (validated by the SDK
against the output schema), progress through the SDK's progress callback and log lines through
its logging callback. Prints one line per check and exits non-zero if any failed.

Run by `tests/tests/mcp/python_client.rs`; needs the virtual environment `.ci/run` creates.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator, Awaitable, Callable

import anyio
import mcp_types as types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

# The gateway's connection string in the support desk holds this password.
SECRET = "hunter2"
# The panicking test tool's message.
PANIC_MESSAGE = "this message stays on the server"
# No call may take longer than this to answer.
REPLY_WITHIN = 8.0

DESK_TOOLS = [
    "lookup_order",
    "charge_card",
    "ship_order",
    "estimate_delivery",
    "read_customer_email",
    "issue_refund",
    "open_ticket",
]
TEST_TOOLS = [
    "panic_now",
    "wait_for_cancel",
    "cancellations",
    "block_thread",
    "count_to",
    "order_summary",
    "count_orders",
]
HINTS = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]


class Wire:
    """Every message that crossed the connection, as JSON, in each direction, and the log
    lines the SDK's logging callback was given."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.logs: list[tuple[str, str | None, Any]] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append((params.level, params.logger, params.data))

    def received_with(self, method: str) -> list[dict[str, Any]]:
        return [m for m in self.received if m.get("method") == method]

    @staticmethod
    def dump(message: SessionMessage) -> dict[str, Any]:
        return message.message.model_dump(by_alias=True, mode="json", exclude_none=True)

    def received_text(self) -> str:
        return "\n".join(json.dumps(m) for m in self.received)

    def response_to(self, request_id: Any) -> dict[str, Any] | None:
        for message in self.received:
            if message.get("id") == request_id and ("result" in message or "error" in message):
                return message
        return None

    def sent_calls(self, tool: str) -> list[dict[str, Any]]:
        return [
            m
            for m in self.sent
            if m.get("method") == "tools/call" and (m.get("params") or {}).get("name") == tool
        ]


@asynccontextmanager
async def tapped(read_stream: Any, write_stream: Any, wire: Wire) -> AsyncIterator[tuple[Any, Any]]:
    """The transport's streams with every message recorded on `wire` on its way through."""
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](16)

    async def inbound() -> None:
        async with to_session:
            async for message in read_stream:
                if isinstance(message, SessionMessage):
                    wire.received.append(Wire.dump(message))
                await to_session.send(message)

    async def outbound() -> None:
        async with from_session:
            async for message in from_session:
                wire.sent.append(Wire.dump(message))
                await write_stream.send(message)

    async with anyio.create_task_group() as tg:
        tg.start_soon(inbound)
        tg.start_soon(outbound)
        try:
            yield session_reads, session_writes
        finally:
            tg.cancel_scope.cancel()


class Checks:
    def __init__(self, transport: str) -> None:
        self.transport = transport
        self.passed = 0
        self.failed = 0

    async def run(self, name: str, check: Callable[[], Awaitable[None]]) -> None:
        try:
            with anyio.fail_after(30):
                await check()
        except BaseException as error:  # noqa: BLE001 - a failed check, reported below
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            self.failed += 1
            print(f"FAIL [{self.transport}] {name}: {error!r}")
            traceback.print_exc(file=sys.stdout)
        else:
            self.passed += 1
            print(f"ok   [{self.transport}] {name}")


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def only_text(result: types.CallToolResult) -> str:
    expect(len(result.content) == 1, f"one content block: {result!r}")
    block = result.content[0]
    expect(block.type == "text", f"text content: {block!r}")
    return block.text


async def exercise(session: ClientSession, wire: Wire, server_log: Callable[[], str], checks: Checks) -> None:
    """Every check, on one connected session."""

    async def call(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        return await session.call_tool(name, arguments, read_timeout_seconds=REPLY_WITHIN)

    async def counts() -> dict[str, int]:
        return json.loads(only_text(await call("cancellations", {})))

    async def list_tools() -> None:
        listed = await session.list_tools()
        names = [tool.name for tool in listed.tools]
        expect(names == DESK_TOOLS + TEST_TOOLS, f"tool names: {names}")
        raw = next(m for m in reversed(wire.received) if "tools" in m.get("result", {}))["result"]["tools"]
        by_name = {tool["name"]: tool for tool in raw}
        for tool in raw:
            expect(tool.get("description"), f"{tool['name']} has a description")
            schema = tool["inputSchema"]
            expect(schema["type"] == "object", f"{tool['name']} schema is an object: {schema}")
            expect(schema.get("additionalProperties") is False, f"{tool['name']} refuses unknown properties")
            # Every hint is sent explicitly: MCP's defaults for absent hints differ from false.
            expect(sorted(tool["annotations"]) == sorted(HINTS), f"{tool['name']} hints: {tool['annotations']}")
        lookup = by_name["lookup_order"]
        expect(lookup["description"] == "Look up an order by its id.", lookup["description"])
        expect(lookup["inputSchema"]["required"] == ["order_id"], f"{lookup['inputSchema']}")
        expect(
            lookup["inputSchema"]["properties"]["order_id"]
            == {"type": "string", "description": 'The order id, like "ORD-1042".'},
            f"{lookup['inputSchema']}",
        )
        estimate = by_name["estimate_delivery"]["inputSchema"]
        expect(estimate["required"] == ["order_id", "postcode"], f"{estimate}")
        expected_hints = {
            "lookup_order": (True, False, False, False),
            "charge_card": (False, True, False, True),
            "ship_order": (False, True, False, False),
            "estimate_delivery": (True, False, False, True),
            # untrusted output (it reads email): the client is told it is open-world
            "read_customer_email": (True, False, False, True),
            "issue_refund": (False, True, False, False),
            "open_ticket": (False, False, True, False),
        }
        for name, hints in expected_hints.items():
            got = tuple(by_name[name]["annotations"][hint] for hint in HINTS)
            expect(got == hints, f"{name} hints {got}, expected {hints}")
        # The typed view agrees.
        typed = {tool.name: tool for tool in listed.tools}
        expect(typed["charge_card"].annotations.destructive_hint is True, "typed destructive_hint")
        expect(typed["lookup_order"].annotations.read_only_hint is True, "typed read_only_hint")
        # Structured output: the output schema and the title are listed; the wrap marker is
        # reticent's own and is not.
        summary = by_name["order_summary"]
        expect(summary.get("title") == "Order summary", f"title: {summary}")
        expect(summary["outputSchema"]["type"] == "object", f"{summary['outputSchema']}")
        expect(
            sorted(summary["outputSchema"]["properties"]) == ["items", "order_id", "shipped"],
            f"{summary['outputSchema']}",
        )
        count = by_name["count_orders"]
        expect(count.get("title") == "Count orders", f"title: {count}")
        expect(
            count["outputSchema"]
            == {
                "type": "object",
                "properties": {"result": {"type": "integer", "minimum": 0}},
                "required": ["result"],
            },
            f"{count['outputSchema']}",
        )
        expect("x-reticent-wrap-result" not in json.dumps(raw), "the wrap marker is not listed")
        expect("outputSchema" not in by_name["panic_now"], f"{by_name['panic_now']}")

    async def success() -> None:
        result = await call("lookup_order", {"order_id": "ORD-1042"})
        expect(not result.is_error, f"not an error: {result!r}")
        order = json.loads(only_text(result))
        expect(order["customer"] == "Ada Lovelace", f"{order}")

    async def argument_errors() -> None:
        result = await call("lookup_order", {"order_id": "1042"})
        expect(result.is_error is True, f"isError: {result!r}")
        expect(
            only_text(result)
            == "Invalid arguments for tool 'lookup_order': no order \"1042\"; order ids look like ORD-1042",
            only_text(result),
        )
        result = await call("lookup_order", {"order_id": 1042})
        expect(result.is_error is True, f"isError: {result!r}")
        expect(
            only_text(result)
            == "Invalid arguments for tool 'lookup_order': argument `order_id`: invalid type: integer `1042`, expected a string",
            only_text(result),
        )
        result = await call("lookup_order", {"order_id": "ORD-1042", "verbose": True})
        expect(result.is_error is True, f"isError: {result!r}")
        expect("verbose" in only_text(result), only_text(result))

    async def failure_withholds_the_secret() -> None:
        result = await call("charge_card", {"order_id": "ORD-1042"})
        expect(result.is_error is True, f"isError: {result!r}")
        expect(only_text(result) == "Tool 'charge_card' failed with GatewayError", only_text(result))
        response = wire.response_to(wire.sent_calls("charge_card")[-1]["id"])
        expect(response is not None, "the raw response was recorded")
        expect(
            response["result"]["content"] == [{"type": "text", "text": "Tool 'charge_card' failed with GatewayError"}],
            f"raw result: {response}",
        )
        expect(SECRET not in json.dumps(response), f"the secret is in the raw result: {response}")
        # The operator's side has the whole error.
        await anyio.sleep(0.2)
        expect(SECRET in server_log(), "the server's log holds the gateway's full error")

    async def panicking_tool() -> None:
        started = time.monotonic()
        result = await call("panic_now", {})
        expect(time.monotonic() - started < 5, "a reply within 5 seconds")
        expect(result.is_error is True, f"isError: {result!r}")
        expect(only_text(result) == "Tool 'panic_now' failed with panic", only_text(result))
        # The connection still works.
        expect(not (await call("lookup_order", {"order_id": "ORD-2001"})).is_error, "a call after the panic")

    async def timeout() -> None:
        started = time.monotonic()
        result = await call("estimate_delivery", {"order_id": "ORD-1042", "postcode": "SW1A 1AA"})
        elapsed = time.monotonic() - started
        expect(0.9 < elapsed < 5, f"stopped after its 1s limit, took {elapsed:.2f}s")
        expect(result.is_error is True, f"isError: {result!r}")
        expect(
            only_text(result)
            == "Tool 'estimate_delivery' timed out after 1s and was stopped; whether it took effect is unknown",
            only_text(result),
        )

    async def unknown_tool() -> None:
        try:
            result = await call("refund_everything", {})
        except MCPError as error:
            expect(error.code == -32602, f"JSON-RPC invalid params, got {error.code}")
            expect(error.message.startswith("Unknown tool 'refund_everything'. Available tools: lookup_order"), error.message)
        else:
            raise AssertionError(f"expected a JSON-RPC error, got a result: {result!r}")
        request = wire.sent_calls("refund_everything")[-1]
        response = wire.response_to(request["id"])
        expect(response is not None and "error" in response and "result" not in response, f"raw: {response}")

    async def cancellation() -> None:
        before = await counts()
        outcome: dict[str, Any] = {}

        async def slow_call() -> None:
            outcome["result"] = await session.call_tool("wait_for_cancel", {"seconds": 30}, read_timeout_seconds=60)

        started = time.monotonic()
        async with anyio.create_task_group() as tg:
            tg.start_soon(slow_call)
            with anyio.fail_after(REPLY_WITHIN):
                while (await counts())["started"] == before["started"]:
                    await anyio.sleep(0.05)
            # Cancelling the caller makes the SDK send notifications/cancelled.
            tg.cancel_scope.cancel()
        expect("result" not in outcome, "the call was abandoned")
        request = wire.sent_calls("wait_for_cancel")[-1]
        notes = [
            m for m in wire.sent
            if m.get("method") == "notifications/cancelled" and m["params"].get("requestId") == request["id"]
        ]
        expect(len(notes) == 1, f"one notifications/cancelled for request {request['id']}: {wire.sent[-5:]}")
        with anyio.fail_after(REPLY_WITHIN):
            while (now := await counts())["cancelled"] == before["cancelled"]:
                await anyio.sleep(0.05)
        expect(time.monotonic() - started < 10, "the tool stopped long before its 30 seconds")
        expect(now["finished"] == before["finished"], f"the tool did not run to its end: {now}")
        expect(now["cancelled"] == before["cancelled"] + 1, f"one cancellation: {now}")
        expect(wire.response_to(request["id"]) is None, "no reply to a cancelled request")

    async def structured_output() -> None:
        # `call_tool` has the SDK validate structuredContent against the listed outputSchema.
        result = await call("order_summary", {"order_id": "ORD-1042"})
        expect(not result.is_error, f"not an error: {result!r}")
        expected = {"order_id": "ORD-1042", "items": 3, "shipped": False}
        expect(result.structured_content == expected, f"structuredContent: {result!r}")
        expect(json.loads(only_text(result)) == expected, "the text content is the same JSON")
        # A non-object output is wrapped as {"result": ...}.
        result = await call("count_orders", {})
        expect(result.structured_content == {"result": 3}, f"structuredContent: {result!r}")
        expect(only_text(result) == "3", only_text(result))
        # A failure carries no structuredContent.
        result = await call("order_summary", {"order_id": "ORD-0000"})
        expect(result.is_error is True, f"isError: {result!r}")
        response = wire.response_to(wire.sent_calls("order_summary")[-1]["id"])
        expect(response is not None and "structuredContent" not in response["result"], f"raw: {response}")

    async def progress() -> None:
        seen: list[tuple[float, float | None, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total, message))

        before = len(wire.received_with("notifications/progress"))
        result = await session.call_tool(
            "count_to", {"n": 4}, read_timeout_seconds=REPLY_WITHIN, progress_callback=on_progress
        )
        expect(only_text(result) == "4", only_text(result))
        expected = [(float(i), 4.0, f"counted {i}") for i in range(1, 5)]
        expect(seen == expected, f"progress callback: {seen}")
        request = wire.sent_calls("count_to")[-1]
        token = request["params"]["_meta"]["progressToken"]
        notes = wire.received_with("notifications/progress")[before:]
        expect(len(notes) == 4 and all(n["params"]["progressToken"] == token for n in notes), f"{notes}")
        # Every notification came before the response.
        response = wire.response_to(request["id"])
        expect(wire.received.index(notes[-1]) < wire.received.index(response), "progress before the result")
        # A call without a progress token gets no progress notifications.
        before = len(wire.received_with("notifications/progress"))
        await call("count_to", {"n": 3})
        expect(len(wire.received_with("notifications/progress")) == before, "no token, no progress")

    async def log_lines() -> None:
        async def lines_after(count: int, expected: int) -> list[tuple[str, str | None, Any]]:
            # Notifications are read before the response; give the callback a moment anyway.
            with anyio.move_on_after(2):
                while len(wire.logs) < count + expected:
                    await anyio.sleep(0.02)
            return wire.logs[count:]

        # A client that did not ask gets no log lines.
        before = len(wire.received_with("notifications/message"))
        await call("count_to", {"n": 1})
        await anyio.sleep(0.2)
        expect(len(wire.received_with("notifications/message")) == before, "no level set, no log lines")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # logging is deprecated by the 2026-07-28 protocol
            await session.set_logging_level("warning")
        count = len(wire.logs)
        await call("count_to", {"n": 1})
        lines = await lines_after(count, 2)
        expect(
            lines
            == [
                ("warning", "count_to", "numbers are infinite; stopped early"),
                ("error", "count_to", "no error, only a line at the error level"),
            ],
            f"at warning and above: {lines}",
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await session.set_logging_level("debug")
        count = len(wire.logs)
        await call("count_to", {"n": 2})
        lines = await lines_after(count, 4)
        expect([level for level, _, _ in lines] == ["debug", "info", "warning", "error"], f"every level: {lines}")
        expect(lines[0] == ("debug", "count_to", "counted to 2"), f"{lines[0]}")

    async def nothing_withheld_reached_the_client() -> None:
        received = wire.received_text()
        expect(len(wire.received) > 10, f"messages were recorded: {len(wire.received)}")
        expect(SECRET not in received, "the gateway's secret reached the client")
        expect(PANIC_MESSAGE not in received, "the panic message reached the client")
        log = server_log()
        expect(PANIC_MESSAGE in log, "the server's log holds the panic message")

    await checks.run("tools/list: names, descriptions, schemas, annotations", list_tools)
    await checks.run("a succeeding call", success)
    await checks.run("argument errors are isError results with the full message", argument_errors)
    await checks.run("a failing tool shows its type name; the secret stays on the server", failure_withholds_the_secret)
    await checks.run("a panicking tool gives an isError result", panicking_tool)
    await checks.run("a timeout says how long the tool was given", timeout)
    await checks.run("an unknown tool is a JSON-RPC error", unknown_tool)
    await checks.run("notifications/cancelled stops the tool", cancellation)
    await checks.run("structured output, validated against the output schema", structured_output)
    await checks.run("progress reaches the progress callback, only with a token", progress)
    await checks.run("log lines reach the logging callback at the level set", log_lines)
    await checks.run("no withheld message in anything the client received", nothing_withheld_reached_the_client)


async def over_stdio(server: Path, log_path: Path, checks: Checks) -> None:
    params = StdioServerParameters(command=str(server), args=["--test-tools"])
    wire = Wire()
    with open(log_path, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with tapped(read, write, wire) as (reads, writes):
                async with ClientSession(reads, writes, logging_callback=wire.on_log) as session:
                    with anyio.fail_after(REPLY_WITHIN):
                        init = await session.initialize()
                    expect(init.server_info.name == "support-desk", f"server name: {init.server_info}")
                    await exercise(session, wire, lambda: log_path.read_text(), checks)


async def over_http(server: Path, log_path: Path, checks: Checks) -> None:
    with open(log_path, "w") as errlog:
        process = subprocess.Popen(
            [str(server), "--test-tools", "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
        )
    try:
        url = None
        deadline = time.monotonic() + 10
        while url is None and time.monotonic() < deadline:
            match = re.search(r"listening on (http://\S+)", log_path.read_text())
            url = match.group(1) if match else None
            if process.poll() is not None:
                raise RuntimeError(f"the server exited: {log_path.read_text()}")
            await anyio.sleep(0.05)
        if url is None:
            raise RuntimeError(f"the server did not say where it listens: {log_path.read_text()}")
        wire = Wire()
        async with streamable_http_client(url) as (read, write):
            async with tapped(read, write, wire) as (reads, writes):
                async with ClientSession(reads, writes, logging_callback=wire.on_log) as session:
                    with anyio.fail_after(REPLY_WITHIN):
                        init = await session.initialize()
                    expect(init.server_info.name == "support-desk", f"server name: {init.server_info}")
                    await exercise(session, wire, lambda: log_path.read_text(), checks)
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("server", type=Path, help="the mcp_server example binary")
    parser.add_argument("--http", action="store_true", help="use streamable HTTP instead of stdio")
    args = parser.parse_args()

    transport = "http" if args.http else "stdio"
    checks = Checks(transport)
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        run = over_http if args.http else over_stdio
        try:
            anyio.run(run, args.server, log_path, checks)
        except BaseException:  # noqa: BLE001 - the connection itself failed
            checks.failed += 1
            print(f"FAIL [{transport}] the session could not be run")
            traceback.print_exc(file=sys.stdout)
        if checks.failed and log_path.exists():
            print(f"---- server log ({transport}) ----")
            print(log_path.read_text()[-20000:])
    print(f"{transport}: {checks.passed} passed, {checks.failed} failed")
    return 1 if checks.failed or checks.passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
