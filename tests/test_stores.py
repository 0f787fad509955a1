"""One conformance suite for every store backend: a directory (SQLite + FAISS) and a real
PostgreSQL + pgvector server. Everything is read back through the store protocol."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import ANSWER_PROMPT, fake_openie_reply, openie_llm, passage_of
from t2rag.api import T2RAG
from t2rag.embed.hashing import HashingEmbedder
from t2rag.errors import IndexMismatchError, IndexNotFoundError
from t2rag.index import Document, TripleIndex
from t2rag.index.store import Store
from t2rag.llm.scripted import ScriptedLLM

N_DOCS = 24


def corpus(n: int = N_DOCS) -> list[Document]:
    return [Document(f"Doc{i}", f"Founded in {1800 + i}, Doc{i} lies in Region{i % 5}.")
            for i in range(n)]


def state(store: Store) -> dict[str, Any]:
    """Everything a store holds, in a backend-neutral form."""
    records = sorted((r.chunk_id, r.source, r.error, tuple(r.triples)) for r in store.openie_records())
    chunks = sorted((c.id, c.title, c.text) for c in store.iter_chunks())
    props = store.get_propositions(pid for r in store.openie_records() for pid in _prop_ids(r.triples))
    return {"counts": store.counts(), "records": records, "chunks": chunks, "docs": store.documents(),
            "props": sorted((p.id, p.text, tuple(sorted(p.chunk_ids))) for p in props.values())}


def _prop_ids(triples: Any) -> list[str]:
    from t2rag.types import Proposition

    return [Proposition.from_triple(t).id for t in triples]


def build(location: str | Path, docs: list[Document], llm: Any = None) -> dict[str, Any]:
    with TripleIndex.create(location, embedder=HashingEmbedder()) as ix:
        return ix.add(docs, llm=llm or openie_llm())


def test_build_search_and_read_back(location: str | Path) -> None:
    report = build(location, corpus())
    assert report["extracted"] == N_DOCS and report["failed"] == 0 and report["chunks_embedded"] == N_DOCS
    with TripleIndex.open(location) as ix:
        s = state(ix.store)
        c = s["counts"]
        assert c["documents"] == N_DOCS and c["propositions"] == c["propositions_embedded"]
        q = ix.embedder.embed(["Doc3 mentions 1803"])
        hits = ix.store.search(q, 5)[0]
        assert len(hits) == 5 and hits[0][1] >= hits[-1][1]
        found = ix.store.get_propositions([hits[0][0]])[hits[0][0]]
        assert found.chunk_ids and found.triple.subject.startswith("Doc")
        lex = ix.store.search_lexical(["1807"], 3)[0]
        assert "1807" in ix.store.get_propositions([lex[0][0]])[lex[0][0]].text
        chunk_hits = ix.store.search_chunks(ix.embedder.embed(["Doc5 is a town in Region0"]), 3)[0]
        assert len(chunk_hits) == 3 and ix.store.get_chunks([chunk_hits[0][0]])
    # a second build of the same corpus adds nothing and repeats no LLM work
    llm = openie_llm()
    again = build(location, corpus(), llm)
    assert again["new_chunks"] == 0 and again["extracted"] == 0 and llm.calls == []


def test_chunk_locations_are_kept_on_every_backend(location: str | Path) -> None:
    paged = Document("Report", "Page one text.\n\nPage two text.", source="in/report.pdf", pages=(0, 16))
    with TripleIndex.create(location, embedder=HashingEmbedder()) as ix:
        ix.add([paged, Document("Plain", "No pages here.")], llm=openie_llm())
        ids = {c.text: c.id for c in ix.store.iter_chunks()}
        found = ix.store.chunk_locations(list(ids.values()) + ["chunk-unknown"])
        summaries = {d.title: d for d in ix.store.document_summaries()}
    report = summaries["Report"]
    assert (report.chunks, report.pages, report.source) == (2, 2, "in/report.pdf")
    assert summaries["Plain"].status() == "extracted" and summaries["Plain"].pages is None
    two = found[ids["Page two text."]]
    assert (two.doc, two.source, two.page, two.last_page) == ("Report", "in/report.pdf", 2, 2)
    assert (two.start, two.end) == (16, 30)
    assert found[ids["No pages here."]].label() == "Plain" and "chunk-unknown" not in found


def test_questions_are_answered_the_same_on_every_backend(location: str | Path) -> None:
    build(location, corpus(6))
    llm = ScriptedLLM(rules=[("Placeholders to fill", {"bindings": []}),
                             (ANSWER_PROMPT, {"reasoning": "r", "answer": "Person2"}),
                             ("Passages:\n", {"reasoning": "r", "answer": "Person2"}),
                             ("Question:", {"triples": [["Doc2", "founded by", "?answer"]]})])
    with T2RAG.open(location, llm=llm) as rag:
        a = rag.ask("Who founded Doc2?")
    assert a.answer == "Person2" and a.rounds and a.answer_chunks


def test_delete_cascades_to_unsupported_propositions(location: str | Path) -> None:
    build(location, corpus(6))
    with TripleIndex.create(location) as ix:
        before = ix.store.counts()
        out = ix.delete(["Doc1", "Nope"])
        after = ix.store.counts()
        assert out == {"chunks": 1, "propositions": 3, "documents": 1, "not_found": 1}
        assert after["chunks"] == before["chunks"] - 1 and after["propositions"] == before["propositions"] - 3
        assert "Doc1" not in ix.store.documents()
        hits = ix.store.search(ix.embedder.embed(["Doc1 mentions 1801"]), 50)[0]
        assert all("Doc1" not in p.text for p in ix.store.get_propositions(h for h, _ in hits).values())


def test_failed_chunks_are_recorded_and_retried_on_request(location: str | Path) -> None:
    def flaky(messages: list[dict[str, str]]) -> str:
        return "not json at all" if "Doc3" in messages[-1]["content"] else fake_openie_reply(messages)

    r = build(location, corpus(5), ScriptedLLM(default=flaky))
    assert r["failed"] == 1
    with TripleIndex.create(location) as ix:
        (failed,) = ix.store.openie_records(failed_only=True)
        assert failed.error and failed.raw
        again = ix.add(corpus(5), llm=openie_llm(), retry_failed=True)
        assert again["extracted"] == 1 and ix.store.counts()["chunks_failed"] == 0


def test_the_manifest_is_kept_and_checked_on_open(location: str | Path) -> None:
    build(location, corpus(2))
    with pytest.raises(IndexMismatchError, match="embedder"):
        TripleIndex.open(location, embedder=HashingEmbedder(dim=64))
    with TripleIndex.open(location) as ix:
        assert ix.manifest.embedder == HashingEmbedder().name and ix.manifest.counts["chunks"] == 2


def test_backends_hold_the_same_index(tmp_path: Path, pg_url: str) -> None:
    build(tmp_path / "idx", corpus())
    build(pg_url, corpus())
    with TripleIndex.open(tmp_path / "idx") as a, TripleIndex.open(pg_url) as b:
        assert state(a.store) == state(b.store)
        q = a.embedder.embed(["Doc9 mentions 1809", "Region"])
        for ra, rb in zip(a.store.search(q, 10), b.store.search(q, 10)):  # HNSW finds exact search's top 10
            assert [s for _, s in ra] == pytest.approx([s for _, s in rb], abs=1e-5)  # (ids may tie)


# --- PostgreSQL only: several writers, crashes, bad connections --------------------------

def shared_facts_reply(messages: list[dict[str, str]]) -> str:
    """An extraction in which every chunk yields the same propositions, in an order that
    differs between chunks: concurrent writers then insert shared rows in crossing orders."""
    title = passage_of(messages).partition("\n")[0]
    facts = [["Region", "borders", f"Zone{j}"] for j in range(6)]
    if "Entities:" not in messages[-1]["content"]:
        return json.dumps({"entities": ["Region"]})
    return json.dumps({"triples": facts[::-1] if int(title[3:]) % 2 else facts})


@pytest.mark.parametrize("reply", [fake_openie_reply, shared_facts_reply], ids=["own", "shared"])
def test_concurrent_writers_duplicate_nothing(tmp_path: Path, pg_url: str, reply: Any) -> None:
    build(tmp_path / "ref", corpus(), ScriptedLLM(default=reply))
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            build(pg_url, corpus(), ScriptedLLM(default=reply))
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with TripleIndex.open(tmp_path / "ref") as a, TripleIndex.open(pg_url) as b:
        assert state(a.store) == state(b.store)


SCRIPT = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    from conftest import fake_openie_reply
    from test_stores import corpus
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import TripleIndex
    from t2rag.llm.scripted import ScriptedLLM

    def slow(messages):
        time.sleep(0.03)
        return fake_openie_reply(messages)

    with TripleIndex.create(sys.argv[1], embedder=HashingEmbedder()) as ix:
        ix.add(corpus(), llm=ScriptedLLM(default=slow))
    """
)


