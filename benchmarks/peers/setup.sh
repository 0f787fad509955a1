#!/usr/bin/env bash
# The peer systems' environment, apart from T2RAG's: benchmarks/peers/.venv with the exact
# versions that ran offline on this kind of machine (../shared/peers/venv-freeze.txt), installed
# without dependency resolution (the peers' own pins, torch 2.5.1 with vllm, cannot be met here),
# a stub for the vllm import they make at load time, and working copies of the authors' T2RAG
# and of RAPTOR's source (run from the copies; nothing of them enters the t2rag package).
#   benchmarks/peers/setup.sh [SHARED_DIR]   (default: ../shared next to the project)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
shared="${1:-$here/../../../shared}"
py="${PYTHON:-python3.11}"
command -v "$py" >/dev/null 2>&1 || py=python3
[ -x "$here/.venv/bin/python" ] || "$py" -m venv "$here/.venv"
"$here/.venv/bin/python" -m pip install -q --upgrade pip
"$here/.venv/bin/python" -m pip install -q --no-deps -r "$here/requirements.txt"
# hipporag and the authors' code import vllm at module load even on the OpenAI path.
mkdir -p "$here/stubs/vllm"
cat > "$here/stubs/vllm/__init__.py" <<'PY'
"""Stand-in for vllm (not installable here): the peers import it at load time but, pointed at an
OpenAI-compatible server, never use it. Using it fails loudly."""


class SamplingParams:
    def __init__(self, *args, **kwargs):
        raise ImportError("vllm is not installed: use an OpenAI-compatible endpoint")


class LLM(SamplingParams):
    pass
PY
if [ -d "$shared/peers/parthsarthi03-raptor" ]; then
  rm -rf "$here/work/parthsarthi03-raptor" && mkdir -p "$here/work" && cp -r "$shared/peers/parthsarthi03-raptor" "$here/work/"
else
  echo "peers/setup.sh: $shared/peers/parthsarthi03-raptor not found; RAPTOR will not run" >&2
fi
if [ -d "$shared/peers/rockcor-T2RAG" ]; then
  rm -rf "$here/work/rockcor-T2RAG" && mkdir -p "$here/work" && cp -r "$shared/peers/rockcor-T2RAG" "$here/work/"
else
  echo "peers/setup.sh: $shared/peers/rockcor-T2RAG not found; the authors' T2RAG will not run" >&2
fi
echo "peers/setup.sh: ready ($here/.venv)" >&2
