"""The offline half: corpus input, chunking, OpenIE records, store round-trips, add/delete."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import openie_llm
from t2rag.config import ChunkConfig, IndexConfig, OpenIEConfig, StoreConfig
from t2rag.embed.hashing import HashingEmbedder
from t2rag.errors import IndexLockedError, IndexMismatchError, IndexNotFoundError, InputError
from t2rag.index import Document, TripleIndex, load_corpus, load_openie
from t2rag.index.chunking import chunk_document
from t2rag.index.openie import MAX_CHARS, MIN_ITEM_BOUND, extract, item_bound
from t2rag.llm.scripted import ScriptedLLM
from t2rag.types import Chunk, Proposition, Triple


def test_corpus_formats(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps([{"title": "A", "text": "x"}, {"title": "B", "text": "y"}]))
    (tmp_path / "c.jsonl").write_text('{"title": "A", "text": "x"}\n\n{"title": "B", "text": "y"}\n')
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "a.txt").write_text("x")
    (d / "sub" / "b.md").write_text("y")
    (d / "ignored.pdf").write_text("z")
    assert [x.title for x in load_corpus(tmp_path / "c.json")] == ["A", "B"]
    assert [x.title for x in load_corpus(tmp_path / "c.jsonl")] == ["A", "B"]
    assert [x.title for x in load_corpus(d)] == ["a", "sub/b"]


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.json", "{not json", "invalid JSON"),
        ("obj.json", '{"title": "x"}', "expected a JSON list"),
        ("notext.json", '[{"title": "x"}]', "record 0 has no string 'text'"),
        ("bad.jsonl", '{"text": "a"}\n{oops\n', "bad.jsonl:2: invalid JSON"),
    ],
)
def test_corpus_errors_are_one_line(tmp_path: Path, name: str, content: str, message: str) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError, match=message) as e:
        load_corpus(tmp_path / name)
    assert "\n" not in str(e.value)


def test_chunker_sizes_and_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(50))
    chunks = chunk_document(Document("T", text), ChunkConfig(size=20, overlap=5))
    assert [c.text.split()[0] for c in chunks] == ["w0", "w15", "w30"]
    assert all(len(c.text.split()) <= 20 for c in chunks) and chunks[-1].text.endswith("w49")
    assert chunk_document(Document("T", "short text"), ChunkConfig()) == [Chunk.make("T", "short text")]


def test_chunk_ids_match_hipporag_scheme() -> None:
    import hashlib

    c = Chunk.make("Title", "Body")
    assert c.id == "chunk-" + hashlib.md5(b"Title\nBody").hexdigest()


def test_openie_two_pass_and_single() -> None:
    chunk = Chunk.make("Alpha", "Alpha is in Borduria since 1820.")
    rec = extract(openie_llm(), chunk, OpenIEConfig(mode="two_pass"))
    assert rec.error is None and rec.entities[0] == "Alpha"
    assert Triple("Alpha", "mentions", "Borduria") in rec.triples
    llm = ScriptedLLM(default={"triples": [["Alpha", "is in", "Borduria"], ["bad"], ["", "x", "y"]]})
    rec = extract(llm, chunk, OpenIEConfig(mode="single"))
    assert rec.triples == [Triple("Alpha", "is in", "Borduria")] and len(llm.calls) == 1


def test_openie_bounds_the_reply_and_keeps_a_cut_off_extraction() -> None:
    chunk = Chunk.make("Alpha", "Alpha is in Borduria since 1820.")
    cut_off = '{"triples": [["Alpha", "is in", "Borduria"], ["Alpha", "is in", "Bor'
    llm = ScriptedLLM(replies=['{"entities": ["Alpha", "Bord', cut_off])
    rec = extract(llm, chunk, OpenIEConfig(mode="two_pass"))
    assert rec.error is None and rec.entities == ["Alpha"] and rec.triples == [Triple("Alpha", "is in", "Borduria")]
    assert len(llm.calls) == 2  # salvaged, not re-asked
    triples = llm.calls[1]["schema"]["properties"]["triples"]
    assert triples["maxItems"] == item_bound(chunk) == MIN_ITEM_BOUND
    assert triples["items"]["items"]["maxLength"] == MAX_CHARS
    assert llm.calls[0]["schema"]["properties"]["entities"]["maxItems"] == MIN_ITEM_BOUND
    assert item_bound(Chunk.make("T", "word " * 400)) == 100


@pytest.mark.parametrize(
    "replies",
    [["not json", "still not json"], ['{"triples": "nope"}', '{"triples": 5}'], ["{}", '{"facts": []}']],
)
def test_openie_failure_is_recorded_not_raised(replies: list[str]) -> None:
    rec = extract(ScriptedLLM(replies=replies), Chunk.make("A", "b"), OpenIEConfig(mode="single"))
    assert rec.error and rec.triples == [] and replies[-1] in (rec.raw or "")


def _state(directory: Path) -> dict[str, object]:
    """Everything a build leaves, independent of row order."""
    with TripleIndex.open(directory, embedder=HashingEmbedder()) as ix:
        db = ix.store.db
        q = lambda sql: sorted(db.execute(sql).fetchall())  # noqa: E731
        return {
            "chunks": q("SELECT id, title, text FROM chunks"),
            "docs": q("SELECT doc, chunk_id, seq FROM doc_chunks"),
            "openie": q("SELECT chunk_id, source, error, entities, n_triples FROM openie"),
            "triples": q("SELECT * FROM triples"),
            "props": q("SELECT id, text, vector FROM propositions"),
            "links": q("SELECT * FROM prop_chunks"),
            "search": ix.store.search(HashingEmbedder().embed(["Alpha mentions Borduria"]), 5),
        }


def test_store_round_trip_and_search(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        r = ix.add(docs, llm=openie_llm())
        assert r["new_chunks"] == 3 and r["failed"] == 0 and r["usage"]["openie"]["calls"] == 6
    with TripleIndex.open(tmp_path / "ix") as ix:  # embedder taken from the manifest
        hits = ix.store.search(ix.embedder.embed(["Alpha mentions Borduria"]), 3)[0]
        props = ix.store.get_propositions([h[0] for h in hits])
        top = props[hits[0][0]]
        assert top.text == "Alpha mentions Borduria" and hits[0][1] == pytest.approx(1.0, abs=1e-5)
        assert ix.store.get_chunks(top.chunk_ids)[top.chunk_ids[0]].title == "Alpha"
        assert ix.manifest.counts["chunks"] == 3


def test_identical_propositions_link_to_every_chunk(tmp_path: Path) -> None:
    imported = load_openie_dict({"A\nx": [["Klow", "is in", "Syldavia"]], "B\ny": [["Klow", "is in", "Syldavia"]]})
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document("A", "x"), Document("B", "y")], imported=imported)
        pid = Proposition.from_triple(Triple("Klow", "is in", "Syldavia")).id
        assert len(ix.store.get_propositions([pid])[pid].chunk_ids) == 2
        assert ix.store.counts()["propositions"] == 1
        ix.delete(["A"])
        assert ix.store.get_propositions([pid])[pid].chunk_ids == (Chunk.make("B", "y").id,)
        ix.delete(["B"])
        assert ix.store.counts()["propositions"] == 0
        assert ix.store.search(HashingEmbedder().embed(["Klow"]), 5) == [[]]


def load_openie_dict(d: dict[str, list[list[str]]]) -> dict[str, object]:
    from t2rag.index.importer import Extraction, clean_triples

    return {k: Extraction([], clean_triples(v)) for k, v in d.items()}


def test_incremental_add_does_only_new_work(tmp_path: Path, docs: list[Document]) -> None:
    llm = openie_llm()
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs[:2], llm=llm)
        assert len(llm.calls) == 4
        r = ix.add(docs, llm=llm)  # one new document, two already indexed
        assert r["new_chunks"] == 1 and len(llm.calls) == 6
        r = ix.add(docs, llm=llm)
        assert r["new_chunks"] == 0 and len(llm.calls) == 6


def test_delete_removes_orphans_and_keeps_the_rest(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
        before = ix.store.counts()
        r = ix.delete(["Alpha", "Nope"])
        assert r["documents"] == 1 and r["not_found"] == 1 and r["chunks"] == 1
        after = ix.store.counts()
        assert after["chunks"] == 2 and after["propositions"] < before["propositions"]
        hits = ix.store.search(HashingEmbedder().embed(["Alpha mentions Borduria"]), 50)[0]
        texts = [p.text for p in ix.store.get_propositions([h[0] for h in hits]).values()]
        assert all(not t.startswith("Alpha") for t in texts)
    # the saved vector file agrees after reopening
    with TripleIndex.open(tmp_path / "ix") as ix:
        assert ix.store.index().ntotal == after["propositions"]


def test_deleted_then_readded_document_is_indexed_again(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
        full = ix.store.counts()
        ix.delete(["Beta"])
        ix.add(docs, llm=openie_llm())
        assert ix.store.counts() == full


def test_embedder_mismatch_is_a_clear_error(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(256)) as ix:
        ix.add(docs[:1], llm=openie_llm())
    with pytest.raises(IndexMismatchError, match="built with embedder 'hashing:256'"):
        TripleIndex.open(tmp_path / "ix", embedder=HashingEmbedder(128))
    with pytest.raises(IndexNotFoundError):
        TripleIndex.open(tmp_path / "missing")


def test_one_writer_at_a_time_readers_unaffected(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
        with pytest.raises(IndexLockedError):
            TripleIndex.open(tmp_path / "ix", writer=True)
        with TripleIndex.open(tmp_path / "ix") as reader:
            assert reader.store.counts()["chunks"] == 3
    TripleIndex.open(tmp_path / "ix", writer=True).close()  # the lock is released on close


def test_stale_vector_file_is_rebuilt(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
        n = ix.store.counts()["propositions"]
    (tmp_path / "ix" / "vectors.faiss").unlink()  # as if a crash happened before it was written
    with TripleIndex.open(tmp_path / "ix") as ix:
        assert ix.store.index().ntotal == n


@pytest.mark.parametrize("index_type", ["hnsw", "ivf"])
def test_approximate_index_types(tmp_path: Path, docs: list[Document], index_type: str) -> None:
    cfg = IndexConfig(store=StoreConfig(index_type=index_type))
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(), config=cfg) as ix:
        ix.add(docs, llm=openie_llm())
        hits = ix.store.search(ix.embedder.embed(["Beta mentions Syldavia"]), 3)[0]
        assert ix.store.get_propositions([hits[0][0]])[hits[0][0]].text == "Beta mentions Syldavia"
        ix.delete(["Beta"])
        assert ix.store.index().ntotal == ix.store.counts()["propositions"]


def test_import_both_hipporag_shapes(tmp_path: Path) -> None:
    v1 = {"docs": [{"title": "A", "text": "x", "passage": "A\nx", "extracted_entities": ["A"],
                    "extracted_triples": [["A", "is", "x"], ["bad"], ["A", None, "y"]]}]}
    v2 = {"docs": [{"idx": Chunk.make("B", "y").id, "passage": "B\ny", "extracted_entities": ["B"],
                    "extracted_triples": [["B", "is", "y"], ["B", "is", "y"]]}]}
    (tmp_path / "v1.json").write_text(json.dumps(v1))
    (tmp_path / "v2.json").write_text(json.dumps(v2))
    a = load_openie(tmp_path / "v1.json")["A\nx"]
    b = load_openie(tmp_path / "v2.json")[Chunk.make("B", "y").id]
    assert a.triples == [Triple("A", "is", "x")] and b.triples == [Triple("B", "is", "y")]
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(InputError, match="'docs' list"):
        load_openie(tmp_path / "bad.json")


def test_musique_import_builds_without_llm(tmp_path: Path, shared_data: Path) -> None:
    docs = load_corpus(shared_data / "musique_corpus.json")[:200]
    imported = load_openie(shared_data / "musique_openie_gpt-3.5-turbo-1106.json")
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        r = ix.add(docs, imported=imported)
        assert r["failed"] == 0 and r["extracted"] == 200 and r["triples"] > 1000
        assert r["usage"]["total"]["calls"] == 0


def test_vectors_match_embedder_exactly(tmp_path: Path, docs: list[Document]) -> None:
    emb = HashingEmbedder()
    with TripleIndex.create(tmp_path / "ix", embedder=emb) as ix:
        ix.add(docs, llm=openie_llm())
        for text, blob in ix.store.db.execute("SELECT text, vector FROM propositions"):
            assert np.array_equal(np.frombuffer(blob, dtype=np.float32), emb.embed([text])[0])


def test_reopen_with_the_embedder_named_in_the_manifest(tmp_path: Path, docs: list[Document]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder="minilm") as ix:
        ix.add(docs, llm=openie_llm())
    with TripleIndex.open(tmp_path / "ix") as ix:
        assert ix.embedder.name == ix.manifest.embedder == "minilm-l6-v2-int8"


def test_export_openie_round_trips_through_import(tmp_path: Path, docs: list[Document], capsys) -> None:
    from t2rag.cli import main

    long_doc = Document("Long", " ".join(f"Alpha is in Borduria {i}." for i in range(80)))  # several chunks
    with TripleIndex.create(tmp_path / "a", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
        ix.add([long_doc], llm=ScriptedLLM(default="garbage"))  # its chunks fail: left out of the export
        failed = ix.store.counts()["chunks"] - 3
    out = tmp_path / "out" / "openie.json"
    assert main(["export-openie", str(tmp_path / "a"), str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote 3 passages' triples to {out}; left out {failed} failed")
    assert failed > 1 and not out.with_name("openie.json.tmp").exists()
    with TripleIndex.create(tmp_path / "b", embedder=HashingEmbedder()) as ix:
        r = ix.add(docs, imported=load_openie(out))  # no LLM: everything comes from the file
        assert r["failed"] == 0 and r["triples"] > 0
    a, b = _state(tmp_path / "a"), _state(tmp_path / "b")
    long_chunks = {c[0] for c in a["chunks"] if c[1] == "Long"}
    assert b["triples"] == [t for t in a["triples"] if t[0] not in long_chunks]
    assert b["chunks"] == [c for c in a["chunks"] if c[0] not in long_chunks]


def test_changed_extraction_prompts_are_reported_on_write(tmp_path: Path, docs: list[Document],
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=openie_llm())
    manifest = json.loads((tmp_path / "ix" / "manifest.json").read_text())
    manifest["prompts"]["openie_triples"] = "older"
    (tmp_path / "ix" / "manifest.json").write_text(json.dumps(manifest))
    TripleIndex.open(tmp_path / "ix").close()  # reading: nothing to say
    assert capsys.readouterr().err == ""
    TripleIndex.create(tmp_path / "ix").close()
    err = capsys.readouterr().err
    assert "other versions of the openie_triples prompt" in err and len(err.strip().splitlines()) == 1
    assert json.loads((tmp_path / "ix" / "manifest.json").read_text())["prompts"]["openie_triples"] == "older"


def test_a_passage_imported_whole_is_not_chunked_again_without_the_import(tmp_path: Path) -> None:
    from conftest import fake_openie_reply
    from t2rag.index.importer import Extraction

    long_doc = Document("Long", " ".join(f"Sentence {i} names Alpha and Borduria." for i in range(80)))
    whole = Chunk.make(long_doc.title, long_doc.text)
    cfg = IndexConfig(chunk=ChunkConfig(size=40, overlap=5))
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(), config=cfg) as ix:
        first = ix.add([long_doc], imported={whole.passage: Extraction([], [Triple("Alpha", "in", "Borduria")])})
        again = ix.add([long_doc], llm=ScriptedLLM(default=fake_openie_reply))
        assert first["new_chunks"] == 1 and again["new_chunks"] == 0 and ix.store.counts()["chunks"] == 1


def test_the_manifest_names_the_model_and_prompts_of_each_build(tmp_path: Path) -> None:
    from conftest import fake_openie_reply

    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document("A", "Alpha is in Borduria.")], llm=ScriptedLLM(default=fake_openie_reply, name="model-a"))
        ix.add([Document("A", "Alpha is in Borduria.")], llm=ScriptedLLM(default=fake_openie_reply, name="model-c"))
        ix.add([Document("B", "Beta is in Syldavia.")], llm=ScriptedLLM(default=fake_openie_reply, name="model-b"))
    with TripleIndex.open(tmp_path / "ix") as ix:
        builds = ix.manifest.builds
    assert [b["llm"] for b in builds] == ["model-a", "model-b"]  # the second add extracted nothing
    assert builds[0]["chunks_extracted"] == 1 and builds[0]["prompts"] == ix.manifest.prompts


def test_the_estimate_calls_equal_the_real_builds(tmp_path: Path, capsys: Any, monkeypatch: Any) -> None:
    import t2rag.cli.common
    from t2rag.cli import main
    from t2rag.config import IndexConfig
    from t2rag.index.estimate import estimate_build, pending_chunks

    docs = [Document(f"Town{i}", f"Town{i} lies in Region{i}. " * (3 + 40 * (i % 3))) for i in range(12)]
    cfg = IndexConfig()
    chunks = pending_chunks(docs, cfg, None)
    est = estimate_build(chunks, openie_llm(), cfg, sample=4)
    llm = openie_llm()
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs[:5], llm=openie_llm())  # part of it is built already
        assert len(pending_chunks(docs, ix.config, ix.store)) < len(chunks)
        ix.add(docs[5:], llm=llm)
    full = openie_llm()
    with TripleIndex.create(tmp_path / "full", embedder=HashingEmbedder()) as ix:
        ix.add(docs, llm=full)
    assert est.chunks == len(chunks) > 12 and est.sampled == 4
    assert est.calls == len(full.calls) == 2 * len(chunks)  # two-pass: two calls a chunk, as the build made
    corpus = tmp_path / "c.json"
    corpus.write_text(json.dumps([{"title": d.title, "text": d.text} for d in docs]))
    monkeypatch.setattr(t2rag.cli.common, "llm_from_args", lambda args, manifest=None: openie_llm())
    assert main(["index", str(tmp_path / "new"), str(corpus), "--llm", "scripted", "--estimate", "3",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["chunks"] == len(chunks) and out["calls"] == 2 * len(chunks)
    assert not (tmp_path / "new").exists()  # nothing written


def test_chunking_streams_tokens_with_bounded_memory() -> None:
    import random
    import re as _re
    import tracemalloc

    from t2rag.config import ChunkConfig
    from t2rag.index.chunking import _TOKEN, chunk_document
    from t2rag.types import Chunk

    def reference(doc: Document, cfg: ChunkConfig) -> list[str]:  # the list-of-spans algorithm
        spans = [m.span() for m in _TOKEN.finditer(doc.text)]
        if len(spans) <= cfg.size:
            return [Chunk.make(doc.title, doc.text).id]
        out = []
        for start in range(0, len(spans), cfg.size - cfg.overlap):
            w = spans[start : start + cfg.size]
            out.append(Chunk.make(doc.title, doc.text[w[0][0] : w[-1][1]]).id)
            if start + cfg.size >= len(spans):
                break
        return out

    rng = random.Random(7)
    for _ in range(300):
        text = " ".join(rng.choice(["a", "Bb", "c.", "(d)", "1990", "\n"]) for _ in range(rng.randint(0, 400)))
        size = rng.randint(8, 50)
        cfg = ChunkConfig(size=size, overlap=rng.randint(0, size - 1))
        assert [c.id for c in chunk_document(Document("T", text), cfg)] == reference(Document("T", text), cfg)
    big = Document("Big", "word, " * 100_000)  # 200,000 tokens
    tracemalloc.start()
    chunks = chunk_document(big, ChunkConfig())
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(chunks) > 1000 and peak < 10 * 2**20 and not _re.search(r"\s$", chunks[-1].text)


def test_a_local_model_indexes_with_two_slots_unless_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import t2rag.cli.common
    from t2rag.cli import main

    corpus = tmp_path / "c.json"
    corpus.write_text(json.dumps([{"title": "A", "text": "Alpha is a town in Borduria."}]))
    slots: list[int | None] = []

    def model(args: Any, manifest: Any = None) -> Any:
        slots.append(args.parallel)
        return openie_llm()

    monkeypatch.setattr(t2rag.cli.common, "llm_from_args", model)
    common = ["--embedder", "hashing", "-q", "--estimate", "1", "--json"]
    assert main(["index", str(tmp_path / "a"), str(corpus), "--llm", "local", *common]) == 0
    assert main(["index", str(tmp_path / "b"), str(corpus), "--llm", "local", "--parallel", "1", *common]) == 0
    assert main(["index", str(tmp_path / "c"), str(corpus), "--llm", "scripted", *common]) == 0
    assert slots == [2, 1, None]


def test_speculative_decoding_is_a_server_setting_checked_before_loading() -> None:
    pytest.importorskip("xllamacpp")
    import xllamacpp

    from t2rag.errors import ConfigError
    from t2rag.llm.local import server_params

    params = server_params(Path("m.gguf"), n_ctx=512, n_parallel=1, threads=1, speculative="ngram")
    assert list(params.speculative.types) == [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE]
    with pytest.raises(ConfigError, match="speculative must be one of"):
        server_params(Path("m.gguf"), n_ctx=512, n_parallel=1, threads=1, speculative="magic")
