"""T2RAG as a LangChain retriever: the passages an answer read, with the answer, its resolved
facts and its trace in their metadata (``pip install 't2rag[langchain]'``)."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from t2rag.api import T2RAG
from t2rag.llm.base import LLM


class T2RAGRetriever(BaseRetriever):
    """Answer the query with T2RAG over ``index`` and return the passages the answer read,
    best first. Each ``Document``'s metadata holds its ``title`` and ``chunk_id``, and the
    whole run's ``answer``, ``termination``, ``resolved_facts`` and ``trace`` (per round), so a
    chain can cite the facts or show why the answer was given. ``llm`` is a backend spec
    (``"local"``, ``"openai:gpt-4o-mini"``, ...) or an ``LLM``; ``config`` any QueryConfig
    fields. The index and model open on first use and stay open (``close()`` frees them)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: str
    llm: str | LLM = "local"
    config: dict[str, Any] | None = None
    _rag: T2RAG | None = PrivateAttr(default=None)

    def _engine(self) -> T2RAG:
        if self._rag is None:
            self._rag = T2RAG.open(self.index, llm=self.llm)
        return self._rag

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        rag = self._engine()
        answer = rag.ask(query, self.config)
        shared = {"answer": answer.answer, "termination": answer.termination,
                  "resolved_facts": [f.triple for f in answer.resolved],
                  "trace": answer.to_dict()["rounds"]}
        passages = rag.passages([c.id for c in answer.answer_chunks])
        return [Document(page_content=c.text, metadata={"title": c.title, "chunk_id": c.id, **shared})
                for c in passages]

    def close(self) -> None:
        if self._rag is not None:
            self._rag.close()
            self._rag = None
