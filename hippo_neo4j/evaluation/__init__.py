"""Evaluation: datasets (``datasets``), Recall@k / AR@k and tables (``metrics``), the harness behind ``hippo eval``
(``harness``), and an independent in-process implementation of the retrieval formulas (``reference``) that
checks the server path and is the benchmarks' baseline."""

from __future__ import annotations

from .datasets import Dataset, Question, default_namespace, find_openie, load_dataset, tau_namespace
from .harness import (
    ENTITY_SOURCES,
    SWEEP_DAMPINGS,
    SWEEP_TAUS,
    IndexOutcome,
    ReusingEncoder,
    corpus_fingerprint,
    diagnose,
    diagnostic_entities,
    ensure_index,
    evaluate,
    query_entities,
    sweep,
    uses_entities,
)
from .metrics import (
    ALL_RECALL_KS,
    RECALL_KS,
    all_recall_at,
    metric_names,
    percentile,
    recall_at,
    summarize,
    summary_table,
    sweep_table,
)

__all__ = [
    "ALL_RECALL_KS", "ENTITY_SOURCES", "RECALL_KS", "SWEEP_DAMPINGS", "SWEEP_TAUS", "Dataset", "IndexOutcome",
    "Question", "ReusingEncoder", "all_recall_at", "corpus_fingerprint", "default_namespace", "diagnose",
    "diagnostic_entities", "ensure_index", "evaluate", "find_openie", "load_dataset", "metric_names", "percentile",
    "query_entities", "recall_at", "summarize", "summary_table", "sweep", "sweep_table", "tau_namespace", "uses_entities",
]
