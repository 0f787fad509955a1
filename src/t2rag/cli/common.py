"""What every t2rag command shares: exit codes, the LLM options and the model they build, terminal-safe text."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from t2rag.defaults import Choice, choose_llm
from t2rag.errors import UsageError
from t2rag.llm.base import LLM

if TYPE_CHECKING:
    from t2rag.service.served import Service

EXIT_OK, EXIT_USER, EXIT_USAGE = 0, 1, 2
INDEX_HELP = "index directory, or a postgresql://USER@HOST/DB URL (password from PGPASSWORD or ~/.pgpass)"

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def llm_args(p: argparse.ArgumentParser, default: str = "the index's LLM, else $T2RAG_LLM, else local") -> None:
    p.add_argument("--llm", default=None, metavar="SPEC",
                   help="local[:small|PATH.gguf], openai:MODEL (key from OPENAI_API_KEY), ollama:MODEL (a local "
                   f"Ollama server, no key), or scripted (default: {default}; see t2rag defaults)")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. a vLLM or Ollama server's /v1 URL "
                   "(also used by an openai: embedder)")
    p.add_argument("--no-cache", action="store_true", help="do not use the persistent LLM response cache")
    p.add_argument("--parallel", type=int, default=None, metavar="N",
                   help="concurrent LLM requests (remote backends) or decoding slots (local; with 2 or more, "
                        "requests decoded together can get other greedy replies from run to run, while 1 "
                        "slot repeats them exactly)")
    p.add_argument("--context", type=int, default=None, metavar="TOKENS",
                   help="the model's context window: the size the local model loads with (8192), or a remote "
                   "server's (unset: not known); prompts that carry passages keep the best ones that fit")


def check_llm_args(args: argparse.Namespace) -> None:
    """Usage errors in the LLM options, reported before anything loads."""
    if args.parallel is not None and args.parallel < 1:
        raise UsageError("--parallel must be at least 1")
    if args.context is not None and args.context < 256:
        raise UsageError("--context must be at least 256 tokens")
    remote_embedder = str(getattr(args, "embedder", None) or "").startswith("openai:")
    if args.base_url and args.llm is not None and not _remote(args.llm) and not remote_embedder:
        raise UsageError("--base-url only applies to --llm openai:MODEL or ollama:MODEL, or --embedder "
                         "openai:MODEL (vLLM is reached as openai:MODEL with its /v1 URL)")


def _remote(spec: object) -> bool:
    """Whether ``spec`` names an OpenAI-compatible server (the backends a base URL applies to)."""
    from t2rag.llm.registry import REMOTE

    kind, colon, _ = str(spec).partition(":")
    return bool(colon) and kind in REMOTE


def settle_llm(args: argparse.Namespace, manifest: Any = None) -> Choice:
    """Fill in ``args.llm`` (and the server URL it needs) when ``--llm`` was not given: the
    index's own LLM, the user's default, or the bundled model (``t2rag.defaults``); says so
    on stderr when the choice came from the index or a default."""
    choice = choose_llm(args.llm, args.base_url, manifest)
    if choice.source not in ("--llm", "built in") and not getattr(args, "quiet", False):
        print(f"t2rag: LLM {choice.spec} (from {choice.source}; --llm to use another)", file=sys.stderr)
    args.llm = choice.spec
    if choice.base_url and _remote(choice.spec):
        args.base_url = choice.base_url
    return choice


def embedder_from_args(args: argparse.Namespace) -> Any:
    """The ``--embedder`` spec, built with ``--base-url`` when it names an OpenAI-compatible
    embedder: a private server's URL must reach the embedder too, or the documents would go
    to the default public endpoint."""
    spec = getattr(args, "embedder", None)
    if spec and str(spec).startswith("openai:") and args.base_url:
        from t2rag.embed.registry import get_embedder

        return get_embedder(spec, base_url=args.base_url)
    return spec


def llm_from_args(args: argparse.Namespace, manifest: Any = None) -> LLM:
    """The LLM the command's options name (or ``settle_llm`` chooses, given the index's
    ``manifest``), behind the response cache unless --no-cache."""
    from t2rag.llm.registry import get_llm

    if args.llm is None:
        settle_llm(args, manifest)
    check_llm_args(args)
    return get_llm(args.llm, parallel=args.parallel, base_url=args.base_url if _remote(args.llm) else None,
                   context=args.context, cache=not args.no_cache)


def printable(text: str) -> str:
    """Text from documents made safe for a terminal: control characters (escape sequences
    that could move the cursor or retitle the window) shown as ``\\xNN``."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@contextmanager
def open_service(args: argparse.Namespace, **kwargs: Any) -> Iterator[Service]:
    """The served engine for a command's ``index`` and LLM options, closed on exit; a missing
    index is reported before a model loads."""
    from t2rag.index.store import require_manifest
    from t2rag.service.served import Service

    manifest = require_manifest(args.index)  # a directory or a postgresql:// URL
    service = Service(args.index, llm_from_args(args, manifest), log=not getattr(args, "no_log", False), **kwargs)
    try:
        yield service
    finally:
        service.close()
