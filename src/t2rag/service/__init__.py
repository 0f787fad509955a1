"""T2RAG as a service: a REST API with streamed query events, a browser trace viewer, and an
MCP server for agents; all of them clients of the public API (``t2rag.api.T2RAG``)."""
