"""Crash safety: a real indexing process killed with SIGKILL resumes to the same final state."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import openie_llm
from t2rag.embed.hashing import HashingEmbedder
from t2rag.index import Document, TripleIndex
from test_index import _state

N_DOCS = 40


def corpus() -> list[Document]:
    return [Document(f"Doc{i}", f"Doc{i} is a town in Region{i % 7}. Founded in {1800 + i} by Person{i}.")
            for i in range(N_DOCS)]


SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from conftest import fake_openie_reply
    from test_resume import corpus
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import TripleIndex
    from t2rag.llm.scripted import ScriptedLLM

    def slow(messages):
        time.sleep(0.02)
        return fake_openie_reply(messages)

    with TripleIndex.create(sys.argv[1], embedder=HashingEmbedder()) as ix:
        ix.add(corpus(), llm=ScriptedLLM(default=slow))
    """
)


def _extracted(directory: Path) -> int:
    try:
        with sqlite3.connect(directory / "meta.sqlite", timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM openie").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_sigkill_mid_build_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    with TripleIndex.create(tmp_path / "clean", embedder=HashingEmbedder()) as ix:
        ix.add(corpus(), llm=openie_llm())

    killed = tmp_path / "killed"
    script = tmp_path / "build.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    proc = subprocess.Popen([sys.executable, str(script), str(killed)])
    deadline = time.monotonic() + 60
    while _extracted(killed) < 10 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = _extracted(killed)
    assert 0 < done < N_DOCS, "the kill should land mid-build"

    llm = openie_llm()
    with TripleIndex.create(killed, embedder=HashingEmbedder()) as ix:
        r = ix.add(corpus(), llm=llm)
    assert r["extracted"] == N_DOCS - done
    assert len(llm.calls) == 2 * (N_DOCS - done)  # no repeated LLM work (two passes per chunk)
    assert _state(killed) == _state(tmp_path / "clean")


COPY_SCRIPT = textwrap.dedent(
    """
    import sys, time
    from t2rag.index.sqlite_store import SqliteStore
    from t2rag.index.transfer import copy_index

    record = SqliteStore.record_openie
    def slow(self, rec):
        time.sleep(0.03)
        record(self, rec)
    SqliteStore.record_openie = slow
    copy_index(sys.argv[1], sys.argv[2])
    """
)


def test_a_killed_copy_is_refused_by_readers_and_resumed_by_the_same_copy(tmp_path: Path, capsys) -> None:
    from t2rag.cli import main

    with TripleIndex.create(tmp_path / "src", embedder=HashingEmbedder()) as ix:
        ix.add(corpus(), llm=openie_llm())
    script = tmp_path / "copier.py"
    script.write_text(COPY_SCRIPT)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path / "src"), str(tmp_path / "dst")])
    deadline = time.time() + 30
    while time.time() < deadline and not (tmp_path / "dst" / "meta.sqlite").exists():
        time.sleep(0.05)
    time.sleep(0.5)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert main(["inspect", str(tmp_path / "dst")]) == 1
    err = capsys.readouterr().err
    assert "a copy of" in err and "did not finish" in err
    assert main(["copy", str(tmp_path / "other"), str(tmp_path / "dst")]) == 1  # another source: refused
    capsys.readouterr()
    assert main(["copy", str(tmp_path / "src"), str(tmp_path / "dst")]) == 0  # the same copy resumes
    assert _state(tmp_path / "dst") == _state(tmp_path / "src")
    assert main(["inspect", str(tmp_path / "dst")]) == 0
    assert main(["copy", str(tmp_path / "src"), str(tmp_path / "dst")]) == 1  # a finished copy is not merged into
