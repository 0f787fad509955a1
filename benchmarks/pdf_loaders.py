"""Which PDF text extractor T2RAG should use: pypdf, pypdfium2 and pdfminer.six on PDFs made here
(two columns with headings, a table, a long report, a scanned page with no text layer), scored
on how many of each file's sentences come out whole and in reading order, speed and install size.

Run in a scratch environment (none of these but pypdf is a T2RAG dependency):

    python3 -m venv /tmp/loaders && /tmp/loaders/bin/pip install reportlab pypdf pypdfium2 pdfminer.six
    /tmp/loaders/bin/python benchmarks/pdf_loaders.py
"""

from __future__ import annotations

import importlib.metadata as md
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SENTENCES = [f"Sentence {i} says that the {w} river feeds lake number {i * 7}." for i, w in
             enumerate("Varn Oster Kell Brisk Marrow Tamsin Orvel Duskwater Lena Ines Halden Sorrel".split())]


def make_pdfs(folder: Path) -> dict[str, list[str]]:
    """Write the sample PDFs; return each file's sentences as a reader should get them."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, Image, PageTemplate, Paragraph, SimpleDocTemplate, Table

    styles = getSampleStyleSheet()
    truth: dict[str, list[str]] = {}

    # two columns with headings: reading order must finish the left column first
    path = folder / "two_columns.pdf"
    doc = BaseDocTemplate(str(path), pagesize=A4)
    w, h = A4
    frames = [Frame(40, 40, (w - 100) / 2, h - 80, id="left"), Frame(60 + (w - 100) / 2, 40, (w - 100) / 2, h - 80,
                                                                      id="right")]
    doc.addPageTemplates([PageTemplate(frames=frames)])
    story = []
    for i in range(0, len(SENTENCES), 3):
        story.append(Paragraph(f"Heading {i // 3 + 1}", styles["Heading2"]))
        story.append(Paragraph(" ".join(SENTENCES[i:i + 3] * 4), styles["BodyText"]))
    doc.build(story)
    truth[path.name] = SENTENCES

    # a table: each row's cells are one fact
    path = folder / "table.pdf"
    rows = [["River", "Lake", "Length (km)"]] + [[f"{w} river", f"lake {i * 7}", str(100 + i)]
                                                  for i, w in enumerate("Varn Oster Kell Brisk".split())]
    SimpleDocTemplate(str(path), pagesize=A4).build([Paragraph("River lengths", styles["Heading1"]), Table(rows)])
    truth[path.name] = [" ".join(r) for r in rows]

    # a long report: many pages of running text
    path = folder / "report.pdf"
    SimpleDocTemplate(str(path), pagesize=A4).build(
        [Paragraph(" ".join(SENTENCES), styles["BodyText"]) for _ in range(40)])
    truth[path.name] = SENTENCES

    # a scanned page: an image and no text layer (a reader must give nothing, not garbage)
    from PIL import Image as Picture
    from PIL import ImageDraw

    picture = folder / "scan.png"
    scan = Picture.new("L", (800, 200), 255)
    ImageDraw.Draw(scan).text((10, 90), SENTENCES[0], fill=0)
    scan.save(picture)
    path = folder / "scanned.pdf"
    SimpleDocTemplate(str(path), pagesize=A4).build([Image(str(picture), width=400, height=100)])
    truth[path.name] = []
    return truth


def with_pypdf(path: Path) -> str:
    from pypdf import PdfReader

    return "\n\n".join(p.extract_text() or "" for p in PdfReader(path).pages)


def with_pdfium(path: Path) -> str:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return "\n\n".join(page.get_textpage().get_text_range() for page in pdf)
    finally:
        pdf.close()


def with_pdfminer(path: Path) -> str:
    from pdfminer.high_level import extract_text

    return extract_text(str(path))


def score(text: str, sentences: list[str]) -> tuple[float, float]:
    """(share of sentences found whole, share of consecutive pairs found in order)."""
    flat = " ".join(text.split())
    if not sentences:
        return (1.0 if not flat else 0.0), 1.0
    found = [flat.find(s) for s in sentences]
    whole = sum(f >= 0 for f in found) / len(sentences)
    pairs = [(a, b) for a, b in zip(found, found[1:]) if a >= 0 and b >= 0]
    ordered = sum(a < b for a, b in pairs) / len(pairs) if pairs else 0.0
    return whole, ordered


def installed_mb(dist: str) -> float:
    files = md.files(dist) or []
    return sum((f.locate().stat().st_size for f in files if f.locate().is_file()), 0) / 1e6


def main() -> None:
    readers: dict[str, tuple[str, Callable[[Path], str]]] = {
        "pypdf": ("pypdf", with_pypdf), "pypdfium2": ("pypdfium2", with_pdfium),
        "pdfminer.six": ("pdfminer.six", with_pdfminer)}
    with tempfile.TemporaryDirectory() as tmp:
        truth = make_pdfs(Path(tmp))
        print("| reader | version | install MB | " + " | ".join(f"{n}: whole / ordered / ms" for n in truth) + " |")
        print("|---|---|---|" + "---|" * len(truth))
        for name, (dist, read) in readers.items():
            cells = []
            for file, sentences in truth.items():
                times, text = [], ""
                for _ in range(5):
                    t0 = time.perf_counter()
                    text = read(Path(tmp) / file)
                    times.append(time.perf_counter() - t0)
                whole, ordered = score(text, [re.sub(r"\s+", " ", s) for s in sentences])
                cells.append(f"{whole:.2f} / {ordered:.2f} / {1000 * statistics.median(times):.0f}")
            print(f"| {name} | {md.version(dist)} | {installed_mb(dist):.1f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
