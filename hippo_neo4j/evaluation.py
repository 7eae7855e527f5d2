"""The recall harness: load a multi-hop QA dataset, index its corpus (or reuse an index of the same corpus),
run retrieval modes, and score Recall@k and all-recall AR@k (DESIGN.md §1).

A dataset directory is laid out like the HippoRAG release's ``musique_train/`` (``questions.json`` with
``paragraphs[].paragraph_text``, ``corpus.json``, an optional ``openie_*.json`` whose extraction is imported
instead of running an extractor) or like ``sample/`` (``paragraphs[].text``). Gold passages are the
paragraphs with ``is_supporting: true``; their ids are computed exactly as the indexer computes a corpus
entry's id (``PassageIn.passage_id``), so they match the indexed passages.

    dataset = load_dataset("../shared/datasets/musique_train")
    with HippoRAG(namespace=default_namespace(dataset)) as memory:
        ensure_index(memory, dataset)
        result = evaluate(memory, dataset, modes=["hipporag1", "dense", "bm25"])
    print(summary_table(result["summary"]))
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from .core import MODES, HippoConfig, HippoRAG, IndexReport, as_passage, load_openie
from .encoder import Encoder
from .errors import ConfigError, HippoError
from .models import PassageIn, content_hash

log = logging.getLogger(__name__)

RECALL_KS: tuple[int, ...] = (1, 2, 5, 10)
ALL_RECALL_KS: tuple[int, ...] = (2, 5)
SWEEP_TAUS: tuple[float, ...] = (0.8, 0.85, 0.9)
SWEEP_DAMPINGS: tuple[float, ...] = (0.3, 0.5, 0.7)
_DEFAULT_TAU = HippoConfig().synonym_threshold

# What ``hippo eval`` can run: a retrieval mode with config overrides. Ablations of hipporag2 (issue 7):
# without passage nodes (phrase-only walk, hipporag1's aggregation) and with query-to-phrase linking.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "hipporag2": ("hipporag2", {}),
    "hipporag1": ("hipporag1", {}),
    "hybrid-0.3": ("hybrid", {"hybrid_lambda": 0.3}),
    "hybrid-0.5": ("hybrid", {"hybrid_lambda": 0.5}),
    "hybrid-0.7": ("hybrid", {"hybrid_lambda": 0.7}),
    "dense": ("dense", {}),
    "bm25": ("bm25", {}),
    "hipporag2-no-passage-nodes": ("hipporag2", {"passage_nodes": False}),
    "hipporag2-entity-linking": ("hipporag2", {"linking": "entity"}),
}
for _mode in MODES:
    VARIANTS.setdefault(_mode, (_mode, {}))
DEFAULT_VARIANTS: tuple[str, ...] = tuple(v for v in VARIANTS if v != "hybrid")


def uses_entities(variant: str) -> bool:
    """Whether a variant links query entities (and so needs them extracted beforehand)."""
    mode, overrides = VARIANTS[variant]
    return mode in ("hipporag1", "hybrid") or overrides.get("linking") == "entity"


# ------------------------------------------------------------------------------------------------ data


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold: tuple[str, ...]  # passage ids


@dataclass
class Dataset:
    name: str
    root: Path
    passages: list[PassageIn]
    questions: list[Question]
    openie: Path | None = None
    unmatched_gold: list[tuple[str, str]] = field(default_factory=list)  # (question id, paragraph title)

    def subset(self, n: int | None) -> "Dataset":
        """The first ``n`` questions (all passages)."""
        if n is None:
            return self
        return Dataset(self.name, self.root, self.passages, self.questions[:n], self.openie, self.unmatched_gold)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise HippoError(f"Cannot read {path}: {exc}") from None


def find_openie(root: Path) -> Path | None:
    """The dataset's OpenIE file (``openie_*.json``), if it has one."""
    found = sorted(root.glob("openie_*.json"))
    if len(found) > 1:
        log.warning("%s has several OpenIE files; using %s", root, found[0].name)
    return found[0] if found else None


