"""Which LLM a command uses when ``--llm`` is not given: the one the index was built with, then
the user's default (``T2RAG_LLM`` / ``T2RAG_BASE_URL``, or ``t2rag defaults`` in a file), then
the bundled local model. Only model names and server URLs are kept, never a key."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from t2rag.errors import ConfigError

ENV_LLM, ENV_BASE_URL = "T2RAG_LLM", "T2RAG_BASE_URL"
BUILTIN = "local"


@dataclass(frozen=True)
class Choice:
    """An LLM spec, the server URL it needs (if any), and where the choice came from."""

    spec: str
    base_url: str | None
    source: str  # "--llm", "the index", ENV_LLM, the defaults file's path, or "built in"


def defaults_file() -> Path:
    """``$XDG_CONFIG_HOME/t2rag/defaults.json`` (``~/.config/t2rag/defaults.json``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "t2rag" / "defaults.json"


def user_default() -> Choice | None:
    """The user's default LLM: the environment first, then the defaults file."""
    if os.environ.get(ENV_LLM):
        return Choice(os.environ[ENV_LLM], os.environ.get(ENV_BASE_URL) or None, ENV_LLM)
    path = defaults_file()
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{path}: not a JSON object of defaults ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("llm"), str):
        raise ConfigError(f"{path}: expected {{\"llm\": SPEC, \"base_url\": URL}}")
    url = data.get("base_url")
    return Choice(data["llm"], url if isinstance(url, str) and url else None, str(path))


def save_user_default(spec: str, base_url: str | None) -> Path:
    path = defaults_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"llm": spec, "base_url": base_url}, indent=2) + "\n", "utf-8")
    return path


def index_llm(manifest: Any) -> Choice | None:
    """The LLM that extracted the index's facts, when it can be reached again by name: the
    bundled models, or an OpenAI-compatible server whose URL the index recorded."""
    name = getattr(manifest, "llm", None) or ""
    kind, _, model = name.partition(":")
    if kind == "local" and model in ("default", "small"):
        return Choice(name, None, "the index")
    if kind == "openai" and model:
        model, at, _host = model.partition("@")
        url = (getattr(manifest, "endpoints", None) or {}).get("llm")
        if at and not url:
            return None  # built against a server the index did not record: not guessed
        return Choice(f"openai:{model}", url if at else None, "the index")
    return None


def choose_llm(given: str | None, base_url: str | None, manifest: Any = None) -> Choice:
    """The LLM to use: ``given`` (``--llm``), else the index's, the user's, the built-in one.
    A ``base_url`` given on the command line always wins over a recorded or default one."""
    if given:
        return Choice(given, base_url, "--llm")
    for choice in (index_llm(manifest) if manifest is not None else None, user_default()):
        if choice is not None:
            return Choice(choice.spec, base_url or choice.base_url, choice.source)
    return Choice(BUILTIN, base_url, "built in")
