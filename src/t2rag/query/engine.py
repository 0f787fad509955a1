"""The online algorithm: decompose; loop {retrieve, resolve, update}; synthesize.

Termination (``stop_reason``) is checked before every round, in this order:

* ``complete``   -- nothing is pending: every query triple is resolved. This is the only
  natural completion; the paper's synthesis then sees the resolved triples alone (by default
  T2RAG's also reads passages: ``synthesize.answer_chunks``).
* ``early_stop`` -- no further progress is possible: no triple became searchable in the last
  round (``to_search`` is empty) and no fuzzy triple is left, so the searchable triples that
  remain were already searched and stayed unresolved. Also when a question-fallback round
  (fuzzy triples only) bound nothing: the next round would send the same request again. And,
  unless ``QueryConfig.question_fallback``, as soon as nothing is newly searchable even though
  fuzzy triples are left: the chain is broken, and the answer reads the facts so far beside
  ``k_chunks`` passages.
* ``max_rounds`` -- N rounds ran and work remained that another round could have done.
* ``last_hop``   -- (``QueryConfig.read_last_hop``) every pending triple is searchable and asks
  for ``?answer``: that round retrieves as usual but skips the resolve call, and the answer step
  reads the round's passages beside the resolved facts. Resolving ``?answer`` and then writing
  the answer are the same job; doing it once saves a call per question.
* ``plan_rejected`` -- (``QueryConfig.reject_failed_plans``) the decomposition failed its checks
  (``query/decompose.py``): no round runs, and the question is answered from its own passages as
  chunk RAG would.

So after the last round a state with nothing left to search reports ``early_stop``, not
``max_rounds``: ``max_rounds`` means the budget, not the evidence, ended the query. After a
stop other than ``complete``, synthesis also sees the unresolved triples and (when
``QueryConfig.synth_chunks``) passages: the paper's last-round chunks, or by default
``answer_passages`` taken in turn from the question's retrieval and each round's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from t2rag.llm.base import LLM
from t2rag.prompts import prompt_hashes
from t2rag.query.answer_check import problem
from t2rag.query.config import QueryConfig
from t2rag.query.decompose import EXAMPLES, Decomposition, decompose
from t2rag.query.events import EventSink, Kind, QueryEvent
from t2rag.query.resolve import Resolution, resolve
from t2rag.query.retrieve import Evidence, Retriever
from t2rag.query.state import ANSWER_PLACEHOLDER, QueryState, TrackedTriple, apply_bindings, initial_state
from t2rag.query.synthesize import Synthesis, answer_chunks, read_passages, reading, synthesize
from t2rag.query.trace import prop_ref, resolved_facts, round_trace, triples
from t2rag.result import Answer, ChunkRef, DecompositionRecord, RoundTrace, Termination, Timing
from t2rag.types import Chunk, PropositionHit, Usage

PROMPTS = ["decompose", "resolve", "answer", "answer_notes", "read"]
QUESTION_POOL = 20  # chunks the question's own facts may name, fused with its chunk ranking


def answer_question(
    question: str, llm: LLM, retriever: Retriever, config: QueryConfig | None = None,
    on_event: EventSink | None = None,
) -> Answer:
    """Answer one question with T2RAG's triple-driven rounds; ``on_event`` hears each step."""
    run = QueryRun(question, llm, retriever, config or QueryConfig(), on_event=on_event)
    run.ground()
    plan = run.decompose()
    state = initial_state(plan.triples)
    if run.config.decompose.reject_failed and (plan.problems or plan.fallback):
        return run.finish(state, "plan_rejected", run.read_question_passages())
    fallback = run.config.question_fallback
    reason = stop_reason(state, 0, run.config.rounds, fallback=fallback)
    while reason is None:
        mode, searched, queries = search_plan(state, question,
                                              with_question=run.config.retrieve.with_question and run.round_no == 0)
        run.emit("round", round=run.round_no + 1, mode=mode, searched=triples(searched), queries=queries)
        evidence = run.retrieve(queries)
        if mode == "triples" and run.reads_last_hop(state):
            run.record("read", searched, state, state, evidence, Resolution())
            reason = "last_hop"
            break
        resolution = run.resolve(state, evidence, in_order=mode == "triples")
        updated = apply_bindings(state, resolution.bindings, run.round_no)
        run.record(mode, searched, state, updated, evidence, resolution)
        stalled = mode == "question" and len(updated.bindings) == len(state.bindings)
        state = updated
        reason = stop_reason(state, run.round_no, run.config.rounds, stalled=stalled, fallback=fallback)
    return run.finish(state, reason, run.synthesize(state, natural=reason == "complete",
                                                    reached=reason in ("complete", "last_hop")))