def load_dataset(path: str | Path, *, use_openie: bool = True) -> Dataset:
    """Corpus (with the OpenIE file's extraction attached where it has the passage) and questions."""
    root = Path(path)
    if not root.is_dir():
        raise HippoError(f"{root} is not a dataset directory (expected questions.json and corpus.json).")
    corpus_file, questions_file = root / "corpus.json", root / "questions.json"
    for f in (corpus_file, questions_file):
        if not f.is_file():
            raise HippoError(f"{root} has no {f.name}.")
    raw_corpus = _read_json(corpus_file)
    if not isinstance(raw_corpus, list):
        raise HippoError(f"{corpus_file}: a corpus is a JSON list of {{\"title\", \"text\"}} objects.")
    passages = [as_passage(d) for d in raw_corpus if isinstance(d, (dict, str))]

    openie = find_openie(root) if use_openie else None
    if openie is not None:
        extraction = {p.hash: p.extraction for p in load_openie(openie)}
        passages = [p.model_copy(update={"extraction": extraction.get(p.hash)}) for p in passages]
        missing = sum(p.extraction is None for p in passages)
        if missing:
            log.warning("%s lacks %d corpus passages; the extractor will process them", openie.name, missing)

    by_hash = {p.hash: p.passage_id for p in passages}
    raw_questions = _read_json(questions_file)
    if not isinstance(raw_questions, list):
        raise HippoError(f"{questions_file}: expected a JSON list of questions.")
    questions, unmatched = [], []
    for n, q in enumerate(raw_questions):
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            continue
        qid = str(q.get("id", n))
        gold: list[str] = []
        for para in q.get("paragraphs") or []:
            if not isinstance(para, dict) or not para.get("is_supporting"):
                continue
            title = para.get("title") or ""
            text = para.get("paragraph_text", para.get("text")) or ""
            pid = by_hash.get(content_hash(title, text))
            if pid is None:
                unmatched.append((qid, title))
            elif pid not in gold:
                gold.append(pid)
        questions.append(Question(qid, q["question"], tuple(gold)))
    if unmatched:
        log.warning("%d gold paragraphs match no corpus passage (they count as misses)", len(unmatched))
    return Dataset(root.name, root, passages, questions, openie, unmatched)


def default_namespace(dataset: Dataset | str, synonym_threshold: float = _DEFAULT_TAU) -> str:
    """``eval-<dataset dir>``, with ``-tau<τ>`` when τ is not the default (τ shapes the index)."""
    name = dataset.name if isinstance(dataset, Dataset) else str(dataset)
    base = "eval-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", name)
    return tau_namespace(base, synonym_threshold)


def tau_namespace(base: str, synonym_threshold: float) -> str:
    return base if synonym_threshold == _DEFAULT_TAU else f"{base}-tau{synonym_threshold:g}"


# --------------------------------------------------------------------------------------------- metrics


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


# -------------------------------------------------------------------------------------------- indexing


