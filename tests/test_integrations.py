"""Framework adapters, held to the frameworks' own base-class contracts."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_service import index, replies  # noqa: F401 - the shared two-document index fixture


def test_the_langchain_retriever_returns_the_passages_the_answer_read(index: Path) -> None:  # noqa: F811
    pytest.importorskip("langchain_core")
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from t2rag.integrations.langchain import T2RAGRetriever

    retriever = T2RAGRetriever(index=str(index), llm=replies())
    try:
        assert isinstance(retriever, BaseRetriever)
        docs = retriever.invoke("Which town is in Borduria?")  # the Runnable interface chains use
        assert docs and all(isinstance(d, Document) for d in docs)
        assert docs[0].metadata["title"] == "Alpha" and docs[0].page_content == "Alpha is a town in Borduria."
        assert docs[0].metadata["answer"] == "Alpha" and docs[0].metadata["termination"]
        assert isinstance(docs[0].metadata["trace"], list)
        batch = retriever.batch(["Which town is in Borduria?", "Which river is in Syldavia?"])
        assert len(batch) == 2 and all(batch)
    finally:
        retriever.close()
