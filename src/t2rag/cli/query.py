"""The ``ask`` and ``logs`` commands: answer questions, show why and what it cost, and list past answers."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from t2rag.api import check_question
from t2rag.cli import common as cli_common
from t2rag.cli.common import INDEX_HELP
from t2rag.errors import InputError, UsageError
from t2rag.jsontext import jsonl_lines, loads
from t2rag.outfile import append_line, jsonl_rows, open_jsonl_for_append
from t2rag.result import Answer


def query_args(p: argparse.ArgumentParser) -> None:
    from t2rag.query.config import QueryConfig

    d = QueryConfig()
    p.add_argument("--rounds", type=int, default=d.rounds, help=f"maximum resolution rounds N ({d.rounds})")
    p.add_argument("--k", type=int, default=d.k_chunks, dest="k_chunks",
                   help=f"unique source chunks per retrieval ({d.k_chunks})")
    p.add_argument("--no-lookback", action="store_true",
                   help="resolution sees retrieved propositions only, not their source chunks (ablation)")
    p.add_argument("--question-query", action="store_true",
                   help="round 1 also searches with the question itself (not in the paper)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="settings",
                   help="any query setting (`t2rag config` lists them), value as JSON, e.g. "
                        "--set retrieve.hybrid=false --set answer.passages=3")


def query_settings(args: argparse.Namespace) -> dict[str, Any]:
    cfg: dict[str, Any] = {"rounds": args.rounds, "k_chunks": args.k_chunks, "resolve.lookback": not args.no_lookback,
                           "retrieve.with_question": args.question_query}
    for item in args.settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        try:
            cfg[key.strip()] = json.loads(value)
        except ValueError:
            cfg[key.strip()] = value
    return cfg


# --- printing ---------------------------------------------------------------------
def _fmt(t: list[str]) -> str:
    return f"({t[0]} | {t[1]} | {t[2]})"


def format_answer(a: Answer, *, trace: bool = False) -> str:
    lines = [f"Q: {a.question}", f"A: {a.answer}"]
    if a.resolved:
        lines.append("Supporting facts:")
        for f in a.resolved:
            sources = "; ".join(dict.fromkeys(c.label() for c in f.chunks)) or "stated in the question"
            lines.append(f"  {_fmt(f.triple)}  [{sources}]")
    if a.answer_chunks:
        lines.append("Sources read: " + "; ".join(dict.fromkeys(c.label() for c in a.answer_chunks)))
    if a.unresolved:
        lines.append("Unresolved: " + "; ".join(_fmt(t) for t in a.unresolved))
    if trace:
        lines += format_trace(a)
    u = a.usage.get("total", {})
    lines.append(
        f"[{a.termination}; {len(a.rounds)} rounds; {u.get('calls', 0)} LLM calls, "
        f"{u.get('prompt_tokens', 0)} prompt + {u.get('completion_tokens', 0)} completion tokens; "
        f"{a.timing.total_s:.1f}s (LLM {a.timing.llm_s:.1f}s, other {a.timing.other_s:.2f}s)]"
    )
    return "\n".join(lines)


ROUND_MODES = {"question": "question embedding (only fuzzy triples left)",
               "read": "the answer's own triples (read by the answer step, not resolved)"}


def format_trace(a: Answer) -> list[str]:
    d = a.decomposition
    lines = ["Decomposition" + (" (fallback: the question is the query)" if d.fallback else "") + ":"]
    lines += [f"  {_fmt(t)}" for t in d.triples]
    for r in a.rounds:
        how = ROUND_MODES.get(r.mode, "searchable triples")
        lines.append(f"Round {r.round} — retrieval by {how}:")
        lines += [f"  query: {q}" for q in r.queries]
        for p in r.propositions[:10]:
            lines.append(f"    {p.score:.3f}  {p.text}")
        if len(r.propositions) > 10:
            lines.append(f"    … {len(r.propositions) - 10} more")
        lines.append("  chunks: " + "; ".join(c.label() for c in r.chunks))
        for b in r.bindings:
            lines.append(f"  bound {b.placeholder} = {b.value}")
        if r.dropped_invalid:
            lines.append(f"  dropped {r.dropped_invalid} invalid binding(s)")
        lines += [f"  error: {e}" for e in r.errors]
    return lines


# --- ask ------------------------------------------------------------------------------
def read_questions(path: Path) -> list[dict[str, str]]:
    """Questions from a JSON list (strings or objects with 'question'), JSONL, or HippoRAG files."""
    try:
        raw = path.read_text("utf-8")
    except FileNotFoundError:
        raise InputError(f"questions file not found: {path}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    try:
        items = ([loads(line) for line in jsonl_lines(raw) if line.strip()] if path.suffix == ".jsonl"
                 else loads(raw))
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: invalid JSON at line {e.lineno} ({e.msg})") from None
    if not isinstance(items, list):
        raise InputError(f"{path}: expected a list of questions")
    out = []
    for i, q in enumerate(items):
        if isinstance(q, str):
            out.append({"id": str(i), "question": q})
        elif isinstance(q, dict) and isinstance(q.get("question"), str):
            out.append({"id": str(q.get("id", q.get("_id", i))), "question": q["question"]})
        else:
            raise InputError(f"{path}: item {i} is neither a string nor an object with a 'question'")
    return out


def _done_ids(out: Path) -> set[str]:
    """Ids already answered in ``out`` (a torn last line is cut off when the file is reopened,
    and its question answered again; a device such as /dev/stdout holds none)."""
    return {str(row["id"]) for row in jsonl_rows(out) if "id" in row}


def _progress_line(event: Any) -> None:
    """A query event as one line on stderr, so a slow local model shows its progress."""
    from t2rag.query.events import describe

    print(describe(event), file=sys.stderr, flush=True)


def cmd_ask(args: argparse.Namespace) -> int:
    from t2rag.api import T2RAG

    if (args.question is None) == (args.questions is None):
        raise UsageError("give either a QUESTION or --questions FILE")
    if args.questions and not args.out:
        raise UsageError("--questions needs --out FILE.jsonl")
    if args.out and Path(args.out).is_dir():
        raise UsageError(f"--out {args.out} is a directory; give a file (FILE.jsonl)")
    cli_common.check_llm_args(args)
    if args.question is not None:
        check_question(args.question)  # before a model loads
    from t2rag.api import query_config

    query_config(query_settings(args))  # a bad --set is reported before a model loads too
    from t2rag.index.store import require_manifest

    manifest = require_manifest(args.index)  # a missing index is reported before a model loads
    with T2RAG.open(args.index, llm=cli_common.llm_from_args(args, manifest), log=not args.no_log) as rag:
        if args.question is not None:
            a = rag.ask(args.question, query_settings(args), on_event=None if args.quiet else _progress_line, via="cli")
            total = a.usage.get("total", {})
            if not args.quiet and total.get("cache_hits"):
                print(f"{total['cache_hits']} of {total['calls']} LLM replies came from the response cache "
                      "(--no-cache to ask the model again)", file=sys.stderr)
            print(json.dumps(a.to_dict(), indent=2, ensure_ascii=False) if args.json
                  else format_answer(a, trace=args.trace))
            return 0
        return _ask_file(rag, args)


def _ask_file(rag: Any, args: argparse.Namespace) -> int:
    questions = read_questions(Path(args.questions))
    out = Path(args.out)
    with open_jsonl_for_append(out) as f:  # first: a torn tail is cut before ids are read
        done = _done_ids(out)
        todo = [q for q in questions if q["id"] not in done]
        refused = _refuse_invalid(f, todo)  # recorded with their error; the rest are answered
        todo = [q for q in todo if q["id"] not in refused]
        _answer_into(f, rag, todo, len(questions) - len(refused), args)
    print(f"answered {len(todo)} questions ({len(done)} already in {out}"
          + (f"; {len(refused)} refused, each recorded with its error: {', '.join(sorted(refused))[:200]}"
             if refused else "") + ")")
    return 0


def _refuse_invalid(f: Any, todo: list[dict[str, str]]) -> set[str]:
    """Write an error row for each question ``check_question`` refuses; return their ids."""
    refused = set()
    for q in todo:
        try:
            check_question(q["question"])
        except InputError as e:
            append_line(f, {"id": q["id"], "question": q["question"], "error": str(e)})
            refused.add(q["id"])
    return refused


def _answer_into(f: Any, rag: Any, todo: list[dict[str, str]], total: int, args: argparse.Namespace) -> None:
    from tqdm import tqdm

    bar = tqdm(total=total, initial=total - len(todo), unit="q", file=sys.stderr, disable=args.quiet)

    def write(i: int, a: Answer) -> None:
        append_line(f, {"id": todo[i]["id"], **a.to_dict()})
        bar.update(1)

    rag.ask_many([q["question"] for q in todo], query_settings(args), on_answer=write, via="cli")
    bar.close()


def cmd_logs(args: argparse.Namespace) -> int:
    from t2rag.answer_log import AnswerLog
    from t2rag.index.store import require_manifest

    require_manifest(args.index)
    if not 1 <= args.limit <= 10_000:
        raise UsageError("--limit must be 1..10000")
    log = AnswerLog(args.index)
    try:
        if args.id is not None:
            a = log.answer(args.id)
            if a is None:
                raise InputError(f"no entry {args.id} in the log of {args.index}")
            print(json.dumps(a.to_dict(), indent=2, ensure_ascii=False) if args.json
                  else format_answer(a, trace=args.trace))
            return 0
        entries = log.entries(args.limit, query=args.query)
    finally:
        log.close()
    if args.json:
        print(json.dumps([e.to_dict() for e in entries], indent=2, ensure_ascii=False))
    for e in entries if not args.json else ():
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.time))
        print(f"#{e.id}  {when}  {e.via}  {e.model}  {e.tokens} tokens  {e.seconds:.1f}s  [{e.termination}]")
        print(f"  Q: {cli_common.printable(e.question)}\n  A: {cli_common.printable(e.answer)}")
    if not entries and not args.json:
        print("no answers logged yet" + (f" with {args.query!r}" if args.query else ""))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("ask", help="answer a question (or a file of questions) from an index")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("question", nargs="?", help="the question (or use --questions FILE)")
    p.add_argument("--questions", metavar="FILE", help="JSON list / JSONL / HippoRAG question file")
    p.add_argument("--out", metavar="FILE.jsonl", help="answers file for --questions (appended to; resumable)")
    p.add_argument("--trace", action="store_true", help="print the rounds: queries, evidence, bindings")
    p.add_argument("--json", action="store_true", help="print the whole Answer as JSON")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="no progress on stderr (the query's steps for one question, a bar for a file)")
    cli_common.llm_args(p)
    query_args(p)
    p.add_argument("--no-log", action="store_true", help="do not record the answers in the index's log (t2rag logs)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser("logs", help="the log of answers over an index: list them, or show one")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("id", nargs="?", type=int, help="show this entry in full (its trace with --trace)")
    p.add_argument("-n", "--limit", type=int, default=20, help="how many to list, newest first (20)")
    p.add_argument("-q", "--query", default="", help="only questions containing this text")
    p.add_argument("--trace", action="store_true", help="with ID: print the rounds too")
    p.add_argument("--json", action="store_true", help="print JSON (the whole Answer for one entry)")
    p.set_defaults(func=cmd_logs)
