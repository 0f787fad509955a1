"""The trace viewer in a real headless Chromium (Debian's package, driven by Playwright):
ask a question against the scripted LLM, see the rounds and the answer render, and the index
view; saves a screenshot (docs/viewer.png is the README's copy)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from t2rag.service.served import Service
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


def _save(page: object, tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    if os.environ.get("T2RAG_SAVE_SCREENSHOTS"):  # docs/viewer.png and docs/viewer-phone.png are the README's
        shutil.copy(path, Path(os.environ["T2RAG_SAVE_SCREENSHOTS"]) / name)
    return path


def test_viewer_answers_first_cites_pages_keeps_history_and_uploads(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    exe = _browser_or_skip()
    (tmp_path / "notes.md").write_text("Gamma is a town in Borduria, on the Oster river.")
    with serving(Service(located_index(tmp_path), replies())) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(url)
        page.click("#ask-button")  # an empty question is named, not ignored
        assert page.inner_text("#status") == "Type a question first."
        page.fill("#question", "Which town is in Borduria?")
        page.click("#ask-button")
        page.wait_for_selector("#answer", timeout=20_000)
        assert page.inner_text("#status") == ""  # the empty-question message is gone
        assert page.inner_text("#answer .answer") == "Alpha"
        # the answer comes first, the trace below it
        assert page.locator("#answer").bounding_box()["y"] < page.locator("#trace-box").bounding_box()["y"]
        assert page.inner_text("#decomposition").count("?answer") == 1 and page.locator("section.round").count() == 1
        assert "the answer step reads these passages" in page.inner_text("section.round")
        assert "papers/Alpha.pdf, p. 2" in page.inner_text("#answer")  # sources cite file and page
        page.locator("#answer a.source").first.click()  # a source opens its passage
        page.wait_for_selector("#reader:not(.hidden)", timeout=10_000)
        assert "Alpha is a town in Borduria." in page.inner_text("#reader-text")
        assert "?answer=" in page.url  # a permalink to this answer
        permalink = page.url
        _save(page, tmp_path, "viewer.png")
        page.click("#reader-close")

        page.click("#tab-history")
        page.wait_for_selector("#history .history-item", timeout=10_000)
        assert "Which town is in Borduria?" in page.inner_text("#history")
        page.goto(permalink)  # the permalink shows the stored answer with its trace
        page.wait_for_selector("#answer", timeout=10_000)
        assert page.inner_text("#answer .answer") == "Alpha" and page.locator("section.round").count() == 1

        page.click("#tab-index")
        page.wait_for_selector("#documents", timeout=10_000)
        assert "papers/Alpha.pdf" in page.inner_text("#documents")
        page.fill("#fact-query", "river Syldavia")
        page.locator("#fact-query").press("Enter")
        page.wait_for_selector("#fact-results .fact", timeout=10_000)
        assert "Beta" in page.inner_text("#fact-results")
        page.set_input_files("#upload", str(tmp_path / "notes.md"))
        page.wait_for_function("document.body.innerText.includes('notes.md added')", timeout=30_000)
        page.wait_for_function("document.querySelector('#documents') && "
                               "document.querySelector('#documents').innerText.includes('notes')", timeout=10_000)
        browser.close()
    assert (tmp_path / "viewer.png").stat().st_size > 10_000


def test_viewer_holds_at_phone_width_and_cancels(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    exe = _browser_or_skip()
    service = Service(located_index(tmp_path), replies(delay=1.5))
    with serving(service) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 390, "height": 844}, is_mobile=True)
        page.goto(url)
        page.fill("#question", "Which town is in Borduria?")
        page.click("#ask-button")
        page.wait_for_selector("#decomposition", timeout=20_000)
        assert "step" in page.inner_text("#status")  # a step indicator while it works
        page.click("#cancel-button")
        page.wait_for_function("document.querySelector('#status').innerText.startsWith('Cancelled')", timeout=10_000)
        assert page.locator("#answer").count() == 0
        for _ in range(100):  # the server stops the question at its next step and frees the slot
            if service._admitted == 0:
                break
            page.wait_for_timeout(100)
        assert service._admitted == 0
        assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing overflows the phone
        page.fill("#question", "Which town is in Borduria?")
        page.click("#ask-button")
        page.wait_for_selector("#answer", timeout=30_000)
        _save(page, tmp_path, "viewer-phone.png")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        browser.close()


def test_docs_favicon_and_a_busy_port(tmp_path: Path, capsys: object) -> None:
    import socket

    import httpx

    from t2rag.cli import main

    with serving(Service(located_index(tmp_path), replies())) as url:
        docs = httpx.get(f"{url}/docs").text
        assert "cdn" not in docs.lower() and "static-offline-docs" in docs  # works without internet
        schema = httpx.get(f"{url}/openapi.json").json()
        ops = [op for path in schema["paths"].values() for op in path.values()]
        assert ops and all(op.get("description") and op.get("summary") for op in ops)  # every operation described
        icon = httpx.get(f"{url}/favicon.ico")
        assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg")
        port = int(url.rsplit(":", 1)[1])
        with socket.socket() as held:  # the serving port is taken: one clear line, exit 1
            code = main(["serve", str(tmp_path / "ix"), "--port", str(port), "--llm", "scripted"])
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert code == 1 and f"cannot serve on 127.0.0.1:{port}" in err and "Traceback" not in err
    held.close()
