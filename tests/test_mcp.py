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


def test_ask_search_read_and_stats_through_the_sdk_client(index: Path) -> None:  # noqa: F811
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def calls(s: ClientSession) -> dict[str, Any]:
        tools = {t.name: t for t in (await s.list_tools()).tools}
        ask = await s.call_tool("ask", {"question": "Which town is in Borduria?", "rounds": 2},
                                progress_callback=on_progress)
        facts = _json(await s.call_tool("search_facts", {"query": "river Syldavia", "k": 1}))
        passage = _json(await s.call_tool("read_passage", {"passage_id": facts["facts"][0]["sources"][0]["id"]}))
        missing = await s.call_tool("read_passage", {"passage_id": "chunk-nope"})
        stats = json.loads((await s.read_resource("t2rag://index/stats")).contents[0].text)
        empty = await s.call_tool("ask", {"question": "  "})
        bad_k = await s.call_tool("search_facts", {"query": "x", "k": 0})
        return {"tools": tools, "answer": _json(ask), "structured": ask.structured_content, "facts": facts,
                "passage": passage, "missing": missing, "stats": stats, "empty": empty, "bad_k": bad_k}

    out = asyncio.run(_session([sys.executable, str(HELPER), str(index)], calls))
    tools = out["tools"]
    assert set(tools) == {"ask", "search_facts", "read_passage"}  # no write tools unless allowed
    ask = tools["ask"]
    assert "Slow" in ask.description and ask.annotations.read_only_hint
    params = ask.input_schema["properties"]
    assert params["question"]["description"] and params["rounds"]["maximum"] == 10 and params["rounds"]["minimum"] == 1
    assert "answer" in ask.output_schema["properties"] and ask.output_schema["properties"]["answer"]["description"]
    assert "Fast" in tools["search_facts"].description and tools["search_facts"].input_schema["properties"]["k"][
        "maximum"] == 100
    # a one-triple plan is a last-hop read: no resolve call, the answer reads the passages
    answer = out["answer"]
    assert answer["answer"] == "Alpha" and answer["termination"] == "last_hop" and out["structured"] == answer
    assert answer["supporting_facts"] == [] and answer["sources"][0]["title"] == "Alpha"
    assert progress and progress[0][:2] == (1, 2) and "round 1" in progress[0][2]  # one per round
    assert out["facts"]["facts"][0]["sources"][0]["title"] == "Beta"
    assert out["passage"]["text"] == "Beta is a river in Syldavia." and out["missing"].is_error
    assert out["stats"]["counts"]["chunks"] == 2 and out["empty"].is_error and out["bad_k"].is_error


def test_write_tools_are_offered_only_when_allowed_and_queue_jobs(index: Path) -> None:  # noqa: F811
    async def calls(s: ClientSession) -> dict[str, Any]:
        tools = {t.name for t in (await s.list_tools()).tools}
        job = _json(await s.call_tool("add_documents", {"documents": [{"title": "Gamma",
                                                                       "text": "Gamma is a town in Borduria."}]}))
        for _ in range(200):
            status = _json(await s.call_tool("job_status", {"job_id": job["id"]}))
            if status["status"] in ("done", "failed"):
                break
            await asyncio.sleep(0.05)
        gone = _json(await s.call_tool("delete_documents", {"titles": ["Beta"]}))
        return {"tools": tools, "status": status, "gone": gone}

    out = asyncio.run(_session([sys.executable, str(HELPER), str(index), "--allow-writes"], calls))
    assert {"add_documents", "delete_documents", "job_status"} <= out["tools"]
    assert out["status"]["status"] == "done" and out["status"]["result"]["new_chunks"] == 1
    assert out["gone"]["kind"] == "delete"


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
