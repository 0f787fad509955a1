#!/usr/bin/env bash
# Install T2RAG with the default offline model into .venv and run the demo.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --model default
.venv/bin/t2rag demo "$@"
