"""The ``mcp`` command: serve an index to agents over MCP on stdio (needs the optional ``mcp`` package)."""

from __future__ import annotations

import argparse
from typing import Any

from t2rag.cli import common as cli_common
from t2rag.cli.common import INDEX_HELP
from t2rag.service.mcp_server import build_server, serve_stdio


def cmd_mcp(args: argparse.Namespace) -> int:
    with cli_common.open_service(args) as service:
        serve_stdio(build_server(service, allow_writes=args.allow_writes))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("mcp", help="serve an index to agents over MCP (stdio): tools ask, search_facts, read_passage")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    cli_common.llm_args(p)
    p.add_argument("--no-log", action="store_true", help="do not record answers in the index's log (t2rag logs)")
    p.add_argument("--allow-writes", action="store_true",
                   help="also offer add_documents, delete_documents and job_status (off: the agent can only read)")
    p.set_defaults(func=cmd_mcp)
