"""The index commands: ``index``, ``inspect``, ``export-openie``, ``delete``, ``copy``, ``defaults``."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from typing import Any

from t2rag.cli import common as cli_common
from t2rag.cli.common import EXIT_OK, INDEX_HELP, llm_args, printable
from t2rag.config import ChunkConfig, OpenIEConfig, StoreConfig
from t2rag.errors import InputError, UsageError
from t2rag.redact import redact

# --- index / inspect / delete -------------------------------------------------------
# Decoding slots a local model extracts with: two chunks in flight were 1.38x as fast as one on
# 2 cores with the same triples (docs/performance.md, "Indexing speed levers"); --parallel overrides.
LOCAL_INDEX_SLOTS = 2


def old_spelling(args: argparse.Namespace) -> None:
    """``t2rag index CORPUS --index INDEX`` (version 0.1) still works, with a note, until 0.3."""
    if args.index_option is not None:
        if args.corpus is not None:
            raise UsageError("name the index once: t2rag index INDEX CORPUS")
        args.corpus, args.index = args.index, args.index_option
        print("t2rag: note: `t2rag index CORPUS --index INDEX` is the old spelling; write "
              "`t2rag index INDEX CORPUS` (the old one is removed in 0.3)", file=sys.stderr)
    elif args.corpus is None:
        raise UsageError("t2rag index needs the index and what to read: t2rag index INDEX CORPUS")


def cmd_index(args: argparse.Namespace) -> int:
    old_spelling(args)
    from t2rag.config import IndexConfig
    from t2rag.index import TripleIndex, load_corpus, load_openie
    from t2rag.llm.registry import check_spec
    from t2rag.progress import BuildBar

    notes: list[str] = []
    docs = load_corpus(args.corpus, notes)
    for note in notes:
        print(f"t2rag: {printable(note)}", file=sys.stderr)
    skipped = [n for n in notes if n.endswith("skipped")]
    if args.strict and skipped:
        raise InputError(f"{len(skipped)} file(s) could not be read and --strict is set: nothing was indexed")
    if not docs:
        raise InputError(f"{args.corpus} holds no documents: nothing to index")
    imported = load_openie(args.openie_from) if args.openie_from else None
    from t2rag.index.store import read_manifest

    cli_common.settle_llm(args, read_manifest(args.index))
    if args.llm != "none":
        check_spec(args.llm)
        cli_common.check_llm_args(args)
    if args.parallel is None and str(args.llm).split(":")[0] == "local":
        args.parallel = LOCAL_INDEX_SLOTS
    llm = None if args.llm == "none" else (lambda: cli_common.llm_from_args(args))
    config = IndexConfig(
        chunk=ChunkConfig(size=args.chunk_size, overlap=args.chunk_overlap),
        openie=OpenIEConfig(mode=args.openie_mode),
        store=StoreConfig(index_type=args.index_type),
    )
    if args.estimate is not None:
        return _estimate(args, docs, imported, config)
    with TripleIndex.create(args.index, embedder=cli_common.embedder_from_args(args), config=config) as ix, \
            BuildBar(disable=args.quiet) as bar:
        report = ix.add(docs, llm=llm, imported=imported, progress=bar, retry_failed=args.retry_failed,
                        replace=not args.keep_changed)
        gone = _gone(ix, args.corpus, docs) if args.remove_missing else []
        if gone:
            ix.delete(gone)
        counts = ix.store.counts()
    print(f"indexed {len(docs)} documents into {redact(str(args.index))}: {report['new_chunks']} new chunks"
          + (f" ({report['replaced']} changed documents replaced)" if report["replaced"] else "") + ", "
          f"{report['extracted']} extracted ({report['failed']} failed), {report['triples']} triples "
          f"({report['triples_dropped']} junk or duplicate dropped); "
          f"index now holds {counts['chunks']} chunks, {counts['propositions']} propositions "
          f"[{report['seconds']:.1f}s]")
    if gone:
        print(f"removed {len(gone)} documents whose files are gone: " + ", ".join(map(printable, gone[:10]))
              + (" …" if len(gone) > 10 else ""))
    return EXIT_OK


def _gone(ix: Any, corpus: str, docs: list[Any]) -> list[str]:
    """Titles of documents read earlier from files under the folder ``corpus`` whose files
    this run did not read (deleted or moved); documents from elsewhere are left alone."""
    from pathlib import Path

    folder = Path(corpus)
    if not folder.is_dir():
        raise UsageError("--remove-missing needs a folder to compare the index with")
    present = {d.source for d in docs}
    return [d.title for d in ix.store.document_summaries()
            if d.source and d.source not in present and Path(d.source).is_relative_to(folder)]


def _estimate(args: argparse.Namespace, docs: Any, imported: Any, config: Any) -> int:
    """``index --estimate N``: extract N sample chunks, print the projected cost, build nothing."""
    from t2rag.index import TripleIndex
    from t2rag.index.estimate import estimate_build, pending_chunks
    from t2rag.index.store import read_manifest

    if args.llm == "none":
        raise UsageError("--estimate measures an LLM: give --llm")
    if read_manifest(args.index) is not None:
        with TripleIndex.open(args.index) as ix:  # an existing index: its own config, its done chunks
            chunks = pending_chunks(docs, ix.config, ix.store, imported)
            config = ix.config
    else:
        chunks = pending_chunks(docs, config, None, imported)
    llm = cli_common.llm_from_args(args)
    est = estimate_build(chunks, llm, config, sample=args.estimate)
    print(json.dumps(est.to_dict()) if args.json else est.describe(llm.name))
    return EXIT_OK


def cmd_inspect(args: argparse.Namespace) -> int:
    from t2rag.index import TripleIndex

    with TripleIndex.open(args.index) as ix:
        if args.documents:  # one per line, the title first: what `delete --doc` takes
            docs = ix.store.document_summaries()
            if args.json:
                print(json.dumps([asdict(d) | {"status": d.status()} for d in docs], indent=2, ensure_ascii=False))
            for d in docs if not args.json else ():
                pages = f"{d.pages} pages" if d.pages else "-"
                print("\t".join([printable(d.title), f"{d.chunks} chunks", pages, printable(d.source or "-"),
                                 d.status()]))
            return EXIT_OK
        info = ix.inspect(samples=args.samples)
    if args.json:
        print(json.dumps(info, indent=2, ensure_ascii=False))
        return EXIT_OK
    m = info["manifest"]
    print(f"index      {redact(str(info['location']))}  (format {m['format_version']}, t2rag {m['library_version']})")
    print(f"embedder   {m['embedder']} ({m['dim']}-d)    llm: {m.get('llm') or '-'}")
    print(f"config     {json.dumps(m['config'])}")
    print("counts     " + ", ".join(f"{k}={v}" for k, v in info["counts"].items()))
    for s in info["samples"]:
        print(f"\n[{printable(s['title'])}] {s['chunk']}")
        for t in s["triples"][:8]:
            print(f"  ({printable(t[0])} | {printable(t[1])} | {printable(t[2])})")
    if info["failed"]:
        print(f"\nfailed chunks (first {len(info['failed'])}):")
        for f in info["failed"]:
            print(f"  [{printable(f['title'])}] {f['chunk']}: {printable(str(f['error']))}")
    return EXIT_OK


def cmd_export_openie(args: argparse.Namespace) -> int:
    from t2rag.index import TripleIndex

    with TripleIndex.open(args.index) as ix:
        r = ix.export_openie(args.out)
    print(f"wrote {r['passages']} passages' triples to {args.out}"
          + (f"; left out {r['failed']} failed" if r["failed"] else "")
          + (f"; left out {r['not_extracted']} chunks not yet extracted" if r["not_extracted"] else ""))
    return EXIT_OK


def cmd_delete(args: argparse.Namespace) -> int:
    from t2rag.index import TripleIndex

    with TripleIndex.open(args.index, writer=True) as ix:
        r = ix.delete(args.doc)
    if r["documents"] == 0:
        raise InputError("no document with " + ("that title" if len(set(args.doc)) == 1 else "those titles")
                         + " in the index; 't2rag inspect INDEX --documents' lists the titles")
    print(f"deleted {r['documents']} documents ({r['chunks']} chunks, {r['propositions']} propositions)"
          + (f"; {r['not_found']} titles not found" if r["not_found"] else ""))
    return EXIT_OK


def cmd_copy(args: argparse.Namespace) -> int:
    from t2rag.index.transfer import copy_index

    r = copy_index(args.src, args.dst)
    c = r["counts"]
    print(f"copied {c['documents']} documents, {c['chunks']} chunks, {r['records']} extractions and "
          f"{c['propositions']} propositions (re-embedded {r['propositions_embedded']} propositions and "
          f"{r['chunks_embedded']} chunks; no LLM calls)")
    return EXIT_OK


def cmd_defaults(args: argparse.Namespace) -> int:
    """Show, set or clear the user's default LLM (used when neither --llm nor the index names one)."""
    from t2rag.defaults import ENV_LLM, defaults_file, save_user_default, user_default
    from t2rag.llm.registry import check_spec

    if args.clear:
        defaults_file().unlink(missing_ok=True)
    elif args.llm:
        check_spec(args.llm)
        print(f"saved to {save_user_default(args.llm, args.base_url)}")
    choice = user_default()
    if choice is None:
        print("no default LLM: commands use the index's own, else local (set one with t2rag defaults --llm SPEC, "
              f"or {ENV_LLM})")
    else:
        print(f"default LLM {choice.spec}" + (f" at {redact(choice.base_url)}" if choice.base_url else "")
              + f" (from {choice.source}); an index's own LLM and --llm come first")
    return EXIT_OK