def stop_reason(
    state: QueryState, rounds_done: int, max_rounds: int, *, stalled: bool = False, fallback: bool = True,
) -> Termination | None:
    """Why to stop now, or None to run another round (see the module docstring); without
    ``fallback`` no round searches with the question when no triple is searchable."""
    if state.complete:
        return "complete"
    if (not state.to_search and (not state.fuzzy or not fallback)) or stalled:
        return "early_stop"
    if rounds_done >= max_rounds:
        return "max_rounds"
    return None


def last_hop(state: QueryState) -> bool:
    """Whether what is left is only the answer's own lookup: nothing fuzzy and every pending
    triple searchable now and asking for ``?answer``."""
    return (not state.fuzzy and bool(state.to_search) and len(state.to_search) == len(state.searchable)
            and all(ANSWER_PLACEHOLDER in t.current.placeholders for t in state.searchable))


def search_plan(
    state: QueryState, question: str, *, with_question: bool = False
) -> tuple[str, tuple[TrackedTriple, ...], list[str]]:
    """(mode, triples searched, query texts) for the next round: the newly searchable triples
    (and, ``with_question``, the question too), or -- when none are new but fuzzy ones remain --
    the question itself (the paper's fallback)."""
    q_text = " ".join(question.split())
    queries = list(dict.fromkeys(q for t in state.to_search if (q := t.current.query_text())))
    if queries:
        return "triples", state.to_search, queries + ([q_text] if with_question and q_text not in queries else [])
    return "question", (), [q_text]


