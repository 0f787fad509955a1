"""Adapters that let other frameworks use T2RAG through its public API (optional extras)."""
