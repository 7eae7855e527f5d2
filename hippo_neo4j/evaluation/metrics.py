"""Recall@k and all-recall AR@k (DESIGN.md §1), and the tables ``hippo eval`` prints (recall, with the reader's
EM / F1 next to it, and the cost of the reader and of iterative retrieval)."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..retrieve import MODES

RECALL_KS: tuple[int, ...] = (1, 2, 5, 10)
ALL_RECALL_KS: tuple[int, ...] = (2, 5)
# the name of a mode's iterative (IRCoT) variant in ``hippo eval`` results: "hipporag1+ircot"
IRCOT_SUFFIX = "+ircot"


def base_mode(variant: str) -> str:
    """The registry mode behind a result row ("hipporag1+ircot" -> "hipporag1")."""
    return variant[: -len(IRCOT_SUFFIX)] if variant.endswith(IRCOT_SUFFIX) else variant


def recall_at(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """|gold ∩ top-k| / |gold| (0 for a question without gold passages)."""
    gold_set = set(gold)
    if not gold_set:
        return 0.0
    return len(gold_set & set(retrieved[:k])) / len(gold_set)


def all_recall_at(retrieved: Sequence[str], gold: Iterable[str], k: int) -> float:
    """1.0 if every gold passage is in the top-k, else 0.0."""
    gold_set = set(gold)
    return float(bool(gold_set) and gold_set <= set(retrieved[:k]))


def metric_names(ks: Sequence[int] = RECALL_KS, all_ks: Sequence[int] = ALL_RECALL_KS) -> list[str]:
    return [f"recall@{k}" for k in ks] + [f"all_recall@{k}" for k in all_ks]


def summarize(
    rankings: Sequence[Sequence[str]],
    golds: Sequence[Iterable[str]],
    ks: Sequence[int] = RECALL_KS,
    all_ks: Sequence[int] = ALL_RECALL_KS,
) -> dict[str, float]:
    """Recall@k and AR@k averaged over questions (``rankings[i]`` is question i's retrieved ids, best first)."""
    if len(rankings) != len(golds):
        raise ValueError("one ranking per question")
    n = len(rankings)
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = sum(recall_at(r, g, k) for r, g in zip(rankings, golds)) / n if n else 0.0
    for k in all_ks:
        out[f"all_recall@{k}"] = sum(all_recall_at(r, g, k) for r, g in zip(rankings, golds)) / n if n else 0.0
    return out


def percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def short(metrics: dict[str, float]) -> str:
    return " ".join(f"{_label(k)} {v * 100:.1f}" for k, v in metrics.items())


def _label(metric: str) -> str:
    if metric in ("em", "f1"):
        return metric.upper()
    return metric.replace("all_recall@", "AR@").replace("recall@", "R@")


def summary_table(summary: dict[str, dict[str, float]], diagnostics: dict[str, dict[str, Any]] | None = None) -> str:
    """A markdown table: one row per mode, recall in percent."""
    metrics = list(next(iter(summary.values())).keys()) if summary else metric_names()
    head = ["mode"] + [_label(m) for m in metrics] + (["fell back"] if diagnostics else [])
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for mode, values in summary.items():
        cells = [mode] + [f"{values.get(m, 0.0) * 100:.1f}" for m in metrics]
        if diagnostics:
            d = diagnostics.get(mode, {})
            graph = base_mode(mode) in MODES and MODES[base_mode(mode)].retriever.graph
            cells.append(f"{d.get('fell_back', 0)}/{d.get('questions', 0)}" if graph else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def sweep_table(rows: Sequence[dict[str, Any]]) -> str:
    """A markdown table: one row per (τ, damping) cell, recall in percent."""
    if not rows:
        return "(no sweep)"
    metrics = list(rows[0]["summary"].keys())
    head = ["τ", "damping", "synonym edges"] + [_label(m) for m in metrics]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---:"] * len(head)) + "|"]
    for r in rows:
        cells = [f"{r['synonym_threshold']:g}", f"{r['damping']:g}", str(r["synonym_edges"])]
        cells += [f"{r['summary'][m] * 100:.1f}" for m in metrics]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def qa_table(qa: dict[str, dict[str, Any]], diagnostics: dict[str, dict[str, Any]] | None = None) -> str:
    """A markdown table of the reader per mode: EM and F1 in percent, answers parsed, calls, tokens, seconds;
    for an iterative variant also the reasoning steps' calls and tokens."""
    head = ["mode", "EM", "F1", "parsed", "failed", "reader calls", "prompt tok", "completion tok", "reader s",
            "step calls", "step tok"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for mode, q in qa.items():
        d = (diagnostics or {}).get(mode, {})
        steps = "llm_calls" in d
        cells = [
            mode, f"{q['em'] * 100:.1f}", f"{q['f1'] * 100:.1f}", f"{q['parsed']}/{q['questions']}", str(q["failed"]),
            str(q["reader_calls"]), f"{q['reader_prompt_tokens']:,}", f"{q['reader_completion_tokens']:,}",
            f"{q['reader_seconds']:.1f}",
            str(d["llm_calls"]) if steps else "-",
            f"{d['prompt_tokens'] + d['completion_tokens']:,}" if steps else "-",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def iterative_table(diagnostics: dict[str, dict[str, Any]]) -> str:
    """A markdown table of the iterative variants: reasoning calls, tokens, time and why the loops stopped."""
    rows = {m: d for m, d in diagnostics.items() if "llm_calls" in d}
    if not rows:
        return "(no iterative variant)"
    head = ["mode", "steps ≤", "LLM calls", "prompt tok", "completion tok", "LLM s", "stopped", "errors"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for mode, d in rows.items():
        stopped = ", ".join(f"{k} {v}" for k, v in d["stopped"].items())
        lines.append("| " + " | ".join([
            mode, str(d["steps"]), str(d["llm_calls"]), f"{d['prompt_tokens']:,}", f"{d['completion_tokens']:,}",
            f"{d['llm_seconds']:.1f}", stopped, str(d["errors"]),
        ]) + " |")
    return "\n".join(lines)