def test_sigkill_mid_build_on_the_server_then_resume(tmp_path: Path, pg_url: str) -> None:
    build(tmp_path / "clean", corpus())
    script = tmp_path / "build.py"
    script.write_text(SCRIPT.format(tests=str(Path(__file__).parent)))
    proc = subprocess.Popen([sys.executable, str(script), pg_url])

    def extracted() -> int:
        try:
            with TripleIndex.open(pg_url) as ix:
                return ix.store.counts()["chunks_extracted"]
        except IndexNotFoundError:
            return 0

    deadline = time.monotonic() + 60
    while extracted() < 6 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = extracted()
    assert 0 < done < N_DOCS, "the kill should land mid-build"
    llm = openie_llm()
    r = build(pg_url, corpus(), llm)
    assert r["extracted"] == N_DOCS - done and len(llm.calls) == 2 * (N_DOCS - done)
    with TripleIndex.open(tmp_path / "clean") as a, TripleIndex.open(pg_url) as b:
        assert state(a.store) == state(b.store)


def test_readers_in_other_processes_see_committed_data(pg_url: str) -> None:
    build(pg_url, corpus(3))
    code = ("import sys; from t2rag.index import TripleIndex\n"
            "with TripleIndex.open(sys.argv[1]) as ix: print(ix.store.counts()['chunks'])")
    out = subprocess.run([sys.executable, "-c", code, pg_url], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "3"


def test_bad_connections_are_one_line_and_write_nothing(pg_server: Any) -> None:
    dead = "postgresql://nobody:secret@127.0.0.1:1/none"
    with pytest.raises(IndexNotFoundError) as e:
        TripleIndex.create(dead, embedder=HashingEmbedder())
    assert "cannot connect" in str(e.value) and "secret" not in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(IndexNotFoundError, match="no T2RAG index"):
        TripleIndex.open(str(pg_server.get_uri("postgres")))


def test_dimension_mismatch_in_the_database_is_refused(pg_url: str) -> None:
    build(pg_url, corpus(2))
    from t2rag.config import StoreConfig
    from t2rag.index.pg_store import PgStore

    with pytest.raises(IndexMismatchError, match="64-d"):
        PgStore(pg_url, 64, StoreConfig())


def test_copy_between_backends_keeps_everything(tmp_path: Path, pg_url: str) -> None:
    from t2rag.cli import main

    def flaky(messages: list[dict[str, str]]) -> str:
        return "not json at all" if "Doc3" in messages[-1]["content"] else fake_openie_reply(messages)

    build(tmp_path / "a", corpus(8), ScriptedLLM(default=flaky))
    assert main(["copy", str(tmp_path / "a"), pg_url]) == 0
    assert main(["copy", pg_url, str(tmp_path / "b")]) == 0
    with TripleIndex.open(tmp_path / "a") as a, TripleIndex.open(pg_url) as p, TripleIndex.open(tmp_path / "b") as b:
        assert state(a.store) == state(p.store) == state(b.store)
        assert state(a.store)["counts"]["chunks_failed"] == 1  # failed extractions travel too
        assert b.manifest.embedder == a.manifest.embedder and b.manifest.prompts == a.manifest.prompts
    assert main(["copy", str(tmp_path / "a"), pg_url]) == 1  # never merged into an existing index


def test_two_indexes_in_one_database_through_schemas(pg_server: Any, pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("CREATE SCHEMA one; CREATE SCHEMA two;")
    for schema, n in (("one", 2), ("two", 3)):
        build(pg_url + f"&options=-csearch_path%3D{schema},public", corpus(n))
    for schema, n in (("one", 2), ("two", 3)):
        with TripleIndex.open(pg_url + f"&options=-csearch_path%3D{schema},public") as ix:
            assert ix.store.counts()["documents"] == n


def _town_docs(names: list[str]) -> tuple[list[Document], dict[str, Any]]:
    from t2rag.index.importer import Extraction
    from t2rag.types import Triple

    docs = [Document(n, f"{n} mentions {p}.") for n, p in names]
    return docs, {f"{d.title}\n{d.text}": Extraction([], [Triple(d.title, "mentions", p)])
                  for d, (_, p) in zip(docs, names)}


def test_a_long_running_reader_follows_another_writers_changes(location: str | Path) -> None:
    """A reader that loaded its vectors (a server) must see a CLI writer's delete and add, and
    a vector of a deleted fact must never point at a new one (ids are not reused)."""
    towns = [(f"Town{i}", f"Person{i}") for i in range(10)]
    docs, imported = _town_docs(towns)
    with TripleIndex.create(location, embedder=HashingEmbedder()) as ix:
        ix.add(docs, imported=imported)
    with TripleIndex.open(location) as reader:
        emb = reader.embedder
        first = reader.store.search(emb.embed(["Town9 mentions Person9"]), 3)[0]
        assert reader.store.get_propositions([first[0][0]])[first[0][0]].text == "Town9 mentions Person9"
        reader.store.search_chunks(emb.embed(["Town9"]), 3)  # chunk vectors loaded too
        new_docs, new_imported = _town_docs([("Eta", "Quux")])
        with TripleIndex.create(location) as writer:  # another writer, as `t2rag delete` / `index`
            writer.delete(["Town9", "Town8"])
            writer.add(new_docs, imported=new_imported)
        hits = reader.store.search(emb.embed(["Town9 mentions Person9"]), 20)[0]
        texts = [p.text for p in reader.store.get_propositions([h[0] for h in hits]).values()]
        assert "Eta mentions Quux" in texts and not any(t.startswith(("Town9", "Town8")) for t in texts)
        top = reader.store.search(emb.embed(["Eta mentions Quux"]), 1)[0][0][0]
        assert reader.store.get_propositions([top])[top].text == "Eta mentions Quux"
        chunk_hits = reader.store.search_chunks(emb.embed(["Eta mentions Quux."]), 20)[0]
        titles = {c.title for c in reader.store.get_chunks([h[0] for h in chunk_hits]).values()}
        assert "Eta" in titles and not titles & {"Town9", "Town8"}


def test_deleted_proposition_ids_are_never_reused(tmp_path: Path) -> None:
    import sqlite3

    docs, imported = _town_docs([(f"Town{i}", f"Person{i}") for i in range(5)])
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add(docs, imported=imported)
        ix.delete(["Town4", "Town3"])  # the highest rowids
        new_docs, new_imported = _town_docs([("Eta", "Quux")])
        ix.add(new_docs, imported=new_imported)
    db = sqlite3.connect(tmp_path / "ix" / "meta.sqlite")
    assert db.execute("SELECT rowid FROM propositions WHERE text = 'Eta mentions Quux'").fetchone()[0] > 5


def test_a_vectors_file_that_disagrees_with_the_database_is_rebuilt(tmp_path: Path) -> None:
    import faiss
    import numpy as np

    build(tmp_path / "ix", corpus())
    with TripleIndex.open(tmp_path / "ix") as ix:
        n = ix.store.counts()["propositions"]
        gen = ix.store.generation()
    small = faiss.IndexIDMap2(faiss.IndexFlatIP(HashingEmbedder().dim))
    small.add_with_ids(np.ones((5, small.d), dtype=np.float32), np.arange(1, 6, dtype=np.int64))
    faiss.write_index(small, str(tmp_path / "ix" / "vectors.faiss"))  # 5 vectors, sidecar says current
    (tmp_path / "ix" / "vectors.json").write_text(json.dumps({"generation": gen, "ntotal": 5}))
    with TripleIndex.open(tmp_path / "ix") as ix:
        assert ix.store.index().ntotal == n > 5


def test_a_delete_during_a_build_on_the_server_loses_nothing(tmp_path: Path, pg_url: str) -> None:
    """`t2rag delete` while `t2rag index` extracts: neither crashes, the deleted documents are
    gone, every remaining chunk is extracted, and no row points at a deleted chunk."""
    docs = corpus(40)
    build(pg_url, docs[:1])  # the index exists
    errors: list[BaseException] = []
    started = threading.Event()

    def slow(messages: Any) -> str:
        started.set()
        time.sleep(0.01)
        return fake_openie_reply(messages)

    def builder() -> None:
        try:
            build(pg_url, docs, ScriptedLLM(default=slow))
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    thread = threading.Thread(target=builder)
    thread.start()
    started.wait(10)
    doomed = [d.title for d in docs[5:35]]
    for i in range(0, len(doomed), 3):  # deletes interleaved with the build's records
        with TripleIndex.create(pg_url) as ix:
            ix.delete(doomed[i:i + 3])
        time.sleep(0.02)
    thread.join(60)
    assert errors == []
    with TripleIndex.open(pg_url) as ix:
        assert not set(ix.store.documents()) & set(doomed)
        c = ix.store.counts()
        db = ix.store.db  # type: ignore[attr-defined]
        for table in ("openie", "triples", "prop_chunks", "chunk_vectors"):
            assert db.execute(f"SELECT COUNT(*) FROM {table} WHERE chunk_id NOT IN (SELECT id FROM chunks)"
                              ).fetchone()[0] == 0, table
    build(pg_url, docs[:5] + docs[35:])  # a rerun finds nothing left to do but what was deleted
    with TripleIndex.open(pg_url) as ix:
        c = ix.store.counts()
        assert c["chunks_extracted"] == c["chunks"] == 10


def test_an_edited_document_replaces_the_old_one(location: str | Path) -> None:
    docs, imported = _town_docs([("Beta", "Marrow"), ("Gamma", "Quill")])
    with TripleIndex.create(location, embedder=HashingEmbedder()) as ix:
        ix.add(docs, imported=imported)
        edited, edited_imported = _town_docs([("Beta", "Brisk")])
        r = ix.add(edited, imported=edited_imported)
        assert r["replaced"] == 1
        texts = {p.text for p in ix.store.get_propositions(
            pid for rec in ix.store.openie_records() for pid in _prop_ids(rec.triples)).values()}
        assert "Beta mentions Brisk" in texts and "Beta mentions Marrow" not in texts
        assert ix.add(edited, imported=edited_imported)["replaced"] == 0  # the same text again: nothing
        kept, kept_imported = _town_docs([("Gamma", "Zest")])
        ix.add(kept, imported=kept_imported, replace=False)  # joins the old text
        assert len(ix.store.doc_chunk_ids(["Gamma"])["Gamma"]) == 2


def test_a_truncated_lexical_id_list_is_rebuilt_not_an_index_error(tmp_path: Path) -> None:
    build(tmp_path / "ix", corpus())
    ids_file = tmp_path / "ix" / "lexical" / "ids.json"
    meta = json.loads(ids_file.read_text())
    ids_file.write_text(json.dumps({**meta, "ids": meta["ids"][:3]}))  # valid JSON, too few ids
    with TripleIndex.open(tmp_path / "ix") as ix:
        hits = ix.store.search_lexical(["Region3 Doc3"], 50)[0]
        assert hits and len(ix.store.lexical().ids) == ix.store.counts()["propositions"]


def test_a_repeated_title_keeps_its_chunk_order_through_a_copy(tmp_path: Path, location: str | Path) -> None:
    from t2rag.index.transfer import copy_index

    long_text = " ".join(f"First{i} part." for i in range(150))
    docs = [Document("Same", long_text), Document("Same", " ".join(f"Second{i} part." for i in range(150)))]
    build(tmp_path / "src", docs)
    with TripleIndex.open(tmp_path / "src") as ix:
        before = [c.text for _, cs in ix.store.document_chunks() for c in cs]
    assert len(before) == 6 and before[0].startswith("First0") and before[3].startswith("Second0")
    copy_index(tmp_path / "src", location)
    with TripleIndex.open(location) as ix:
        assert [c.text for _, cs in ix.store.document_chunks() for c in cs] == before


def test_workers_on_one_server_share_one_extraction(tmp_path: Path, pg_url: str, monkeypatch: Any) -> None:
    """Three builds of one corpus on one PostgreSQL index: every chunk is extracted once in
    all (LLM calls = 2 per chunk), and a SIGKILLed worker's leased chunks return to the pool."""
    import t2rag.index.extract_pool as pool

    monkeypatch.setattr(pool, "LEASE_S", 30.0)  # the live workers' leases outlast any extraction
    monkeypatch.setattr(pool, "LEASE_POLL_S", 0.1)
    docs = corpus(30)
    build(pg_url, docs[:1])
    # a worker that leases chunks and dies: its leases must expire, not strand the chunks
    killed = subprocess.Popen([sys.executable, "-c", KILLED_WORKER.format(tests=str(Path(__file__).parent)), pg_url])
    time.sleep(3)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    with TripleIndex.open(pg_url) as ix:
        left = ix.store.counts()["chunks"] - ix.store.counts()["chunks_extracted"]
    assert 0 < left < 30  # the killed worker leased and extracted part of the corpus
    llms = [ScriptedLLM(default=fake_openie_reply) for _ in range(3)]
    errors: list[BaseException] = []

    def worker(llm: ScriptedLLM) -> None:
        try:
            build(pg_url, docs, llm)
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(llm,)) for llm in llms]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    with TripleIndex.open(pg_url) as ix:
        c = ix.store.counts()
        assert c["chunks_extracted"] == c["chunks"] == 30
    # every chunk left was extracted exactly once, by one of the three (two-pass: two calls each);
    # the chunk the killed worker had leased but not finished waited for its lease to expire
    from collections import Counter

    seen = Counter(passage_of(call["messages"]) + str("Entities:" in call["messages"][-1]["content"])
                   for llm in llms for call in llm.calls)
    assert sum(len(llm.calls) for llm in llms) == 2 * left, [k[:40] for k, n in seen.items() if n > 1]


