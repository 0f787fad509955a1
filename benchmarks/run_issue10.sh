#!/usr/bin/env bash
# The issue-10 runs (1.5B model, MiniLM, all 70 dev questions), in the order they are needed.
# Each step resumes where it stopped; the LLM response cache makes repeated stages free.
# A method whose code changed is re-run by moving its predictions aside first (superseded/).
set -euo pipefail
cd "$(dirname "$0")/.."
bench() {  # DATASET OPENIE METHODS
  .venv/bin/t2rag bench --dataset "$1" --data-dir ../shared/data --llm local --parallel 2 --embedder minilm \
    --openie-from "$2" --limit 70 --out "results/$1-local" --methods "$3" -q
}
HOT=results/hotpotqa-local-small/openie-local-small.json
MUS=../shared/data/musique_openie_gpt-3.5-turbo-1106.json
bench musique "$MUS" standard,ircot,t2rag
bench hotpotqa "$HOT" standard,t2rag
bench musique "$MUS" t2rag_notes
bench hotpotqa "$HOT" t2rag_notes
bench hotpotqa "$HOT" ircot
bench musique "$MUS" t2rag_single,t2rag_nolookback,t2rag_allplans
bench hotpotqa "$HOT" t2rag_single,t2rag_nolookback,t2rag_allplans
