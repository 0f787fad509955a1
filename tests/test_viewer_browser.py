"""The trace viewer in a real headless Chromium (Debian's package, driven by Playwright):
ask a question against the scripted LLM, see the rounds and the answer render, and the index
view; saves a screenshot (docs/viewer.png is the README's copy)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from t2rag.service.engine import Service
from test_service import DOCS, replies, serving


def located_index(tmp_path: Path) -> Path:
    """The service tests' corpus, each document read from page 2 of a PDF."""
    from t2rag.embed.hashing import HashingEmbedder
    from t2rag.index import Document, TripleIndex
    from t2rag.index.importer import Extraction
    from t2rag.types import Triple

    imported = {f"{t}\n{x}": Extraction([], [Triple(*tr) for tr in trs]) for t, x, trs in DOCS}
    with TripleIndex.create(tmp_path / "ix", embedder=HashingEmbedder()) as ix:
        ix.add([Document(t, x, source=f"papers/{t}.pdf", pages=(0, 0)) for t, x, _ in DOCS], imported=imported)
    return tmp_path / "ix"

CHROMIUM = os.environ.get("T2RAG_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def _browser_or_skip() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (scripts/setup.sh --dev installs it)")
        pytest.skip("chromium is not installed")
    return CHROMIUM


def test_viewer_renders_rounds_answer_and_index(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    exe = _browser_or_skip()
    with serving(Service(located_index(tmp_path), replies())) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(url)
        page.fill("#question", "Which town is in Borduria?")
        page.click("#ask-button")
        page.wait_for_selector("#answer", timeout=20_000)
        assert page.inner_text("#decomposition").count("?answer") == 1
        assert page.locator("section.round").count() == 1
        # a one-triple plan is a last-hop read: the round retrieves, the answer step reads it
        assert "the answer step reads these passages" in page.inner_text("section.round")
        assert page.inner_text("#answer .answer") == "Alpha"
        assert "papers/Alpha.pdf, p. 2" in page.inner_text("#answer")  # sources cite file and page
        page.locator("details.fact summary").first.click()  # expands to the source passage
        page.wait_for_selector("details.fact .passage", timeout=10_000)
        assert "Borduria" in page.inner_text("details.fact .passage")
        page.screenshot(path=str(tmp_path / "viewer.png"), full_page=True)
        page.click("#tab-index")
        page.wait_for_selector("#counts", timeout=10_000)
        assert "propositions" in page.inner_text("#counts")
        browser.close()
    assert (tmp_path / "viewer.png").stat().st_size > 10_000
    if os.environ.get("T2RAG_SAVE_SCREENSHOT"):
        shutil.copy(tmp_path / "viewer.png", os.environ["T2RAG_SAVE_SCREENSHOT"])
