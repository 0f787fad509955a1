"""The ``serve`` command: run the REST API and trace viewer on uvicorn."""

from __future__ import annotations

import argparse
import ipaddress
import os
from typing import Any

from t2rag.cli import common as cli_common
from t2rag.cli.common import INDEX_HELP
from t2rag.errors import T2RAGError, UsageError
from t2rag.redact import redact

TOKEN_ENV = "T2RAG_API_TOKEN"
READ_TIMEOUT_S = 30.0  # a client's time to send one whole request (service/deadline.py)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str, extra: list[str]) -> tuple[str, ...]:
    """The Host header values a server bound to ``host`` answers: the loopback names on a
    loopback binding, the bound address on another (any name on 0.0.0.0 or ::, where the
    token guards), and ``extra`` (--allow-host) in every case."""
    if is_loopback(host):
        names = ["127.0.0.1", "localhost", "::1", "[::1]", host]
    elif host in ("0.0.0.0", "::", ""):
        names = [] if extra else ["*"]
    else:
        names = [host, f"[{host}]" if ":" in host else host]
    return tuple(dict.fromkeys(names + extra))


def check_port_free(host: str, port: int) -> None:
    """One clear line when ``host:port`` cannot be bound (another server holds it)."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as e:
            why = e.strerror or str(e)
            raise T2RAGError(f"cannot serve on {host}:{port}: {why} (another server? choose --port)") from None


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from t2rag.service.app import Settings, create_app
    from t2rag.service.deadline import with_read_timeout

    token = os.environ.get(TOKEN_ENV)
    if token is not None and not token.strip():
        raise T2RAGError(f"{TOKEN_ENV} is set but blank: set a token, or unset it (loopback only)")
    token = token.strip() if token else None
    if not is_loopback(args.host) and token is None:
        raise T2RAGError(f"binding {args.host} (not loopback) needs a bearer token: set {TOKEN_ENV}")
    if args.port < 0 or args.port > 65535 or args.max_waiting < 0 or args.timeout <= 0 or args.read_timeout <= 0:
        raise T2RAGError("--port must be 0..65535, --max-waiting >= 0 and --timeout and --read-timeout > 0")
    check_port_free(args.host, args.port)  # before a model loads, and never as a raw uvicorn error
    settings = Settings(token=token, max_body=args.max_body, max_upload=args.max_upload,
                        max_question=args.max_question,
                        timeout_s=args.timeout, cors_origins=tuple(args.cors or ()),
                        allowed_hosts=allowed_hosts(args.host, args.allow_host or []))
    with cli_common.open_service(args, max_waiting=args.max_waiting) as service:
        print(f"t2rag: serving {redact(str(args.index))} on http://{args.host}:{args.port}/ "
              f"(API docs at /docs; {'bearer token required' if token else 'no token'})", flush=True)
        uvicorn.run(create_app(service, settings), host=args.host, port=args.port, log_level="warning",
                    access_log=False,  # access logs off: they would carry query strings
                    http=with_read_timeout(args.read_timeout))
    return 0


def cmd_endpoints(args: argparse.Namespace) -> int:
    from pathlib import Path

    from t2rag.llm.endpoints import run_endpoints
    from t2rag.llm.local import DEFAULT_CONTEXT

    llm = None if args.llm == "none" else args.llm
    if llm is None and args.embedder == "none":
        raise UsageError("nothing to serve: give --llm or --embedder")
    if llm is not None and llm.partition(":")[0] != "local":
        raise UsageError("--llm must be local[:default|small|PATH.gguf] or none")
    if (args.parallel is not None and args.parallel < 1) or (args.context is not None and args.context < 256):
        raise UsageError("--parallel must be at least 1 and --context at least 256")
    run_endpoints(llm.partition(":")[2] or "default" if llm else None,
                  None if args.embedder == "none" else args.embedder, n_ctx=args.context or DEFAULT_CONTEXT,
                  n_parallel=args.parallel or 1, threads=args.threads,
                  ready_file=Path(args.ready_file) if args.ready_file else None)
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="serve an index over HTTP: REST API, streamed events, trace viewer")
    p.add_argument("index", metavar="INDEX", help=INDEX_HELP)
    p.add_argument("--host", default="127.0.0.1", help=f"address to bind (127.0.0.1; others need {TOKEN_ENV})")
    p.add_argument("--port", type=int, default=8000, help="port (8000)")
    p.add_argument("--max-waiting", type=int, default=32, metavar="N",
                   help="questions that may wait for a slot before 429 (32)")
    p.add_argument("--timeout", type=float, default=600.0, metavar="S", help="seconds per question before 504 (600)")
    p.add_argument("--read-timeout", type=float, default=READ_TIMEOUT_S, metavar="S",
                   help=f"seconds a client has to send a whole request before it is cut off ({READ_TIMEOUT_S:g})")
    p.add_argument("--max-body", type=int, default=1_000_000, metavar="BYTES", help="request body limit (1 MB)")
    p.add_argument("--max-upload", type=int, default=50_000_000, metavar="BYTES",
                   help="uploaded document file limit (50 MB)")
    p.add_argument("--max-question", type=int, default=2_000, metavar="CHARS", help="question length limit (2000)")
    p.add_argument("--cors", action="append", metavar="ORIGIN", help="allow this browser origin (repeatable; off)")
    p.add_argument("--allow-host", action="append", metavar="NAME",
                   help="also answer requests whose Host header names NAME (repeatable; by default only the bound "
                        "address, and on loopback its names: a guard against DNS rebinding)")
    cli_common.llm_args(p)
    p.add_argument("--no-log", action="store_true", help="do not record answers in the index's log (t2rag logs)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("endpoints", help="serve a local GGUF and an embedder as OpenAI-compatible endpoints "
                       "on 127.0.0.1 (for other programs, e.g. the benchmark's peer systems)")
    p.add_argument("--llm", default="local", metavar="SPEC", help="local[:small|PATH.gguf], or none (default: local)")
    p.add_argument("--embedder", default="minilm", metavar="SPEC", help="an embedder spec, or none (default: minilm)")
    p.add_argument("--context", type=int, default=None, metavar="TOKENS", help="context per slot (8192)")
    p.add_argument("--parallel", type=int, default=None, metavar="N", help="decoding slots (1)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="llama.cpp threads (all cores)")
    p.add_argument("--ready-file", metavar="FILE", help="write the URLs and pid as JSON here once both answer")
    p.set_defaults(func=cmd_endpoints)
