"""Prompts are package data, one file each, rendered strictly and versioned by hash.

A prompt file has a ``### system`` section and a ``### user`` section. Variables are
written ``$name`` (``$$`` for a literal dollar); rendering with a missing variable is an
error, never a silently empty slot. Stable instructions come first and variable content
last, so a local model's prompt cache can reuse the prefix.
"""

from __future__ import annotations

import hashlib
import json
import string
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from t2rag.errors import ConfigError
from t2rag.types import Chunk, Message


@dataclass(frozen=True)
class Prompt:
    name: str
    system: str
    user: str

    @property
    def hash(self) -> str:
        return _digest(self.system + "\x00" + self.user)

    def render(self, **variables: object) -> list[Message]:
        try:
            system = string.Template(self.system).substitute(variables)
            user = string.Template(self.user).substitute(variables)
        except KeyError as e:
            raise ConfigError(f"prompt {self.name!r} needs variable {e.args[0]!r}") from None
        except ValueError as e:
            raise ConfigError(f"prompt {self.name!r} is malformed: {e}") from None
        messages: list[Message] = []
        if system.strip():
            messages.append({"role": "system", "content": system.strip()})
        messages.append({"role": "user", "content": user.strip()})
        return messages


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]


@cache
def _read(filename: str, what: str) -> str:
    """A file of this package; a missing one is a ConfigError naming ``what``."""
    try:
        return resources.files(__package__).joinpath(filename).read_text("utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no {what}") from None


@cache
def load(name: str) -> Prompt:
    """Load ``prompts/NAME.txt`` from the package."""
    text = _read(f"{name}.txt", f"prompt named {name!r}")
    sections: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        if line.startswith("### "):
            current = line[4:].strip().lower()
            sections[current] = []
        elif current is not None:
            sections[current].append(line)
    if "user" not in sections or set(sections) - {"system", "user"}:
        raise ConfigError(f"prompt {name!r} must have '### system' and '### user' sections only")
    return Prompt(name, "\n".join(sections.get("system", [])), "\n".join(sections["user"]))


def _data_text(name: str) -> str:
    return _read(f"{name}.json", f"prompt data named {name!r}")


def load_data(name: str) -> Any:
    """Parse ``prompts/NAME.json``: data a prompt is rendered with (such as worked examples)."""
    return json.loads(_data_text(name))


def prompt_hashes(names: list[str], data: tuple[str, ...] = ()) -> dict[str, str]:
    """The version of each named prompt and of each prompt ``data`` file."""
    return {n: load(n).hash for n in names} | {d: _digest(_data_text(d)) for d in data}


def numbered_passages(chunks: Sequence[Chunk]) -> str:
    """Passages as the reading prompts number them: ``[1] text``, blank lines between."""
    return "\n\n".join(f"[{i}] {c.passage}" for i, c in enumerate(chunks, 1))