KILLED_WORKER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {tests!r})
    import t2rag.index.extract_pool as pool
    pool.LEASE_S = 1.0
    from conftest import fake_openie_reply
    from test_stores import corpus
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import TripleIndex
    from t2rag.llm.scripted import ScriptedLLM

    def slow(messages):
        time.sleep(0.2)
        return fake_openie_reply(messages)

    with TripleIndex.create(sys.argv[1], embedder=HashingEmbedder()) as ix:
        ix.add(corpus(30), llm=ScriptedLLM(default=slow))
    """
)


def test_an_index_built_before_sources_were_kept_still_opens_and_gains_them(tmp_path: Path) -> None:
    import sqlite3

    loc = tmp_path / "idx"
    with TripleIndex.create(loc, embedder=HashingEmbedder()) as ix:
        ix.add([Document("Old", "Old text.")], llm=openie_llm())
    db = sqlite3.connect(loc / "meta.sqlite")
    for col in ("source", "page", "last_page", "span_start", "span_end"):
        db.execute(f"ALTER TABLE doc_chunks DROP COLUMN {col}")
    db.commit()
    db.close()
    with TripleIndex.open(loc) as ix:  # a reader: the title is all it can say
        (found,) = ix.store.chunk_locations([c.id for c in ix.store.iter_chunks()]).values()
        assert found.doc == "Old" and found.source == ""
    with TripleIndex.create(loc, embedder=HashingEmbedder()) as ix:  # a writer adds the columns
        ix.add([Document("New", "New text.", source="new.md")], llm=openie_llm())
        labels = {v.label() for v in ix.store.chunk_locations([c.id for c in ix.store.iter_chunks()]).values()}
    assert labels == {"Old", "new.md"}
