"""A test helper program: the real MCP server over stdio for the index in argv[1], answering
with a scripted LLM (so the test is deterministic and offline)."""

from __future__ import annotations

import sys

from t2rag.llm.scripted import ScriptedLLM
from t2rag.service.mcp_server import build_server, serve_stdio
from t2rag.service.served import Service

ANSWER_PROMPT = r"Write the answer|Notes from the search"  # either form of the answer prompt

if __name__ == "__main__":
    llm = ScriptedLLM(rules=[
        ("Placeholders to fill", {"bindings": [{"placeholder": "?answer", "value": "Alpha", "evidence": [1]}]}),
        (ANSWER_PROMPT, {"reasoning": "", "answer": "Alpha"}),
        ("Question:", {"triples": [["?answer", "is a town in", "Borduria"]]}),
        ("(?i)entities", {"entities": ["Gamma", "Borduria"]}),
        ("(?i)triples", {"triples": [["Gamma", "is a town in", "Borduria"]]}),
    ])
    service = Service(sys.argv[1], llm)
    try:
        serve_stdio(build_server(service, allow_writes="--allow-writes" in sys.argv))
    finally:
        service.close()