@dataclass
class QueryRun:
    """One query's context and records: the stages it calls, the usage and time they take."""

    question: str
    llm: LLM
    retriever: Retriever
    config: QueryConfig
    usage: Usage = field(default_factory=Usage)
    round_no: int = 0
    llm_s: float = 0.0
    started: float = field(default_factory=time.perf_counter)
    decomposition: Decomposition | None = None
    grounding: Evidence | None = None  # retrieved for the question itself, before decomposing
    passages: tuple[Chunk, ...] = ()  # the question's own best passages (see ``ground``)
    evidence: list[Evidence] = field(default_factory=list)
    rounds: list[RoundTrace] = field(default_factory=list)
    on_event: EventSink | None = None
    check_note: str = ""  # what the answer check found in the first reply ("" when it passed)

    def emit(self, kind: Kind, **data: Any) -> None:
        if self.on_event is not None:
            self.on_event(QueryEvent(kind, data))

    @contextmanager
    def _llm_time(self) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.llm_s += time.perf_counter() - t0

    def ground(self) -> None:
        """Retrieve for the question itself: its facts (for a grounded decomposition) and the
        passages the answer reads (its chunk ranking fused with those facts' chunks)."""
        c, d = self.config, self.config.decompose
        if (d.grounded and d.ground_facts) or c.answer.passages:
            q_text = " ".join(self.question.split())
            self.grounding = self.retriever.search([q_text], c.retrieve, k_chunks=max(c.k_chunks, QUESTION_POOL))
            n = reading(c.answer, c.k_chunks, reached=False)
            self.passages = self.retriever.passages(q_text, self.grounding, n, c.retrieve.top_m)

    def decompose(self) -> Decomposition:
        c = self.config.decompose
        facts = [p.text for p in self.grounding.propositions[: c.ground_facts]] if self.grounding and c.grounded else []
        with self._llm_time():
            self.decomposition = decompose(self.llm, self.question, c, usage=self.usage, grounding=facts,
                                           max_tokens=self.config.max_tokens, embed=self.retriever.embed)
        d = self.decomposition
        self.emit("decomposition", triples=[t.as_list() for t in d.triples], fallback=d.fallback,
                  problems=list(d.problems))
        return d

    def retrieve(self, queries: list[str]) -> Evidence:
        self.round_no += 1
        c = self.config
        ev = self.retriever.search(queries, c.retrieve, k_chunks=c.k_chunks, max_facts=c.resolve.facts or None)
        self.evidence.append(ev)
        self.emit("evidence", round=self.round_no, propositions=[asdict(prop_ref(p)) for p in ev.propositions],
                  chunks=[{"id": ch.id, "title": ch.title} for ch in ev.chunks])
        return ev

    def resolve(self, state: QueryState, evidence: Evidence, *, in_order: bool) -> Resolution:
        with self._llm_time():
            return resolve(self.llm, self.question, state, evidence, self.config.resolve, round_no=self.round_no,
                           usage=self.usage, max_tokens=self.config.max_tokens, in_order=in_order)

    def record(self, mode: str, searched: tuple[TrackedTriple, ...], before: QueryState, after: QueryState,
               evidence: Evidence, resolution: Resolution) -> None:
        trace = round_trace(self.round_no, mode, searched, before, after, evidence, resolution)
        self.rounds.append(trace)
        self.emit("bindings", round=self.round_no, mode=mode, bindings=[asdict(b) for b in trace.bindings],
                  dropped=[asdict(x) for x in trace.dropped], errors=trace.errors)

    def reads_last_hop(self, state: QueryState) -> bool:
        """Whether this round's passages go to the answer step instead of a resolve call: only
        when the answer reads passages at all (otherwise nothing would read the last hop)."""
        a = self.config.answer
        return a.read_last_hop and a.passages_after_stop and a.passages > 0 and last_hop(state)

    def synthesize(self, state: QueryState, *, natural: bool, reached: bool) -> Synthesis:
        """Write the answer from the chain; with ``answer.check``, a reply that repeats a bridge
        or is the wrong kind of value is asked once more with the finding, and the second reply
        stands if it passes the check (``query/answer_check.py``). With ``answer.plain_read`` a
        chain that reached its answer hop with nothing bound is read as chunk RAG reads."""
        c = self.config
        plain = c.answer.plain_read and reached and not state.resolved
        reads = replace(c.answer, passages=max(c.answer.passages, c.k_chunks)) if plain else c.answer
        chunks = answer_chunks(reads, c.k_chunks, self.passages, [ev.chunks for ev in self.evidence],
                               natural=natural, reached=reached)
        if plain:
            return self.read_question_passages(chunks)

        def write(note: str = "") -> Synthesis:
            with self._llm_time():
                return synthesize(self.llm, self.question, state, c.answer, natural=natural, chunks=chunks,
                                  note=note, usage=self.usage, max_tokens=c.max_tokens)

        first = write()
        note = problem(self.question, first.answer, state) if c.answer.check else None
        if note is None:
            return first
        self.check_note = note
        second = write(note)
        return second if problem(self.question, second.answer, state) is None else first

    def read_question_passages(self, chunks: tuple[Chunk, ...] | None = None) -> Synthesis:
        """Answer as chunk RAG does, from the question's passages (or ``chunks``): the plan failed
        its checks, or (``answer.plain_read``) bound nothing before its answer hop."""
        with self._llm_time():
            return read_passages(self.llm, self.question, self.passages if chunks is None else chunks,
                                 usage=self.usage, max_tokens=self.config.max_tokens)

    def finish(self, state: QueryState, reason: Termination, synthesis: Synthesis) -> Answer:
        props: dict[str, PropositionHit] = {}
        chunks: dict[str, Chunk] = {}
        for ev in self.evidence:
            props.update({p.id: p for p in ev.propositions if p.id not in props})
            chunks.update({c.id: c for c in ev.chunks})
        missing = {c for t in state.resolved for c in t.support.chunks} - chunks.keys()
        if missing:
            chunks.update(self.retriever.chunks(missing))
        self.emit("answer", answer=synthesis.answer, termination=reason, answer_path=synthesis.path,
                  check=self.check_note)
        answer = Answer(
            question=self.question,
            answer=synthesis.answer,
            termination=reason,
            resolved=resolved_facts(state, props, chunks),
            unresolved=triples(state.searchable + state.fuzzy),
            decomposition=self._decomposition_record(),
            rounds=self.rounds,
            usage=self.usage.to_dict(),
            timing=self._timing(),
            config=self.config.to_dict(),
            errors=self._errors(synthesis),
            answer_path=synthesis.path,
            answer_check=self.check_note,
            answer_chunks=[ChunkRef(c.id, c.title) for c in synthesis.chunks],
            grounding=[prop_ref(p) for p in self.grounding.propositions] if self.grounding else [],
            model=getattr(self.llm, "name", ""),
            prompts=prompt_hashes(PROMPTS, data=(EXAMPLES,)),
        )
        self._locate(answer)
        return answer

    def _locate(self, answer: Answer) -> None:
        """Give every passage the answer cites its place in its document (source, pages)."""
        refs = answer.answer_chunks + [c for f in answer.resolved for c in f.chunks] + [
            c for r in answer.rounds for c in r.chunks]
        found = self.retriever.locations({r.id for r in refs})
        for ref in refs:
            if (loc := found.get(ref.id)) is not None:
                ref.source, ref.page, ref.last_page = loc.source, loc.page, loc.last_page

    def _decomposition_record(self) -> DecompositionRecord:
        d = self.decomposition
        assert d is not None
        return DecompositionRecord([t.as_list() for t in d.triples], d.fallback, d.error, list(d.problems))

    def _timing(self) -> Timing:
        total = time.perf_counter() - self.started
        return Timing(round(total, 6), round(self.llm_s, 6), round(max(total - self.llm_s, 0.0), 6))

    def _errors(self, synthesis: Synthesis) -> list[str]:
        errors = [f"decompose: {self.decomposition.error}"] if self.decomposition and self.decomposition.error else []
        errors += [e for r in self.rounds for e in r.errors]
        return errors + ([synthesis.error] if synthesis.error else [])
