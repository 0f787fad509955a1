"""The t2rag command: every subcommand registered here, each module's errors become one line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from t2rag.cli.common import EXIT_OK, EXIT_USAGE, EXIT_USER
from t2rag.errors import T2RAGError, UsageError
from t2rag.redact import redact
from t2rag.version import VERSION


def commands() -> list[Callable[[Any], None]]:
    """Each command module's ``register``, in the order ``t2rag --help`` lists them. Modules load
    their heavy parts inside the commands, so ``t2rag --help`` stays fast; the MCP server needs
    the optional ``mcp`` package and is left out without it."""
    from t2rag.cli import bench, demo, index, query, serve, settings

    regs = [index.register, query.register, settings.register, demo.register, bench.register, serve.register]
    try:
        from t2rag.cli import mcp
    except ImportError:
        return regs
    return [*regs, mcp.register]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t2rag", description="Multi-hop QA over your documents with triplet-driven "
                                     "thinking. Index a corpus, then ask questions.")
    parser.add_argument("--version", action="version", version=f"t2rag {VERSION}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in commands():
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as e:  # every message passes redact: a location may carry a password
        print(f"t2rag: error: {redact(str(e))}", file=sys.stderr)
        return EXIT_USAGE
    except T2RAGError as e:
        print(f"t2rag: error: {redact(str(e))}", file=sys.stderr)
        return EXIT_USER
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:  # a path that is a directory, not writable, gone: the user's to fix
        where = f": {e.filename}" if e.filename else ""
        print(f"t2rag: error: {redact(f'{e.strerror or e}{where}')}", file=sys.stderr)
        return EXIT_USER
    except KeyboardInterrupt:
        print("t2rag: interrupted; committed work is kept, run the same command to resume", file=sys.stderr)
        return 130

