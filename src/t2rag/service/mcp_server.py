"""The MCP server: T2RAG's question answering and fact search as tools for agents (stdio)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, Field

from t2rag.api import check_question
from t2rag.errors import T2RAGError
from t2rag.index.corpus import Document
from t2rag.query.events import QueryEvent, describe
from t2rag.result import ChunkRef
from t2rag.service.served import Busy, Service

Question = Annotated[str, Field(description="A question in plain language, up to 4,000 characters.")]


class Source(BaseModel):
    id: str = Field(description="The passage id: read_passage returns its text.")
    title: str = Field(description="The title of the document the passage belongs to.")
    cited_as: str = Field(description="How to cite it: the file and page when known, else the title.")


class Fact(BaseModel):
    triple: list[str] = Field(description="[subject, predicate, object]")
    sources: list[Source] = Field(description="The passages that state it.")


class AskResult(BaseModel):
    answer: str = Field(description="The short answer (a name, date, number or phrase).")
    termination: str = Field(description="How the search ended: last_hop or complete (the chain of facts reached "
                             "the answer), early_stop or max_rounds (it did not), plan_rejected (answered by "
                             "reading the question's best passages).")
    supporting_facts: list[Fact] = Field(description="The facts the search resolved on the way.")
    sources: list[Source] = Field(description="The passages the answer was read from, best first.")
    tokens: int = Field(description="LLM tokens spent (prompt + completion).")
    seconds: float = Field(description="Wall time.")


class FoundFact(BaseModel):
    text: str = Field(description="The fact as one sentence.")
    triple: list[str] = Field(description="[subject, predicate, object]")
    score: float = Field(description="Rank fusion score: higher is better; comparable within one search only.")
    sources: list[Source]


class SearchResult(BaseModel):
    query: str
    facts: list[FoundFact]


class Passage(BaseModel):
    id: str
    title: str
    cited_as: str
    text: str


class JobInfo(BaseModel):
    id: str = Field(description="The job id: job_status reports on it.")
    kind: str = Field(description="add or delete")
    status: str = Field(description="queued, running, done or failed")
    error: str | None = None
    result: dict[str, Any] | None = Field(None, description="What the job did, once done.")


def _sources(refs: list[ChunkRef]) -> list[Source]:
    """The passages an Answer cites, as sources: the engine already located them."""
    return [Source(id=c.id, title=c.title, cited_as=c.label()) for c in refs]


def build_server(service: Service, *, allow_writes: bool = False) -> Any:
    """An MCP server (official SDK) answering from ``service``: the tools ``ask`` (slow: LLM
    calls), ``search_facts`` and ``read_passage`` (fast: no LLM), with ``add_documents``,
    ``delete_documents`` and ``job_status`` when ``allow_writes``; the resource
    ``t2rag://index/stats``. Every tool has typed inputs and outputs with descriptions."""
    server = MCPServer(
        "t2rag",
        instructions="Answers multi-hop questions over a private document index with triplet-driven thinking. "
                     "ask answers a question (slow: several LLM calls, tens of seconds on a CPU; progress is "
                     "reported per round); search_facts finds facts and read_passage reads a source (fast, no "
                     "LLM). Cite sources by their cited_as.",
    )
    _ask_tool(server, service)
    _read_tools(server, service)
    if allow_writes:
        _write_tools(server, service)

    @server.resource("t2rag://index/stats", name="index-stats", mime_type="application/json",
                     description="Counts (documents, chunks, triples, propositions), embedder and model.")
    def stats() -> str:
        info = service.index_info(samples=0)
        return json.dumps({"counts": info["counts"], "embedder": info["manifest"]["embedder"],
                           "model": info["model"]})

    return server


def checked(text: str) -> str:
    """The one question check (``api.check_question``): text that is empty, too long or not
    encodable (a lone surrogate, which no reply could carry back) is a tool error."""
    try:
        return check_question(text)
    except T2RAGError as e:
        raise ToolError(str(e)) from None


