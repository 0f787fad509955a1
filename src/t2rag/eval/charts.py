"""PNG charts of a benchmark (matplotlib, Agg backend): EM per method, and EM against tokens."""

from __future__ import annotations

from pathlib import Path
from typing import Any

Runs = list[tuple[str, dict[str, Any]]]


def _figure(width: float = 7.0, height: float = 4.0) -> Any:
    # The object API with an explicit Agg canvas: no display needed, no global backend switch.
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _methods(runs: Runs) -> list[str]:
    names: dict[str, None] = {}
    for _, m in runs:
        names.update(dict.fromkeys(m["methods"]))
    return list(names)


def plot_em(runs: Runs, path: Path) -> None:
    """Grouped bars: one group per method, one bar per run."""
    methods = _methods(runs)
    fig = _figure(max(6.0, 1.1 * len(methods) + 2))
    ax = fig.subplots()
    width = 0.8 / max(len(runs), 1)
    for j, (label, m) in enumerate(runs):
        xs = [i + (j - (len(runs) - 1) / 2) * width for i in range(len(methods))]
        ems = [100 * (m["methods"].get(name, {}).get("em") or 0.0) for name in methods]
        bars = ax.bar(xs, ems, width=width, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=7)
    ax.set_xticks(range(len(methods)), methods, rotation=20)
    ax.set_ylabel("EM (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Exact match per method")
    if len(runs) > 1:
        ax.legend(fontsize=7)
    fig.savefig(path)


def plot_em_vs_tokens(runs: Runs, path: Path) -> None:
    """One point per method and run: LLM tokens per question (x) against EM (y)."""
    fig = _figure()
    ax = fig.subplots()
    markers = "osD^v<>"
    for j, (label, m) in enumerate(runs):
        xs, ys, names = [], [], []
        for name, s in m["methods"].items():
            tokens = (s.get("prompt_tokens_per_q") or 0.0) + (s.get("completion_tokens_per_q") or 0.0)
            xs.append(tokens)
            ys.append(100 * (s.get("em") or 0.0))
            names.append(name)
        ax.scatter(xs, ys, marker=markers[j % len(markers)], label=label)
        for x, y, name in zip(xs, ys, names):
            ax.annotate(name, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel("LLM tokens per question (prompt + completion)")
    ax.set_ylabel("EM (%)")
    ax.set_title("Accuracy against online cost")
    if len(runs) > 1:
        ax.legend(fontsize=7)
    fig.savefig(path)
