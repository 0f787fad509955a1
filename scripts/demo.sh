#!/usr/bin/env bash
# Install T2RAG with the offline model into .venv and run the demo (t2rag demo options pass through).
set -euo pipefail
cd "$(dirname "$0")/.."
model=default
case " $* " in *local:small*) model=small ;; esac
bash scripts/setup.sh --model "$model"
.venv/bin/t2rag demo "$@"