def corpus_fingerprint(passages: Sequence[PassageIn], *, encoder: str, synonym_threshold: float, extractor: str | None) -> str:
    """What an index depends on: passage ids and contents, their supplied extraction (or the extractor that
    will produce it), the encoder and τ."""
    digest = hashlib.sha256()
    digest.update(json.dumps({"encoder": encoder, "tau": synonym_threshold, "extractor": extractor}).encode())
    for p in sorted(passages, key=lambda p: p.passage_id):
        ext = p.extraction.model_dump_json() if p.extraction is not None else "-"
        digest.update(f"\0{p.passage_id}\0{p.hash}\0{ext}".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


@dataclass
class IndexOutcome:
    namespace: str
    fingerprint: str
    reused: bool
    report: dict[str, Any] | None  # this run's IndexReport, or the recorded one when reused


def _unique(passages: Sequence[PassageIn]) -> list[PassageIn]:
    seen: dict[str, PassageIn] = {}
    for p in passages:
        if p.text.strip():
            seen.setdefault(p.passage_id, p)
    return list(seen.values())


def ensure_index(
    memory: HippoRAG,
    dataset: Dataset,
    *,
    reindex: bool = False,
    progress: bool = False,
    say: Callable[[str], None] = lambda m: None,
) -> IndexOutcome:
    """Index the dataset's corpus into ``memory``'s namespace unless it already holds exactly this corpus.

    The namespace node records a fingerprint of the corpus and settings, whether indexing completed, and
    the graph version it completed at. Same fingerprint, complete, version unchanged: reused without calling
    the indexer. Same fingerprint otherwise: the indexer resumes (it skips what is already there). A
    non-empty namespace with another fingerprint is an error unless ``reindex`` (then it is dropped first).
    """
    passages = _unique(dataset.passages)
    needs_extractor = any(p.extraction is None for p in passages)
    extractor = getattr(memory.extractor, "name", type(memory.extractor).__name__) if needs_extractor else None
    fp = corpus_fingerprint(
        passages, encoder=memory.encoder.name, synonym_threshold=memory.config.synonym_threshold, extractor=extractor
    )
    state = memory._run("eval_index_get")[0]
    if state["fingerprint"] == fp and state["complete"] and state["recorded_version"] == state["version"] and not reindex:
        say(f"namespace {memory.namespace!r} already holds this corpus ({state['passages']} passages): reusing it")
        if not memory.facts_complete():  # indexed before Fact nodes existed
            say(f"deriving fact nodes from the relation provenance: {memory.rebuild_facts()}")
            memory._run("eval_index_set", fingerprint=fp, complete=True, report=state["report"])
        report = json.loads(state["report"]) if state["report"] else None
        return IndexOutcome(memory.namespace, fp, True, report)
    if state["fingerprint"] != fp and (state["passages"] or state["phrases"]):
        if not reindex:
            raise HippoError(
                f"Namespace {memory.namespace!r} holds another corpus or an index built with other settings "
                f"({state['passages']} passages). Pass --reindex to drop and rebuild it, or choose another --namespace."
            )
        say(f"dropping namespace {memory.namespace!r} to rebuild it")
        memory.drop_namespace()
    elif reindex and (state["passages"] or state["phrases"]):
        say(f"dropping namespace {memory.namespace!r} to rebuild it")
        memory.drop_namespace()
    memory._run("eval_index_set", fingerprint=fp, complete=False, report=None)
    say(f"indexing {len(passages)} passages into namespace {memory.namespace!r}")
    report: IndexReport = memory.index(passages, progress=progress)
    stats = memory.stats()
    if stats["passages"] != len(passages):
        log.warning(
            "namespace %r holds %d passages, the corpus %d (extraction failures: %d)",
            memory.namespace, stats["passages"], len(passages), len(report.extraction_failures),
        )
    data = report.model_dump()
    memory._run("eval_index_set", fingerprint=fp, complete=not report.extraction_failures, report=json.dumps(data))
    return IndexOutcome(memory.namespace, fp, False, data)


class ReusingEncoder(Encoder):
    """An encoder that first looks a text up among vectors it has seen: its own earlier results, and those
    read back from an index of the same corpus (:meth:`remember`). Embeddings are deterministic per text and
    model, so a τ variant of an index reuses the base index's vectors instead of re-embedding the corpus."""

    def __init__(self, base: Encoder) -> None:
        self.base = base
        self.name = base.name
        self.batch_size = base.batch_size
        self.known: dict[str, np.ndarray] = {}
        self.reused = 0

    @property
    def model(self):  # noqa: ANN201 - the base's SentenceTransformer
        return self.base.model

    @property
    def dimension(self) -> int:
        return self.base.dimension

    def remember(self, memory: HippoRAG) -> int:
        """Learn the phrase and passage vectors of ``memory``'s namespace (same encoder required)."""
        if memory.encoder.name != self.name:
            return 0
        before = len(self.known)
        for r in memory._run("phrase_embeddings"):
            if r["e"] is not None:
                self.known[r["key"]] = np.asarray(r["e"], dtype=np.float32)
        for r in memory._run("passage_embeddings"):
            if r["e"] is not None:
                text = f"{r['title']}\n{r['text']}" if r["title"] else r["text"]
                self.known[text] = np.asarray(r["e"], dtype=np.float32)
        return len(self.known) - before

    def encode(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        self.reused += len(texts) - len(missing)
        if missing:
            for text, vector in zip(missing, self.base.encode(missing)):
                self.known[text] = vector
        if not texts:
            return self.base.encode([])
        return np.stack([self.known[t] for t in texts])


# ---------------------------------------------------------------------------------------------- running


ENTITY_SOURCES = ("extractor", "named", "named-else-extractor", "gold")


def query_entities(memory: HippoRAG, questions: Sequence[Question]) -> dict[str, list[str]]:
    """Each question's query entities from ``memory``'s extractor (computed once, reused across settings)."""
    return {q.id: list(memory.extractor.query_entities(q.question)) for q in questions}


def diagnostic_entities(
    memory: HippoRAG, dataset: Dataset, source: str, *, min_link_cosine: float | None = None
) -> dict[str, list[str]]:
    """Query entities for diagnosis (ablations, never the default):

    - ``extractor``: the configured extractor's (the offline one: spaCy entities and noun chunks);
    - ``named``: spaCy named entities only, no noun chunks (closer to the paper's LLM NER);
    - ``named-else-extractor``: ``named``, or the extractor's entities for a question without any;
    - ``gold``: an oracle: the supplied extraction's named entities of the question's gold passages that
      occur in the question (what perfect query NER could link to).

    ``min_link_cosine`` then drops entities whose best phrase is less similar than that.
    """
    from .text import normalize_phrase

    if source == "extractor":
        found = query_entities(memory, dataset.questions)
    elif source in ("named", "named-else-extractor"):
        from .extract.offline import OfflineExtractor

        nlp = OfflineExtractor().nlp
        found = {
            q.id: list(dict.fromkeys(e.text for e in nlp(q.question).ents if e.label_ not in {"CARDINAL", "ORDINAL"}))
            for q in dataset.questions
        }
        if source == "named-else-extractor":
            for q in dataset.questions:
                found[q.id] = found[q.id] or list(memory.extractor.query_entities(q.question))
    elif source == "gold":
        by_id = {p.passage_id: p for p in dataset.passages}
        found = {}
        for q in dataset.questions:
            text = f" {normalize_phrase(q.question)} "
            names = [
                e for g in q.gold if by_id[g].extraction is not None
                for e in by_id[g].extraction.named_entities  # type: ignore[union-attr]
                if normalize_phrase(e) and f" {normalize_phrase(e)} " in text
            ]
            found[q.id] = list(dict.fromkeys(names))
    else:
        raise ConfigError(f"Unknown entity source {source!r}; choose among {', '.join(ENTITY_SOURCES)}.")
    if min_link_cosine is not None:
        for qid, names in found.items():
            found[qid] = [l.entity for l in memory.link_entities(names) if l.similarity >= min_link_cosine]
    return found


def evaluate(
    memory: HippoRAG,
    dataset: Dataset,
    *,
    modes: Sequence[str] = DEFAULT_VARIANTS,
    top_k: int = 10,
    entities: dict[str, list[str]] | None = None,
    progress: Callable[[str, int], None] | None = None,
    use_filter: bool = True,
) -> dict[str, Any]:
    """Run every mode (a name of :data:`VARIANTS`) on every question: ``{"summary": {mode: metrics},
    "questions": [...]}``.

    Each question's entry per mode holds ``entities``, ``seeds`` ([phrase, weight]) and ``retrieved``
    ([passage id, score], best first); hipporag1 also records its entity links, hipporag2 its facts and
    passage seeds, and both whether they fell back. Retrieval depth is ``max(top_k, 10)`` so that
    Recall@10 is always defined.
    """
    for mode in modes:
        if mode not in VARIANTS:
            raise ConfigError(f"Unknown mode {mode!r}; choose among {', '.join(VARIANTS)}.")
    depth = max(top_k, max(RECALL_KS))
    ks = sorted(set(RECALL_KS) | {top_k})
    if entities is None and any(uses_entities(m) for m in modes):
        entities = query_entities(memory, dataset.questions)
    records: list[dict[str, Any]] = []
    rankings: dict[str, list[list[str]]] = {m: [] for m in modes}
    latencies: dict[str, list[float]] = {m: [] for m in modes}
    fallbacks: dict[str, int] = {m: 0 for m in modes}
    base = memory.config
    configs = {m: base.model_copy(update=VARIANTS[m][1]) for m in modes}
    try:
        for n, q in enumerate(dataset.questions):
            entry: dict[str, Any] = {"id": q.id, "question": q.question, "gold": list(q.gold)}
            for variant in modes:
                mode = VARIANTS[variant][0]
                memory.config = configs[variant]
                ents = (entities or {}).get(q.id, []) if uses_entities(variant) else None
                result = memory.query(q.question, mode=mode, top_k=depth, entities=ents, filter=use_filter)
                retrieved = [[p.id, p.score] for p in result.passages]
                entry[variant] = {
                    "entities": list(result.entities),
                    "seeds": [[phrase, weight] for phrase, weight in dict(result.seeds).items()],
                    "retrieved": retrieved,
                    "fell_back": result.fell_back,
                }
                if result.linked:
                    entry[variant]["linked"] = [[l.entity, l.phrase, l.similarity, l.passages] for l in result.linked]
                if mode == "hipporag2":
                    entry[variant]["facts"] = [[*f.triple, f.score, f.kept] for f in result.facts]
                    entry[variant]["passage_seeds"] = [[s.node, s.weight] for s in result.passage_seeds]
                rankings[variant].append([pid for pid, _ in retrieved])
                latencies[variant].append(result.elapsed_ms)
                fallbacks[variant] += result.fell_back
            records.append(entry)
            if progress:
                progress(q.id, n + 1)
    finally:
        memory.config = base
    golds = [q.gold for q in dataset.questions]
    summary = {m: summarize(rankings[m], golds, ks=ks) for m in modes}
    return {
        "summary": summary,
        "questions": records,
        "diagnostics": {
            m: {
                "fell_back": fallbacks[m],
                "latency_ms_p50": _percentile(latencies[m], 50),
                "questions": len(dataset.questions),
            }
            for m in modes
        },
    }


def diagnose(result: dict[str, Any], dataset: Dataset, baseline: str = "dense", k: int = 5) -> dict[str, Any]:
    """Why hipporag1 wins or loses: fallbacks, how well query entities link (cosine of the top-1 phrase),
    whether the seeds are phrases of the gold passages (from the supplied extraction), and per-question
    wins/losses against ``baseline`` at Recall@k."""
    from .text import normalize_phrase

    phrases_of: dict[str, set[str]] = {}
    for p in dataset.passages:
        found: set[str] = set()
        for triple in (p.extraction.triples if p.extraction else []):
            if isinstance(triple, (list, tuple)) and len(triple) == 3:
                found.update((normalize_phrase(triple[0]), normalize_phrase(triple[2])))
        phrases_of[p.passage_id] = found - {""}
    gold_of = {q.id: q.gold for q in dataset.questions}
    cosines: list[float] = []
    entities = seeds = seeds_in_gold = 0
    seed_mass_in_gold: list[float] = []
    any_seed_in_gold = wins = losses = compared = 0
    for q in result["questions"]:
        h = q.get("hipporag1")
        if h is None:
            continue
        gold_phrases = set().union(*(phrases_of.get(g, set()) for g in gold_of.get(q["id"], ())))
        entities += len(h["entities"])
        cosines += [link[2] for link in h.get("linked", [])]
        in_gold = [(phrase, w) for phrase, w in h["seeds"] if phrase in gold_phrases]
        seeds += len(h["seeds"])
        seeds_in_gold += len(in_gold)
        any_seed_in_gold += bool(in_gold)
        seed_mass_in_gold.append(sum(w for _, w in in_gold))
        if baseline in q:
            compared += 1
            mine = recall_at([r[0] for r in h["retrieved"]], q["gold"], k)
            theirs = recall_at([r[0] for r in q[baseline]["retrieved"]], q["gold"], k)
            wins += mine > theirs
            losses += mine < theirs
    n = len(result["questions"]) or 1
    versus = {f"wins_vs_{baseline}@{k}": wins, f"losses_vs_{baseline}@{k}": losses} if compared else {}
    return {
        "questions": len(result["questions"]),
        "entities_per_question": entities / n,
        "seeds_per_question": seeds / n,
        "link_cosine_median": _percentile(cosines, 50),
        "links_below_0.8": sum(c < 0.8 for c in cosines) / len(cosines) if cosines else None,
        "links_below_0.6": sum(c < 0.6 for c in cosines) / len(cosines) if cosines else None,
        "seeds_in_gold_passages": seeds_in_gold / seeds if seeds else None,
        "questions_with_a_seed_in_gold": any_seed_in_gold / n,
        "seed_weight_on_gold_phrases": sum(seed_mass_in_gold) / n,
        **versus,
    }


def _percentile(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def sweep(
    memory_for_tau: Callable[[float], HippoRAG],
    dataset: Dataset,
    entities: dict[str, list[str]],
    *,
    taus: Sequence[float] = SWEEP_TAUS,
    dampings: Sequence[float] = SWEEP_DAMPINGS,
    reindex: bool = False,
    say: Callable[[str], None] = lambda m: None,
    progress: bool = False,
) -> list[dict[str, Any]]:
    """hipporag1 over τ × damping. τ shapes the index, so each τ gets its own (reused) namespace; damping is
    query-time only. Query entities are fixed across cells so only the two hyperparameters vary."""
    rows = []
    for tau in taus:
        memory = memory_for_tau(tau)
        outcome = ensure_index(memory, dataset, reindex=reindex, progress=progress, say=say)
        synonyms = memory.stats()["synonym_edges"]
        base = memory.config
        try:
            for damping in dampings:
                memory.config = base.model_copy(update={"damping": damping})
                result = evaluate(memory, dataset, modes=["hipporag1"], entities=entities)
                rows.append(
                    {
                        "synonym_threshold": tau,
                        "damping": damping,
                        "namespace": outcome.namespace,
                        "synonym_edges": synonyms,
                        "summary": result["summary"]["hipporag1"],
                    }
                )
                say(f"tau {tau:g} damping {damping:g}: " + _short(result["summary"]["hipporag1"]))
        finally:
            memory.config = base
    return rows


def _short(metrics: dict[str, float]) -> str:
    return " ".join(f"{k.replace('all_recall', 'AR').replace('recall', 'R')} {v * 100:.1f}" for k, v in metrics.items())


# --------------------------------------------------------------------------------------------- printing


def _label(metric: str) -> str:
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
            graph = VARIANTS.get(mode, (mode, {}))[0] in ("hipporag1", "hipporag2", "hybrid")
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
