"""Output paths: special files are written through, symlinks followed, torn JSONL tails repaired."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path
from typing import Any

import pytest

from t2rag.outfile import open_jsonl_for_append, repair_torn_tail, write_text


def _fifo_reader(path: Path) -> tuple[threading.Thread, list[bytes]]:
    got: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as f:
            got.append(f.read())

    t = threading.Thread(target=read, daemon=True)
    t.start()
    return t, got


def test_a_fifo_is_written_through_not_replaced(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader, got = _fifo_reader(fifo)
    write_text(fifo, "hello\n")
    reader.join(5)
    assert got == [b"hello\n"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_device_node_is_written_through_not_replaced(tmp_path: Path) -> None:
    node = tmp_path / "null"
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a private /dev/null
    except (PermissionError, OSError):
        pytest.skip("cannot make a device node here")
    write_text(node, "x" * 1000)
    assert stat.S_ISCHR(os.stat(node).st_mode)
    assert not list(tmp_path.glob(".null.*"))  # no temporary file left beside it


def test_a_symlink_is_followed_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new"


def test_a_regular_file_is_replaced_whole(tmp_path: Path) -> None:
    p = tmp_path / "sub" / "out.json"
    write_text(p, "one")
    write_text(p, "two")
    assert p.read_text() == "two" and [x.name for x in p.parent.iterdir()] == ["out.json"]


def test_a_torn_tail_is_cut_before_appending(tmp_path: Path) -> None:
    p = tmp_path / "a.jsonl"
    p.write_text('{"id": "1"}\n{"id": "2"}\n{"id": "3", "answ')  # a disk that filled mid-line
    with open_jsonl_for_append(p) as f:
        f.write('{"id": "3"}\n')
    assert [json.loads(line)["id"] for line in p.read_text().splitlines()] == ["1", "2", "3"]
    assert not repair_torn_tail(p)  # a whole file is left alone
    p.write_text('{"id": "only", "torn')
    assert repair_torn_tail(p) and p.read_text() == ""


def test_export_openie_to_a_fifo_keeps_the_fifo(tmp_path: Path, capsys: Any) -> None:
    from conftest import openie_llm
    from t2rag.cli import main
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import Document, TripleIndex

    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document("Alpha", "Alpha is a town in Borduria.")], llm=openie_llm())
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    reader, got = _fifo_reader(fifo)
    assert main(["export-openie", str(tmp_path / "ix"), str(fifo)]) == 0
    reader.join(5)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and json.loads(got[0])["docs"]
