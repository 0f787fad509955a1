"""The library's version, read once from the installed package's metadata (pyproject.toml)."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    VERSION = version("t2rag")
except PackageNotFoundError:  # run from a source tree that was never installed
    VERSION = "0+unknown"
