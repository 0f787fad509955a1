"""The MCP server over stdio, driven by the official SDK's own client."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from test_service import index  # noqa: F401 - the shared two-document index fixture

HELPER = Path(__file__).with_name("mcp_scripted_server.py")


async def _session(command: list[str], calls: Any) -> Any:
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(Path(__file__).parents[1]))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await calls(session)


def _json(result: Any) -> Any:
    return json.loads(result.content[0].text)


def test_ask_search_and_stats_through_the_sdk_client(index: Path) -> None:  # noqa: F811
    async def calls(s: ClientSession) -> dict[str, Any]:
        tools = {t.name for t in (await s.list_tools()).tools}
        answer = _json(await s.call_tool("ask", {"question": "Which town is in Borduria?"}))
        facts = _json(await s.call_tool("search_facts", {"query": "river Syldavia", "k": 1}))
        stats = json.loads((await s.read_resource("t2rag://index/stats")).contents[0].text)
        empty = await s.call_tool("ask", {"question": "  "})
        return {"tools": tools, "answer": answer, "facts": facts, "stats": stats, "empty": empty}

    out = asyncio.run(_session([sys.executable, str(HELPER), str(index)], calls))
    assert {"ask", "search_facts"} <= out["tools"]
    # a one-triple plan is a last-hop read: no resolve call, the answer reads the passages
    assert out["answer"]["answer"] == "Alpha" and out["answer"]["termination"] == "last_hop"
    assert out["answer"]["supporting_facts"] == [] and out["answer"]["sources"][0] == "Alpha"
    assert out["facts"]["facts"][0]["sources"][0]["title"] == "Beta"
    assert out["stats"]["counts"]["chunks"] == 2 and out["empty"].is_error


def test_the_cli_command_serves_over_stdio(index: Path) -> None:  # noqa: F811
    async def calls(s: ClientSession) -> Any:
        return json.loads((await s.read_resource("t2rag://index/stats")).contents[0].text)

    stats = asyncio.run(_session([sys.executable, "-m", "t2rag.cli", "mcp", str(index), "--llm", "scripted"], calls))
    assert stats["counts"]["propositions"] == 2 and stats["model"] == "scripted"



def test_a_lone_surrogate_in_tool_arguments_gets_a_reply(index: Path) -> None:  # noqa: F811
    """The SDK's client cannot send one, so the JSON-RPC lines are written by hand, as a
    hostile or buggy client would; the server must answer each request all the same."""
    import select
    import subprocess

    proc = subprocess.Popen([sys.executable, str(HELPER), str(index)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, cwd=str(Path(__file__).parents[1]))
    assert proc.stdin is not None and proc.stdout is not None

    def call(msg: str) -> dict[str, Any]:
        proc.stdin.write(msg + "\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        if '"id"' not in msg:
            return {}
        ready, _, _ = select.select([proc.stdout], [], [], 90)
        assert ready, "no reply"
        return json.loads(proc.stdout.readline())  # type: ignore[union-attr, no-any-return]

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert call(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}))["id"] == 1
        call(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for i, (tool, key) in enumerate((("ask", "question"), ("search_facts", "query")), 2):
            raw = f'"arguments": {{"{key}": "caf\\udce9?"}}'  # the escape stays in the JSON text
            head = f'{{"jsonrpc": "2.0", "id": {i}, "method": "tools/call"'
            reply = call(f'{head}, "params": {{"name": "{tool}", {raw}}}}}')
            assert reply["id"] == i and "result" in reply, reply
    finally:
        proc.kill()
        proc.wait()
