"""Documents as users keep them: formats, encodings, empty and unsupported files, one file."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from t2rag.errors import InputError
from t2rag.index import load_corpus


def _docx(path: Path, paragraphs: list[str]) -> None:
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in paragraphs)
    xml = ('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
           f'wordprocessingml/2006/main"><w:body>{body}</w:body></w:document>')
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("word/document.xml", xml)


def _pdf(path: Path, pages: list[str]) -> None:
    """A real PDF with a text layer, written by hand (pypdf reads it back)."""
    objs = ["<< /Type /Catalog /Pages 2 0 R >>", ""]
    kids, out = [], []
    for i, text in enumerate(pages):
        page_no, content_no = 3 + 2 * i, 4 + 2 * i
        kids.append(f"{page_no} 0 R")
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET"
        out.append((page_no, f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {content_no} 0 R "
                             f"/Resources << /Font << /F1 {3 + 2 * len(pages)} 0 R >> >> >>"))
        out.append((content_no, f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream"))
    objs[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(pages)} >>"
    objs += [body for _, body in sorted(out)]
    objs.append("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    data, offsets = b"%PDF-1.4\n", []
    for n, body in enumerate(objs, 1):
        offsets.append(len(data))
        data += f"{n} 0 obj\n{body}\nendobj\n".encode()
    xref = len(data)
    data += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    data += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    data += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(data)


def test_a_folder_of_every_kind_is_read_and_what_is_not_is_named(tmp_path: Path) -> None:
    d = tmp_path / "docs"
    (d / "sub").mkdir(parents=True)
    (d / "alpha.md").write_text("# Alpha\nAlpha is a town in Borduria.")
    (d / "sub" / "beta.txt").write_text("Beta is a river.")
    (d / "latin1.txt").write_bytes("Caf\xe9 Ren\xe9 lies in S\xe3o Tom\xe9, a caf\xe9 on the quay.".encode("latin-1"))
    (d / "empty.txt").write_text("   \n")
    (d / "page.html").write_text("<html><head><title>T</title><style>p{}</style></head>"
                                 "<body><p>Gamma is a painter.</p><script>var x=1;</script></body></html>")
    (d / "notes.rst").write_text("Delta\n=====\n\nDelta is a lake.")
    _docx(d / "report.docx", ["Epsilon is a bridge.", "It spans the Varn."])
    _pdf(d / "paper.pdf", ["Zeta is a mountain.", "Eta is a valley."])
    (d / "wide.txt").write_bytes("Theta is a glacier in Tromsø.".encode("utf-16"))
    _pdf(d / "scan.pdf", [""])  # a scanned page: no text layer
    (d / "data.csv").write_text("a,b\n1,2\n")
    (d / ".hidden.md").write_text("not indexed")
    notes: list[str] = []
    docs = {doc.title: doc.text for doc in load_corpus(d, notes)}
    assert set(docs) == {"alpha", "sub/beta", "latin1", "page", "notes", "report", "paper", "wide"}
    assert docs["wide"] == "Theta is a glacier in Tromsø."
    assert "Café René" in docs["latin1"] and docs["page"] == "Gamma is a painter."
    assert docs["report"] == "Epsilon is a bridge.\nIt spans the Varn."
    assert "Zeta is a mountain." in docs["paper"] and "Eta is a valley." in docs["paper"]
    joined = "\n".join(notes)
    assert "empty: " in joined and "data: unsupported format" in joined and "latin1: not UTF-8" in joined
    assert "scan: no text" in joined and "wide: decoded as utf-16" in joined


def test_one_document_file_is_a_corpus(tmp_path: Path) -> None:
    (tmp_path / "alpha.md").write_text("Alpha is a town.")
    assert [(d.title, d.text) for d in load_corpus(tmp_path / "alpha.md")] == [("alpha", "Alpha is a town.")]
    _pdf(tmp_path / "only.pdf", ["Zeta is a mountain."])
    assert load_corpus(tmp_path / "only.pdf")[0].text == "Zeta is a mountain."


@pytest.mark.parametrize(("name", "content", "message"), [
    ("empty.md", b"", "gave no text"), ("x.csv", b"a,b", "unsupported file type"),
    ("bad.pdf", b"%PDF-1.4 garbage", "gave no text"), ("bad.docx", b"not a zip", "gave no text"),
])
def test_a_file_that_gives_nothing_is_one_clear_error(tmp_path: Path, name: str, content: bytes, message: str) -> None:
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_corpus(tmp_path / name)


def test_the_index_command_says_what_it_skipped(tmp_path: Path, capsys: Any) -> None:
    from t2rag.cli import main

    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("Alpha is a town.")
    (d / "b.txt").write_text("")
    assert main(["index", str(tmp_path / "ix"), str(d), "--llm", "none", "--embedder", "hashing"]) == 0
    captured = capsys.readouterr()
    assert "indexed 1 documents" in captured.out and "b: no text" in captured.err
    strict = main(["index", str(tmp_path / "ix2"), str(d), "--llm", "none", "--embedder", "hashing",
                   "--strict"])
    assert strict == 1 and "--strict" in capsys.readouterr().err and not (tmp_path / "ix2").exists()


def test_documents_are_listed_and_a_missing_title_is_an_error(tmp_path: Path, capsys: Any) -> None:
    from t2rag.cli import main

    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("Alpha is a town.")
    (d / "b.md").write_text("Beta is a river.")
    ix = str(tmp_path / "ix")
    assert main(["index", ix, str(d), "--llm", "none", "--embedder", "hashing", "-q"]) == 0
    capsys.readouterr()
    assert main(["inspect", ix, "--documents"]) == 0
    listed = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in listed] == ["a", "b"] and listed[0][1] == "1 chunks" and listed[0][3].endswith("a.md")
    assert listed[0][4] == "1 of 1 chunks failed"  # --llm none: nothing extracted yet
    assert main(["delete", ix, "--doc", "nope"]) == 1 and "--documents" in capsys.readouterr().err
    (d / "b.md").write_text("Beta is a lake now.")  # edited: indexing again replaces it
    assert main(["index", ix, str(d), "--llm", "none", "--embedder", "hashing", "-q"]) == 0
    assert "1 changed documents replaced" in capsys.readouterr().out


def test_a_fact_on_page_3_of_a_pdf_is_cited_with_its_file_and_page(tmp_path: Path) -> None:
    import json

    from conftest import ANSWER_PROMPT, openie_llm
    from t2rag.api import T2RAG
    from t2rag.config import IndexConfig
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index.builder import TripleIndex
    from t2rag.llm.scripted import ScriptedLLM

    d = tmp_path / "docs"
    d.mkdir()
    filler = " ".join(["Plain words fill this page of the survey report."] * 6)
    # page 2 has no text layer (a scanned page): page 3 is still page 3
    _pdf(d / "survey.pdf", [filler, "", "Orvel Dam was built by Tamsin Kree in 1911. " + filler,
                           "An appendix lists the gauges."])
    (d / "notes.md").write_text("Kree Bay is named after the engineer.")
    docs = load_corpus(d)
    pdf = next(x for x in docs if x.title == "survey")
    assert pdf.source == str(d / "survey.pdf") and len(pdf.pages) == 4 and pdf.pages[1] == pdf.pages[2]
    cfg = IndexConfig.from_dict({"chunk": {"size": 20, "overlap": 2}})
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder(), config=cfg) as ix:
        ix.add(docs, llm=openie_llm())
        chunks = list(ix.store.iter_chunks())
        located = ix.store.chunk_locations([c.id for c in chunks])
    pages = {loc.page for loc in located.values() if loc.doc == "survey"}
    assert pages == {1, 3, 4} and all(loc.page is None for loc in located.values() if loc.doc == "notes")
    dam = [located[c.id] for c in chunks if "Tamsin Kree in 1911" in c.text]
    assert dam and all(loc.page == 3 and loc.last_page == 3 for loc in dam)
    assert dam[0].label() == f"{d / 'survey.pdf'}, p. 3"
    assert all(loc.page == loc.last_page for loc in located.values() if loc.doc == "survey")  # page by page
    assert [pdf.text[loc.start:loc.end] for c in chunks if (loc := located[c.id]).doc == "survey"] == [
        c.text for c in chunks if located[c.id].doc == "survey"]

    llm = ScriptedLLM(rules=[(ANSWER_PROMPT, {"reasoning": "r", "answer": "Tamsin Kree"}),
                             ("Question:", {"triples": [["Orvel Dam", "built by", "?answer"]]})])
    with T2RAG.open(tmp_path / "ix", llm=llm, embedder=HashingEmbedder()) as rag:
        a = rag.ask("Who built the Orvel Dam?")
        read = [c for c in a.answer_chunks if "Tamsin Kree in 1911" in rag.passages([c.id])[0].text]
    assert read and read[0].label() == f"{d / 'survey.pdf'}, p. 3" and read[0].page == 3
    assert json.loads(json.dumps(a.to_dict()))["answer_chunks"][0]["source"]  # REST and MCP carry it


def test_edit_add_remove_and_index_again_equals_a_fresh_build(tmp_path: Path, monkeypatch: Any, capsys: Any) -> None:
    import sqlite3

    from conftest import openie_llm
    from t2rag.cli import common as cli_common
    from t2rag.cli import main

    calls: list[Any] = []

    def scripted(args: Any, manifest: Any = None) -> Any:
        llm = openie_llm()
        calls.append(llm)
        return llm

    monkeypatch.setattr(cli_common, "llm_from_args", scripted)

    def build(folder: Path, ix: Path, *extra: str) -> None:
        assert main(["index", str(ix), str(folder), "--llm", "scripted", "--embedder", "hashing",
                     "-q", *extra]) == 0

    def state(ix: Path) -> dict[str, Any]:
        db = sqlite3.connect(ix / "meta.sqlite")
        q = {"docs": "SELECT doc, chunk_id, seq, page, span_start, span_end FROM doc_chunks",
             "chunks": "SELECT id, title, text FROM chunks", "props": "SELECT id, text FROM propositions",
             "links": "SELECT prop_id, chunk_id FROM prop_chunks", "triples": "SELECT * FROM triples"}
        out = {k: sorted(db.execute(v).fetchall()) for k, v in q.items()}
        db.close()
        return out

    d = tmp_path / "docs"
    d.mkdir()
    (d / "a.md").write_text("Alpha is a town in Borduria. It was founded by Casimir.")
    (d / "b.md").write_text("Beta is a river in Syldavia. It flows through Klow.")
    (d / "c.md").write_text("Gamma is a painter from Klow.")
    elsewhere = tmp_path / "other.md"
    elsewhere.write_text("Delta is a lake near Varn.")
    ix = tmp_path / "ix"
    build(d, ix)
    build(elsewhere, ix)  # a document from outside the folder: --remove-missing leaves it alone
    (d / "b.md").write_text("Beta is a canal in Syldavia. It reaches Brisk.")  # edited
    (d / "c.md").unlink()  # removed
    (d / "e.md").write_text("Epsilon is a bridge over the Beta.")  # added
    calls.clear()
    build(d, ix, "--remove-missing")
    assert "removed 1 documents whose files are gone: c" in capsys.readouterr().out
    prompts = [c["messages"][-1]["content"] for llm in calls for c in llm.calls]
    assert prompts and all("Alpha" not in p for p in prompts)  # LLM work only for new chunks

    fresh = tmp_path / "fresh"
    build(d, fresh)
    build(elsewhere, fresh)
    assert state(ix) == state(fresh)
