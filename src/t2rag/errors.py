"""The error hierarchy: every failure a user can act on is a T2RAGError with a one-line message."""

from __future__ import annotations


class T2RAGError(Exception):
    """Root of every error T2RAG raises on purpose; its message is one line for the user."""


class ConfigError(T2RAGError):
    """A configuration value or key is invalid."""


class InputError(T2RAGError):
    """A user-supplied file (corpus, questions, OpenIE dump) is missing or malformed."""


class ParseError(T2RAGError):
    """LLM output could not be turned into the expected typed value; keeps the raw text."""

    def __init__(self, message: str, raw: str = "") -> None:
        super().__init__(message)
        self.raw = raw


class BackendError(T2RAGError):
    """An LLM or embedding backend failed (dead server, bad key, exhausted retries)."""


class ModelAssetError(BackendError):
    """A bundled model file is missing or does not match its pinned sha256."""


class IndexMismatchError(T2RAGError):
    """An index was opened with an embedder (or format) other than the one it was built with."""


class IndexDamagedError(T2RAGError):
    """The index's database cannot be read: damaged, emptied or deleted."""


class IndexLockedError(T2RAGError):
    """Another process is writing to this index."""


class IndexNotFoundError(T2RAGError):
    """The index directory does not exist or holds no manifest."""


class UsageError(T2RAGError):
    """The command line was used wrongly (exit code 2, like argparse's own errors)."""


class RequestRejected(BackendError):
    """The backend refused this one request (context too long, HTTP 400) but is alive: the
    caller records the failure and goes on with the next request."""
