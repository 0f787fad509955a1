#!/usr/bin/env bash
# Reproduce the accuracy runs (1.5B model, MiniLM, 2 decoding slots) of the README and docs:
# T2RAG against chunk RAG (standard) and IRCoT on MuSiQue, HotpotQA and Medical, and T2RAG's
# ablations. Each step resumes where it stopped and the LLM response cache makes repeated
# stages free, so re-running this script only computes what is missing. A method whose code
# changed is re-run by moving its predictions aside first (out of the run directory).
# STEPS picks what to run (default: all): e.g. STEPS="medical planform" bash benchmarks/reproduce_accuracy.sh
set -euo pipefail
PARALLEL=${PARALLEL:-2}
STEPS=${STEPS:-"main medical planform reading failures"}
cd "$(dirname "$0")/.."
bench() {  # DATASET OPENIE METHODS LIMIT
  .venv/bin/t2rag bench --dataset "$1" --data-dir ../shared/data --llm local --parallel "$PARALLEL" --embedder minilm \
    --openie-from "$2" --limit "$4" --out "results/$1-local" --methods "$3" -q
}
HOT=results/hotpotqa-local-small/openie-local-small.json
MUS=../shared/data/musique_openie_gpt-3.5-turbo-1106.json
MED=../shared/data/medical_openie_gpt-4o-mini.json
for step in $STEPS; do
  case "$step" in
    main)  # the headline: all 70 dev questions of the Wikipedia sets
      bench musique "$MUS" standard,ircot,t2rag 70
      bench hotpotqa "$HOT" standard,ircot,t2rag 70 ;;
    medical)  # Medical's first 100 dev questions (IRCoT and NOR on the first 30)
      bench medical "$MED" standard,t2rag,bm25 100
      bench medical "$MED" ircot,nor 30 ;;
    planform)  # the plan levers (docs/plan-repair.md), paired on the first 30
      bench musique "$MUS" t2rag_planform,t2rag_norepair 30
      bench hotpotqa "$HOT" t2rag_planform,t2rag_norepair 30 ;;
    reading)  # the answer-step levers (docs/plan-repair.md), paired on the questions named there
      bench musique "$MUS" t2rag_hopread,t2rag_answercheck,t2rag_hopfirst 70
      bench hotpotqa "$HOT" t2rag_hopread,t2rag_answercheck 70
      bench hotpotqa "$HOT" t2rag_hopfirst 30
      bench medical "$MED" t2rag_hopread 30 ;;
    ablations)  # earlier levers, on the first 30
      bench musique "$MUS" t2rag_single,t2rag_nolookback,t2rag_fallback,t2rag_allexamples 30
      bench hotpotqa "$HOT" t2rag_single,t2rag_nolookback,t2rag_fallback,t2rag_allexamples 30 ;;
    failures)
      for ds in musique hotpotqa medical; do
        .venv/bin/python benchmarks/failures.py "results/$ds-local" --data-dir ../shared/data --method t2rag
      done ;;
    *) echo "reproduce_accuracy.sh: unknown step $step" >&2; exit 2 ;;
  esac
done
