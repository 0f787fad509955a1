#!/usr/bin/env bash
# Install everything the tests need into .venv, then lint, type-check and run every test
# (including the ones marked local_model, which run the real bundled 0.5B model).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --dev --model small
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy src
.venv/bin/lint-imports --no-cache  # the layers in pyproject.toml: nothing imports upwards
.venv/bin/python -m pytest -q "$@"
