"""The ``t2rag bench`` command: run a benchmark (resumable) or render and compare run reports."""

from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any

from t2rag.cli import common as cli_common
from t2rag.eval import METHODS

EXIT_OK = 0


def add_bench_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``t2rag bench`` (run) and its ``report`` subcommand."""
    parser.add_argument("--dataset", metavar="NAME", help="dataset name: DATA_DIR/NAME.json + NAME_corpus.json "
                        "(musique, 2wikimultihopqa, hotpotqa, popqa, story, medical, ...)")
    parser.add_argument("--data-dir", metavar="DIR", help="folder of HippoRAG2 reproduce/dataset files")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help=f"comma-separated, from: {', '.join(METHODS)} (default: all)")
    cli_common.llm_args(parser)
    parser.add_argument("--embedder", default="minilm", metavar="SPEC",
                        help="minilm (default, offline), openai:MODEL, st:PATH, hashing[:DIM] (tests)")
    parser.add_argument("--openie-from", metavar="FILE", help="import HippoRAG OpenIE output for the index")
    parser.add_argument("--limit", type=int, metavar="N", help="only the first N questions")
    parser.add_argument("--out", metavar="RUN_DIR", help="run directory (default runs/DATASET-LLM); running the "
                        "same command again resumes it")
    parser.add_argument("--index", metavar="DIR", help="index directory (default RUN_DIR/../indexes/...)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    sub = parser.add_subparsers(dest="bench_command", metavar="report")
    rep = sub.add_parser("report", help="render report.md and charts again from runs' predictions; compare runs")
    rep.add_argument("runs", nargs="+", metavar="RUN_DIR")
    rep.add_argument("--out", dest="report_out", metavar="DIR",
                     help="where report.md and charts go (default: the run dir, or RUN_DIR/../compare)")


def register(subparsers: Any) -> None:
    """Hook for ``t2rag.cli``: adds ``bench`` to the top-level subcommands."""
    p = subparsers.add_parser("bench", help="benchmark T2RAG against NOR, BM25, dense RAG and IRCoT")
    add_bench_arguments(p)
    p.set_defaults(func=bench_main)


def _default_out(dataset: str, llm: Any) -> Path:
    name = llm if isinstance(llm, str) else getattr(llm, "name", "llm")
    return Path("runs") / re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{dataset}-{name}")


def bench_main(args: argparse.Namespace) -> int:
    """Run the benchmark named by ``args`` (``args.llm`` may be an LLM object, for tests)."""
    from t2rag.errors import ConfigError
    from t2rag.eval.report import main_table, render_report

    if getattr(args, "bench_command", None) == "report":
        text = render_report([Path(r) for r in args.runs], Path(args.report_out) if args.report_out else None)
        print(text, end="")
        return EXIT_OK
    if not args.dataset or not args.data_dir:
        raise ConfigError("t2rag bench needs --dataset NAME and --data-dir DIR (or: t2rag bench report RUN_DIR...)")
    from t2rag.eval.runner import run_bench

    llm: Any = args.llm
    if llm is None or isinstance(llm, str):
        llm = cli_common.llm_from_args(args)  # behind the shared response cache unless --no-cache
    out = Path(args.out) if args.out else _default_out(args.dataset, args.llm)
    metrics = run_bench(
        args.dataset, args.data_dir, args.methods, llm, args.embedder, args.openie_from, args.limit, out,
        index_dir=args.index, progress=not args.quiet, cache=False,
    )
    print(main_table([(str(out), metrics)]))
    print(f"\nwrote {out}/report.md, metrics.json, predictions/ and charts")
    return EXIT_OK