# --- parser ----------------------------------------------------------------------------
def register(sub: Any) -> None:
    p = sub.add_parser("index", help="build or extend an index from a corpus")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP + " (created if missing)")
    p.add_argument("corpus", nargs="?", metavar="CORPUS",
                   help="a document file or a folder of them (text, Markdown, reStructuredText, HTML, "
                   "PDF, Word .docx; any text encoding), or a JSON list / JSONL of {title, text}")
    p.add_argument("--index", dest="index_option", metavar="INDEX", help=argparse.SUPPRESS)  # 0.1's spelling
    llm_args(p)
    p.add_argument("--embedder", default=None, metavar="SPEC",
                   help="minilm (default, offline), openai:MODEL, st:PATH, hashing[:DIM] (tests)")
    p.add_argument("--openie-from", metavar="FILE", help="import HippoRAG OpenIE output instead of running the LLM "
                   "(chunks missing from the file still go to --llm; with --llm none they are recorded as "
                   "not extracted and picked up by a later run with an LLM)")
    p.add_argument("--openie-mode", choices=["two_pass", "single"], default=OpenIEConfig().mode,
                   help=f"two_pass: entities then triples, or single: one pass ({OpenIEConfig().mode})")
    chunk = ChunkConfig()
    p.add_argument("--chunk-size", type=int, default=chunk.size,
                   help=f"chunk size in word/punctuation tokens ({chunk.size})")
    p.add_argument("--chunk-overlap", type=int, default=chunk.overlap,
                   help=f"tokens shared by adjacent chunks ({chunk.overlap})")
    p.add_argument("--index-type", choices=["flat", "hnsw", "ivf"], default=StoreConfig().index_type,
                   help=f"exact inner product (flat) or approximate for large indexes ({StoreConfig().index_type})")
    p.add_argument("--retry-failed", action="store_true", help="extract previously failed chunks again")
    p.add_argument("--estimate", type=int, nargs="?", const=5, metavar="N",
                   help="extract N sample chunks (5) and print the whole build's expected LLM calls, tokens and "
                        "time; nothing is written")
    p.add_argument("--json", action="store_true", help="with --estimate: print the estimate as JSON")
    p.add_argument("--keep-changed", action="store_true",
                   help="a document whose title the index already holds with other text joins the old one "
                        "instead of replacing it (default: replace, so an edited file's old facts go)")
    p.add_argument("--strict", action="store_true",
                   help="stop, indexing nothing, if any file cannot be read (default: name it on stderr and go on)")
    p.add_argument("--remove-missing", action="store_true",
                   help="also delete the documents indexed earlier from this folder whose files are gone")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("inspect", help="show an index: counts, configs, sample triples, failed chunks")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    p.add_argument("--samples", type=int, default=5, help="sample chunks to show (5)")
    p.add_argument("--documents", action="store_true",
                   help="list the documents, one per line: title, chunks, pages, source file, extraction status "
                        "(tab-separated; with --json, a list)")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("export-openie", help="write an index's extracted triples as a HippoRAG OpenIE file "
                       "(reusable with --openie-from)")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("out", metavar="FILE.json")
    p.set_defaults(func=cmd_export_openie)

    p = sub.add_parser("delete", help="delete documents (by title) and everything only they support")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("--doc", nargs="+", required=True, metavar="TITLE")
    p.set_defaults(func=cmd_delete)

    p = sub.add_parser("copy", help="copy an index to another location, e.g. a directory into PostgreSQL "
                       "(no LLM calls)")
    p.add_argument("src", metavar="SRC", help=INDEX_HELP)
    p.add_argument("dst", metavar="DST", help="a new index directory or an empty postgresql:// database")
    p.set_defaults(func=cmd_copy)

    p = sub.add_parser("defaults", help="show or set the default LLM (when neither --llm nor the index names one)")
    p.add_argument("--llm", metavar="SPEC", help="the default LLM spec to save, e.g. ollama:qwen2.5:1.5b")
    p.add_argument("--base-url", help="its server's URL, for openai:MODEL")
    p.add_argument("--clear", action="store_true", help="remove the saved default")
    p.set_defaults(func=cmd_defaults)
