"""LLM backends behind one protocol, chosen by a spec string."""

from __future__ import annotations

from t2rag.llm.base import LLM, parallelism
from t2rag.llm.cache import CachedLLM
from t2rag.llm.registry import DEFAULT_LLM, get_llm
from t2rag.llm.scripted import ScriptedLLM, Seq
from t2rag.llm.structured import ask_json, parse_json_lenient

__all__ = [
    "DEFAULT_LLM",
    "LLM",
    "CachedLLM",
    "ScriptedLLM",
    "Seq",
    "ask_json",
    "get_llm",
    "parallelism",
    "parse_json_lenient",
]
