"""The MCP server: T2RAG's question answering and fact search as tools for agents (stdio)."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import AsyncIterator
from typing import Any

from t2rag import cli_common
from t2rag.api import check_question
from t2rag.config import INDEX_HELP
from t2rag.errors import T2RAGError
from t2rag.service.engine import Service


def build_server(service: Service) -> Any:
    """An MCP server (official SDK) with the tools ``ask`` and ``search_facts`` and the resource
    ``t2rag://index/stats``, all answering from ``service``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    def checked(text: str) -> str:
        """The one question check (``api.check_question``): text that is empty, too long or not
        encodable (a lone surrogate, which no reply could carry back) is a tool error."""
        try:
            return check_question(text)
        except T2RAGError as e:
            raise ToolError(str(e)) from None

    server = MCPServer(
        "t2rag",
        instructions="Answers multi-hop questions over a private document index with triplet-driven "
                     "thinking. Use ask for a question, search_facts to look up facts.",
    )

    @server.tool(description="Answer a question from the indexed documents. Returns the short answer, the "
                             "facts it rests on with their source documents, and how the search ended.")
    def ask(question: str) -> dict[str, Any]:
        question = checked(question)
        try:
            a = service.ask(question, via="mcp")
        except T2RAGError as e:
            raise ToolError(str(e).splitlines()[0]) from None
        return {
            "answer": a.answer,
            "termination": a.termination,
            "supporting_facts": [{"triple": f.triple, "sources": [c.label() for c in f.chunks]} for f in a.resolved],
            "sources": list(dict.fromkeys(c.label() for c in a.answer_chunks)),
        }

    @server.tool(description="Search the index for facts (subject-predicate-object sentences) relevant to a "
                             "query; returns the best k with scores and source documents.")
    def search_facts(query: str, k: int = 10) -> dict[str, Any]:
        query = checked(query)
        if not 1 <= k <= 100:
            raise ToolError("k must be 1..100")
        return {"query": query, "facts": service.search(query, k)}

    @server.resource("t2rag://index/stats", name="index-stats", mime_type="application/json",
                     description="Counts (documents, chunks, triples, propositions), embedder and model.")
    def stats() -> str:
        info = service.index_info(samples=0)
        return json.dumps({"counts": info["counts"], "embedder": info["manifest"]["embedder"],
                           "model": info["model"]})

    return server


_ESCAPES = re.compile(r"\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})|\\u(d[89a-f][0-9a-f]{2})|\\\\", re.I)


def without_lone_surrogates(line: str) -> str:
    """A JSON text with each lone surrogate escape (``\\udce9``) replaced by U+FFFD: the
    SDK's parser refuses such a message whole, so its request would get no reply at all."""
    return _ESCAPES.sub(lambda m: "\\ufffd" if m.group(3) else m.group(0), line)


class _SanitizedLines:
    """stdin's lines for the SDK's stdio transport, passed through ``without_lone_surrogates``."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __aiter__(self) -> AsyncIterator[str]:
        async for line in self.inner:
            yield without_lone_surrogates(line)


def serve_stdio(server: Any) -> None:
    """Run ``server`` over stdio with the sanitized stdin (the SDK's own run when its low-level
    server is not reachable, as in another SDK version)."""
    import io
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    low = getattr(server, "_lowlevel_server", None)
    if low is None:
        server.run("stdio")
        return

    async def main() -> None:
        text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        async with stdio_server(stdin=_SanitizedLines(anyio.wrap_file(text))) as (read, write):  # type: ignore[arg-type]
            await low.run(read, write, low.create_initialization_options())

    anyio.run(main)


def cmd_mcp(args: argparse.Namespace) -> int:
    with Service.opened(args) as service:
        serve_stdio(build_server(service))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve an index to agents over MCP (stdio): tools ask and search_facts")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    cli_common.llm_args(p)
    p.add_argument("--no-log", action="store_true", help="do not record answers in the index's log (t2rag logs)")
    p.set_defaults(func=cmd_mcp)