def _ask_tool(server: Any, service: Service) -> None:
    @server.tool(description="Answer a question from the indexed documents. Slow: 2-5 LLM calls (tens of "
                             "seconds on a CPU), with a progress notification per search round. Returns the "
                             "short answer, the facts it rests on and the passages it read, with citations.",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=False,
                                             title="Answer a question"))
    async def ask(question: Question, ctx: Context,
                  rounds: Annotated[int, Field(ge=1, le=10, description="Search rounds at most (hops).")] = 3,
                  passages: Annotated[int, Field(ge=1, le=20, description="Passages each round may read.")] = 5,
                  ) -> AskResult:
        question = checked(question)
        loop = asyncio.get_running_loop()

        def on_event(event: QueryEvent) -> None:
            if event.kind == "round":
                note = describe(event)
                asyncio.run_coroutine_threadsafe(ctx.report_progress(event.data["round"], rounds, note), loop)

        config = {"rounds": rounds, "k_chunks": passages}
        try:
            a = await anyio.to_thread.run_sync(lambda: service.ask(question, config, on_event, via="mcp"))
        except T2RAGError as e:
            raise ToolError(str(e).splitlines()[0]) from None
        total = a.usage.get("total", {})
        return AskResult(
            answer=a.answer, termination=a.termination,
            supporting_facts=[Fact(triple=f.triple, sources=_sources(f.chunks)) for f in a.resolved],
            sources=_sources(a.answer_chunks),
            tokens=int(total.get("prompt_tokens", 0)) + int(total.get("completion_tokens", 0)),
            seconds=a.timing.total_s)


def _read_tools(server: Any, service: Service) -> None:
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False, idempotent_hint=True)

    @server.tool(description="Search the index for facts (subject-predicate-object sentences) relevant to a "
                             "query. Fast (milliseconds, no LLM). Returns the best k with scores and sources.",
                 annotations=reads)
    def search_facts(query: Annotated[str, Field(description="Words or a question to match facts against.")],
                     k: Annotated[int, Field(ge=1, le=100, description="How many facts to return.")] = 10,
                     ) -> SearchResult:
        query = checked(query)
        facts = service.search(query, k)
        return SearchResult(query=query, facts=[
            FoundFact(text=f["text"], triple=f["triple"], score=f["score"], sources=[Source(**x) for x in f["sources"]])
            for f in facts])

    @server.tool(description="Read a passage by its id (as ask and search_facts cite it): its full text and "
                             "citation. Fast (no LLM).", annotations=reads)
    def read_passage(passage_id: Annotated[str, Field(description="A passage id, e.g. chunk-3f2a...")]) -> Passage:
        found = service.passages([passage_id])
        if not found:
            raise ToolError(f"no passage {passage_id!r} in the index")
        p = found[0]
        return Passage(id=p["id"], title=p["title"], cited_as=p["cited_as"], text=p["text"])


def _write_tools(server: Any, service: Service) -> None:
    """The tools that change the index (``t2rag mcp --allow-writes``): each queues a job."""
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def queued(kind: str, payload: list[Any]) -> JobInfo:
        try:
            return JobInfo(**_job_fields(service.submit(kind, payload).to_dict()))
        except Busy as e:
            raise ToolError(str(e)) from None

    @server.tool(description="Add documents to the index. Queues a job (extraction takes seconds to minutes "
                             "per document on a CPU): poll job_status. A title already indexed with other text "
                             "is replaced.", annotations=writes)
    def add_documents(documents: Annotated[list[NewDocument], Field(min_length=1, max_length=100)]) -> JobInfo:
        if any(not d.title.strip() or not d.text.strip() for d in documents):
            raise ToolError("every document needs a title and some text")
        return queued("add", [Document(d.title.strip(), d.text) for d in documents])

    @server.tool(description="Delete documents by title, with every fact only they support. Queues a job.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False))
    def delete_documents(titles: Annotated[list[str], Field(min_length=1, max_length=1000)]) -> JobInfo:
        return queued("delete", titles)

    @server.tool(description="The status of a document job (add_documents, delete_documents).",
                 annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False))
    def job_status(job_id: str) -> JobInfo:
        job = service.job(job_id)
        if job is None:
            raise ToolError(f"no job {job_id!r}")
        return JobInfo(**_job_fields(job.to_dict()))


class NewDocument(BaseModel):
    title: str = Field(description="A unique title (a document with this title is replaced).")
    text: str = Field(description="The document's text.")


def _job_fields(d: dict[str, Any]) -> dict[str, Any]:
    return {k: d.get(k) for k in ("id", "kind", "status", "error", "result")}


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
