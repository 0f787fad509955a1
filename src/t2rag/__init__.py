"""T2RAG: multi-hop question answering over a private corpus with triplet-driven thinking."""

from __future__ import annotations

__version__ = "0.1.0"
