"""Malformed replies and inputs at the parse points: one clear outcome, never a crash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from t2rag.index.importer import MAX_TRIPLES_PER_CHUNK, clean_triples_counted
from t2rag.llm.openai_compat import OpenAICompatLLM
from t2rag.llm.scripted import ScriptedLLM
from t2rag.llm.structured import clean_text, parse_json_lenient, scalar_text
from t2rag.query.resolve import validate
from t2rag.query.retrieve import Evidence
from t2rag.query.state import QueryState, QueryTriple, initial_state
from t2rag.query.synthesize import synthesize
from t2rag.types import Chunk, PropositionHit, Triple, Usage

STATE = initial_state([QueryTriple("Kell Bridge", "designed by", "?answer")])
EVIDENCE = Evidence(propositions=(PropositionHit("p", "Kell Bridge designed by Ortiz",
                                                 Triple("Kell Bridge", "designed by", "Ortiz"), ("c",)),))


def test_deeply_nested_json_is_a_parse_error_not_a_recursion_error() -> None:
    from t2rag.errors import ParseError

    with pytest.raises(ParseError):
        parse_json_lenient("[" * 5_000)


@pytest.mark.parametrize(("value", "expected"), [
    (None, None), (True, None), (float("nan"), None), (float("inf"), None), ({"a": 1}, None), ([1], None),
    ("  Lena \n Ortiz ", "Lena Ortiz"), (1931, "1931"), (2.5, "2.5"),
])
def test_scalar_text(value: Any, expected: str | None) -> None:
    assert scalar_text(value) == expected


def test_content_shapes_and_lone_surrogates_become_text() -> None:
    assert clean_text([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]) == "ab"
    assert clean_text(42) == "42" and clean_text(None) == ""
    assert clean_text("x\ud800y").encode("utf-8")  # encodable


def test_openai_reply_with_odd_content_and_usage_types() -> None:
    llm = OpenAICompatLLM("m", base_url="http://127.0.0.1:9/v1", api_key="k")
    body = {"choices": [{"message": {"content": 12}}], "usage": {"prompt_tokens": "many", "completion_tokens": -1,
                                                                    "prompt_tokens_details": [1]}}
    c = llm._completion(body, True, 0.1)
    assert c.text == "12" and c.prompt_tokens == 0 and c.completion_tokens == 0 and c.parsed == 12


@pytest.mark.parametrize(("value", "reason"), [
    (None, "placeholder or value missing"), (float("nan"), "placeholder or value missing"),
    ("Paris ?x", "value contains a placeholder"), ("x" * 500, "value over 200 characters"),
])
def test_bad_binding_values_are_dropped(value: Any, reason: str) -> None:
    r = validate([{"placeholder": "?answer", "value": value, "evidence": [1]}], STATE, EVIDENCE, 1)
    assert r.bindings == () and r.dropped[0].reason == reason


@pytest.mark.parametrize("reply", ['{"answer": null}', '{"answer": NaN}', '{"answer": ["a"]}'])
def test_an_answer_of_the_wrong_shape_is_empty_not_its_json(reply: str) -> None:
    s = synthesize(ScriptedLLM(default=reply), "Q?", QueryState(), natural=True)
    assert s.answer == "" and s.error


def test_prose_answer_is_still_used() -> None:
    assert synthesize(ScriptedLLM(default="Lena Ortiz\nbecause"), "Q?", QueryState(), natural=True).answer == \
        "Lena Ortiz"


def test_a_copied_example_answer_is_asked_once_more() -> None:
    from t2rag.query.synthesize import read_passages

    echo, right = '{"reasoning": "", "answer": "1931"}', '{"reasoning": "", "answer": "1871"}'
    passages = [Chunk.make("Harbour", "The harbour of Sighs was rebuilt in 1871.")]
    def without_example(messages: list[dict[str, str]]) -> str:  # asked again without the example
        return right if '"answer": "1931"' not in messages[0]["content"] else echo

    llm, usage = ScriptedLLM(default=without_example), Usage()
    assert read_passages(llm, "When was the harbour rebuilt?", passages, usage=usage).answer == "1871"
    assert len(llm.calls) == 2 and usage.stages["read"].calls == 2
    assert "Example reply" in llm.calls[0]["messages"][0]["content"]
    assert "Example reply" not in llm.calls[1]["messages"][0]["content"]
    llm = ScriptedLLM(default=without_example)  # the answer step too
    assert synthesize(llm, "When?", QueryState(), natural=False, chunks=passages).answer == "1871"
    # the example's value is a fine answer when the passages say it: no second call
    llm = ScriptedLLM(default=echo)
    built = [Chunk.make("Bridge", "The Kell Bridge was built in 1931.")]
    assert read_passages(llm, "When was it built?", built).answer == "1931" and len(llm.calls) == 1
    # a name from the example's reasoning, not its answer, is a copy too; yes/no never is
    name = '{"reasoning": "", "answer": "Lena Ortiz"}'
    llm = ScriptedLLM(default=lambda m: name if "Lena Ortiz" in m[0]["content"] else right)
    assert synthesize(llm, "Who?", QueryState(), natural=False, chunks=passages).answer == "1871"
    llm = ScriptedLLM(default='{"reasoning": "", "answer": "no"}')
    assert read_passages(llm, "Was it rebuilt?", passages).answer == "no" and len(llm.calls) == 1


def test_runaway_extractions_are_bounded() -> None:
    many = [[f"S{i}", "is", f"O{i}"] for i in range(200_000)]
    kept, dropped = clean_triples_counted(many)
    assert len(kept) == MAX_TRIPLES_PER_CHUNK and dropped == 200_000 - MAX_TRIPLES_PER_CHUNK
    kept, dropped = clean_triples_counted([["S", "is", "x" * 1_000_000], [None, "is", "x"], ["S", "is", None]])
    assert kept == [] and dropped == 3


def test_question_limits(tmp_path: Path) -> None:
    from t2rag.api import MAX_QUESTION_CHARS, check_question
    from t2rag.errors import InputError

    assert check_question("  Who \n is? ") == "Who is?"
    for bad in ("", "   \n", "x" * (MAX_QUESTION_CHARS + 1), "caf\udce9?"):
        with pytest.raises(InputError):
            check_question(bad)



def test_credentials_in_a_base_url_are_redacted() -> None:
    from t2rag.redact import redact

    assert redact("http://user:pw@example.test:8080/v1") == "http://***@example.test:8080/v1"
    assert redact("http://example.test/v1") == "http://example.test/v1"


def test_terminal_escapes_in_titles_are_shown_not_run() -> None:
    from t2rag.cli.common import printable

    assert printable("Title\x1b]0;pwned\x07 ok") == "Title\\x1b]0;pwned\\x07 ok"


def test_damaged_vectors_and_orphan_temp_files_heal(tmp_path: Path) -> None:
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex
    from t2rag.index.corpus import Document
    from t2rag.index.importer import Extraction

    d = tmp_path / "ix"
    with TripleIndex.create(d, embedder=HashingEmbedder()) as ix:
        ix.add([Document("A", "A is B.")], imported={"A\nA is B.": Extraction([], [Triple("A", "is", "B")])})
    (d / "vectors.faiss").write_bytes(b"garbage")
    (d / ".vectors-123.tmp").write_bytes(b"half")
    with TripleIndex.create(d, embedder=HashingEmbedder()) as ix:
        assert ix.store.search(ix.embedder.embed(["A is B"]), 1)[0]  # rebuilt from SQLite
    assert not (d / ".vectors-123.tmp").exists()


def test_an_empty_corpus_indexes_nothing_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t2rag.cli import main

    (tmp_path / "empty.json").write_text("[]")
    code = main(["index", str(tmp_path / "ix"), str(tmp_path / "empty.json"), "--llm", "none",
                 "--embedder", "hashing"])
    assert code == 1 and "holds no documents" in capsys.readouterr().err


def test_an_index_without_its_manifest_is_not_adopted_by_another_embedder(tmp_path: Path) -> None:
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.errors import IndexMismatchError
    from t2rag.index import Document, TripleIndex

    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(32)) as ix:
        ix.add([Document("Alpha", "Alpha is a town in Borduria.")])
    (tmp_path / "ix" / "manifest.json").unlink()
    with pytest.raises(IndexMismatchError, match="no manifest"):
        TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(64))
    assert not (tmp_path / "ix" / "manifest.json").exists()  # nothing written on the way out


def test_paths_of_the_wrong_kind_are_one_line_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from t2rag.cli import main

    corpus = tmp_path / "c.json"
    corpus.write_text('[{"title": "A", "text": "Alpha is in Borduria."}]')
    index = ["--llm", "none", "--embedder", "hashing", "-q"]
    assert main(["index", str(tmp_path / "ix"), str(corpus), *index]) == 0
    (tmp_path / "binary.json").write_bytes(b"\xd0\xcf\x11\xe0 not text \xff")
    (tmp_path / "q.json").write_text('["Where is Alpha?"]')
    (tmp_path / "outdir").mkdir()
    blocker = tmp_path / "blocker"
    blocker.write_text("a file")
    cases = [
        (["index", str(corpus), str(corpus), *index], 1, "is a file"),
        (["index", str(blocker / "ix"), str(corpus), *index], 1, "error"),
        (["ask", str(tmp_path / "ix"), "--questions", str(tmp_path / "binary.json"), "--out",
          str(tmp_path / "o.jsonl"), "--llm", "scripted"], 1, "not UTF-8"),
        (["ask", str(tmp_path / "ix"), "--questions", str(tmp_path / "q.json"), "--out", str(tmp_path / "outdir"),
          "--llm", "scripted"], 2, "is a directory"),
    ]
    for argv, code, says in cases:
        assert main(argv) == code, argv
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1, err


@pytest.mark.parametrize("damage", ["header", "emptied", "deleted"])
def test_a_damaged_database_is_one_line_for_every_command(damage: str, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    from t2rag.cli import main

    corpus = tmp_path / "c.json"
    corpus.write_text('[{"title": "A", "text": "Alpha is in Borduria."}]')
    ix, db = tmp_path / "ix", tmp_path / "ix" / "meta.sqlite"
    assert main(["index", str(ix), str(corpus), "--llm", "none", "--embedder", "hashing", "-q"]) == 0
    if damage == "header":
        with db.open("r+b") as f:
            f.write(b"not a database!!")
    elif damage == "emptied":
        db.write_bytes(b"")
    else:
        db.unlink()
    for argv in (["inspect", str(ix)], ["ask", str(ix), "Where is Alpha?", "--llm", "scripted"],
                 ["export-openie", str(ix), str(tmp_path / "o.json")]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err
        assert "meta.sqlite" in err and err.count("\n") == 1, err
    assert (damage == "deleted") == (not db.exists())  # a reader creates nothing


def test_lone_surrogates_and_wrong_shapes_in_input_files(tmp_path: Path) -> None:
    import json

    from t2rag.errors import InputError
    from t2rag.index import load_corpus, load_openie

    (tmp_path / "c.json").write_text('[{"title": "S", "text": "bad \\ud800 text"}]')
    with pytest.raises(InputError, match="lone surrogate"):
        load_corpus(tmp_path / "c.json")
    for field, value in (("extracted_entities", 5), ("extracted_triples", "abc")):
        doc = {"passage": "A\nx", "extracted_entities": ["A"], "extracted_triples": [], field: value}
        (tmp_path / "o.json").write_text(json.dumps({"docs": [doc]}))
        with pytest.raises(InputError, match=f"{field} is a"):
            load_openie(tmp_path / "o.json")
    (tmp_path / "o.json").write_text('{"docs": [{"passage": "A\\nx", "extracted_entities": ["A", "\\ud800"], '
                                     '"extracted_triples": [["A", "is", "\\ud800x"], ["A", "is", "y"]]}]}')
    ex = load_openie(tmp_path / "o.json")["A\nx"]
    assert ex.entities == ["A"] and [t.object for t in ex.triples] == ["y"]


@pytest.mark.parametrize("url", [
    "postgresql://user:S3cretPW@localhost/db",
    "postgresql://user:S3cretPW@localhost:notaport/db",
    "postgresql://user:S3cretPW@localhost:99999/db",
    "postgresql://user:S3cretPW@[::1/db",
    "postgres://user:S3cret@PW@host:5432/db?sslmode=require",
    "postgresql://user@localhost/db?password=S3cretPW&sslmode=disable",
    "postgresql:///db?host=/tmp&PASSWORD=S3cretPW",
    "host=localhost user=u password=S3cretPW dbname=db",
    "host=localhost password='S3cret PW' dbname=db",
    "cannot connect to postgresql://u:S3cretPW@h/db: refused",
])
def test_redact_masks_every_url_form_and_never_raises(url: str) -> None:
    from t2rag.redact import redact

    shown = redact(url)
    assert "S3cret" not in shown and "***" in shown
    assert redact("http://example.test/v1?q=1") == "http://example.test/v1?q=1"


@pytest.mark.parametrize("command", [
    ["inspect", "{url}"], ["ask", "{url}", "q?"], ["serve", "{url}", "--port", "0"], ["mcp", "{url}"],
    ["delete", "{url}", "--doc", "x"], ["export-openie", "{url}", "{tmp}/o.json"], ["copy", "{tmp}/ix", "{url}"],
    ["index", "{url}", "{tmp}/c.json", "--llm", "none", "--embedder", "hashing"],
    ["inspect", "postgresql://u:S3cretPW@localhost:notaport/db"], ["inspect", "postgresql://u:S3cretPW@[::1/db"],
])
def test_no_command_prints_a_database_password(command: list[str], tmp_path: Path, capsys: Any) -> None:
    from t2rag.cli import main
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex

    pytest.importorskip("psycopg")
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()):
        pass
    (tmp_path / "c.json").write_text('[{"title": "A", "text": "A is a town."}]')
    url = "postgresql://user:S3cretPW@127.0.0.1:1/db?password=S3cretPW"  # nothing listens on port 1
    argv = [a.format(url=url, tmp=tmp_path) for a in command]
    code = main(argv)
    out, err = capsys.readouterr()
    assert code != 0 and "S3cret" not in out + err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("setting", ["decompose_examples=2.5", "k_chunks=2.5", "top_m=2.5", "rounds=NaN",
                                     "rounds=1e400", "rounds=2.5", "rounds=0", "rounds=11", "hybrid=\"yes\""])
def test_bad_config_values_are_one_line_before_a_model_loads(setting: str, tmp_path: Path, capsys: Any) -> None:
    from t2rag.cli import main
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex

    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()):
        pass
    code = main(["ask", str(tmp_path / "ix"), "q?", "--set", setting, "--llm", "local:/nonexistent.gguf"])
    err = capsys.readouterr().err
    assert code in (1, 2) and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert setting.split("=")[0] in err


@pytest.mark.parametrize("sep", ["\u2028", "\u0085", "\x0c", "\u2029"])
def test_a_corpus_line_with_a_raw_line_separator_in_a_string_loads(sep: str, tmp_path: Path) -> None:
    from t2rag.index import load_corpus

    p = tmp_path / "c.jsonl"
    rows = [{"title": "A", "text": f"one{sep}two"}, {"title": "B", "text": "three"}]
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    assert [d.title for d in load_corpus(p)] == ["A", "B"]


def test_a_huge_integer_in_a_corpus_is_one_input_error(tmp_path: Path) -> None:
    from t2rag.errors import InputError
    from t2rag.index import load_corpus

    p = tmp_path / "c.json"
    p.write_text('[{"title": "A", "text": "x", "n": ' + "1" * 5000 + "}]")
    with pytest.raises(InputError, match="out of range"):
        load_corpus(p)


def test_an_openie_idx_naming_another_passage_gives_it_nothing(tmp_path: Path) -> None:
    from t2rag.index import load_openie
    from t2rag.types import Chunk

    a, b = Chunk.make("A", "A is a town."), Chunk.make("B", "B is a river.")
    doc = {"idx": b.id, "passage": a.passage, "extracted_entities": ["A"], "extracted_triples": [["A", "is", "town"]]}
    p = tmp_path / "openie.json"
    p.write_text(json.dumps({"docs": [doc]}))
    got = load_openie(p)
    assert b.id not in got and got[a.passage].triples


def test_tampered_index_files_are_one_line_each(tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from t2rag.cli import main
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex

    with TripleIndex.create(tmp_path / "ok", embedder=HashingEmbedder()):
        pass
    cases = {"list_config": lambda d: (d / "manifest.json").write_text(
                 json.dumps({**json.loads((d / "manifest.json").read_text()), "config": [1]})),
             "not_utf8": lambda d: (d / "manifest.json").write_bytes(b"\xff\xfe{"),
             "db_is_a_dir": lambda d: ((d / "meta.sqlite").unlink(), (d / "meta.sqlite").mkdir())}
    for name, tamper in cases.items():
        shutil.copytree(tmp_path / "ok", tmp_path / name)
        tamper(tmp_path / name)
        assert main(["inspect", str(tmp_path / name)]) == 1, name
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err

    import faiss

    def full_disk(*_: Any) -> None:
        raise RuntimeError("Error in faiss::FileIOWriter: No space left on device")

    monkeypatch.setattr(faiss, "write_index", full_disk)
    from t2rag.errors import InputError
    from t2rag.index.vectors import save_atomic

    with pytest.raises(InputError, match="intact"):
        save_atomic(faiss.IndexFlatIP(4), tmp_path / "ok" / "vectors.faiss", 1)
    assert not list((tmp_path / "ok").glob(".vectors-*"))


def test_a_title_given_twice_is_deleted_once(tmp_path: Path) -> None:
    from conftest import openie_llm
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import Document
    from t2rag.index.builder import TripleIndex

    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document("T", "T is a town."), Document("U", "U is a river.")], llm=openie_llm())
        r = ix.delete(["T", "T"])
    assert r["documents"] == 1 and r["not_found"] == 0


def test_a_full_disk_leaves_no_manifest_temp_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from t2rag.index.manifest import Manifest

    m = Manifest(embedder="hashing", dim=4, config={})
    real = Path.write_text

    def full(self: Path, *a: Any, **k: Any) -> int:
        if self.name.endswith(".tmp"):
            real(self, "{half")
            raise OSError(28, "No space left on device")
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "write_text", full)
    with pytest.raises(OSError):
        m.save(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_an_index_on_a_read_only_mount_is_read(tmp_path: Path, capsys: Any) -> None:
    import subprocess

    from conftest import openie_llm
    from t2rag.cli import main
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import Document
    from t2rag.index.builder import TripleIndex

    src, mnt = tmp_path / "src", tmp_path / "ro"
    with TripleIndex.create(src, embedder=HashingEmbedder()) as ix:
        ix.add([Document("Alpha", "Alpha is a town in Borduria.")], llm=openie_llm())
    mnt.mkdir()
    bind = subprocess.run(["mount", "--bind", str(src), str(mnt)], capture_output=True)
    if bind.returncode != 0:
        pytest.skip("cannot bind-mount here (needs root)")
    try:
        if subprocess.run(["mount", "-o", "remount,bind,ro", str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("cannot remount read-only here")
        assert main(["inspect", str(mnt)]) == 0
        assert "chunks=1" in capsys.readouterr().out
        with TripleIndex.open(mnt) as ix:
            hits = ix.store.search(ix.embedder.embed(["Alpha town"]), 1)[0]
            assert hits and not ix.store.writer
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
