"""Files as users keep them -- text, Markdown, reStructuredText, HTML, PDF and Word -- read
into documents, with a note for each file that could not be (never a silent skip).

Text is decoded as UTF-8 (a byte-order mark is honoured); other encodings are detected
(charset-normalizer) and named in the note, so a Latin-1 file is read, not fatal.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree

TEXT_SUFFIXES = (".txt", ".text", ".md", ".markdown", ".rst")
FORMATS = TEXT_SUFFIXES + (".html", ".htm", ".pdf", ".docx")
FORMAT_NAMES = "text (.txt .md .rst), HTML, PDF and Word (.docx)"


@dataclass
class FileText:
    """What one file gave: its title and text, or why it gave nothing; a note either way."""

    title: str
    text: str = ""
    note: str = ""  # e.g. "decoded as cp1252", "empty: skipped", "unsupported format: skipped"
    skipped: bool = False
    pages: tuple[int, ...] = ()  # paged formats: where each page starts in ``text``


@dataclass
class FolderRead:
    files: list[FileText] = field(default_factory=list)

    @property
    def read(self) -> list[FileText]:
        return [f for f in self.files if not f.skipped]

    def notes(self) -> list[str]:
        return [f"{f.title}: {f.note}" for f in self.files if f.note]


def read_file(path: Path, title: str) -> FileText:
    """The text of one file by its suffix; a file that cannot be read is skipped with a note."""
    suffix = path.suffix.lower()
    pages: tuple[int, ...] = ()
    try:
        if suffix in TEXT_SUFFIXES:
            text, note = decode(path.read_bytes())
        elif suffix in (".html", ".htm"):
            raw, note = decode(path.read_bytes())
            text = html_text(raw)
        elif suffix == ".pdf":
            (text, pages), note = pdf_pages(path), ""
        elif suffix == ".docx":
            text, note = docx_text(path), ""
        else:
            return FileText(title, note=f"unsupported format (T2RAG reads {FORMAT_NAMES}): skipped", skipped=True)
    except (OSError, ValueError, zipfile.BadZipFile, ElementTree.ParseError) as e:
        return FileText(title, note=f"cannot be read ({' '.join(str(e).split())[:120]}): skipped", skipped=True)
    if not text.strip():
        return FileText(title, note="no text (empty, or a scanned PDF without a text layer): skipped", skipped=True)
    if not pages:
        text = text.strip()
    return FileText(title, text, note, pages=pages)


def decode(data: bytes) -> tuple[str, str]:
    """Bytes as text and a note naming the encoding when it was not UTF-8."""
    for bom, codec in ((b"\xef\xbb\xbf", "utf-8-sig"), (b"\xff\xfe", "utf-16"), (b"\xfe\xff", "utf-16")):
        if data.startswith(bom):
            return data.decode(codec), "" if codec == "utf-8-sig" else f"decoded as {codec}"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise ValueError("not text in any known encoding")
    return str(best), f"not UTF-8; decoded as {best.encoding}"


class _HTMLText(HTMLParser):
    """The visible text of an HTML page: script, style and head content left out, block
    elements kept on lines of their own."""

    BLOCKS = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre"}
    HIDDEN = {"script", "style", "head", "noscript", "template"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.HIDDEN:
            self.hidden += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def html_text(html: str) -> str:
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def pdf_pages(path: Path) -> tuple[str, tuple[int, ...]]:
    """The text layer of every page, pages separated by blank lines, and where each page starts
    in that text (a page without text starts where the next one does)."""
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(path)
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except PdfReadError as e:
        raise ValueError(f"not a readable PDF: {e}") from None
    text, starts, waiting = "", [], 0  # waiting: pages without text, which start where the next does
    for page in pages:
        if not page:
            waiting += 1
            continue
        text += "\n\n" if text else ""
        starts += [len(text)] * (waiting + 1)
        waiting = 0
        text += page
    return text, tuple(starts + [len(text)] * waiting)


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def docx_text(path: Path) -> str:
    """The paragraphs of a Word document's body (tables included), one per line."""
    with zipfile.ZipFile(path) as z:
        root = ElementTree.fromstring(z.read("word/document.xml"))
    paragraphs = ("".join(t.text or "" for t in p.iter(f"{_W}t")) for p in root.iter(f"{_W}p"))
    return "\n".join(re.sub(r"[ \t]+", " ", p).strip() for p in paragraphs if p.strip())
