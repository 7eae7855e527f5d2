"""The harness behind ``hippo eval``: index a dataset's corpus (or reuse an index of the same corpus), run
retrieval modes (names of :data:`~hippo_neo4j.retrieve.MODES`), score their recall, and, with a reader, the
reader's answers from each mode's top passages (EM / F1); optionally the iterative (IRCoT) variant of each mode
(``<mode>+ircot``); diagnose hipporag1 and sweep its two hyperparameters.

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
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..config import HippoConfig
from ..encode import Encoder
from ..errors import ConfigError, HippoError
from ..memory import HippoRAG
from ..models import IndexReport, PassageIn
from ..retrieve import EVAL_DEFAULT, MODES
from .datasets import Dataset, Question
from .metrics import IRCOT_SUFFIX, RECALL_KS, percentile, recall_at, short, summarize

log = logging.getLogger(__name__)

SWEEP_TAUS: tuple[float, ...] = (0.8, 0.85, 0.9)
SWEEP_DAMPINGS: tuple[float, ...] = (0.3, 0.5, 0.7)


def uses_entities(mode: str, config: HippoConfig | None = None) -> bool:
    """Whether a mode links query entities (and so needs them extracted beforehand)."""
    preset = MODES[mode]
    return preset.retriever.needs_entities(preset.config(config or HippoConfig()))


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
    A namespace whose mention edges predate names (``legacy_mentions``) is rebuilt, never reused.
    """
    passages = _unique(dataset.passages)
    needs_extractor = any(p.extraction is None for p in passages)
    extractor = getattr(memory.extractor, "name", type(memory.extractor).__name__) if needs_extractor else None
    fp = corpus_fingerprint(
        passages, encoder=memory.encoder.name, synonym_threshold=memory.indexer.synonyms.tau(memory.config),
        extractor=extractor
    )
    state = memory.store.run("eval_index_get")[0]
    if state["legacy_mentions"] and not reindex:
        # indexed before every name a passage holds became a phrase linked to it: entity-ppr's graph is missing
        say(f"namespace {memory.namespace!r} was indexed before passages were linked to every name they hold: rebuilding it")
        reindex = True
    if state["fingerprint"] == fp and state["complete"] and state["recorded_version"] == state["version"] and not reindex:
        say(f"namespace {memory.namespace!r} already holds this corpus ({state['passages']} passages): reusing it")
        if not memory.facts_complete():  # indexed before Fact nodes existed
            say(f"deriving fact nodes from the relation provenance: {memory.rebuild_facts()}")
            memory.store.run("eval_index_set", fingerprint=fp, complete=True, report=state["report"])
        recorded = json.loads(state["report"]) if state["report"] else None
        return IndexOutcome(memory.namespace, fp, True, recorded)
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
    memory.store.run("eval_index_set", fingerprint=fp, complete=False, report=None)
    say(f"indexing {len(passages)} passages into namespace {memory.namespace!r}")
    report: IndexReport = memory.index(passages, progress=progress)
    stats = memory.stats()
    if stats["passages"] != len(passages):
        log.warning(
            "namespace %r holds %d passages, the corpus %d (extraction failures: %d)",
            memory.namespace, stats["passages"], len(passages), len(report.extraction_failures),
        )
    data = report.model_dump()
    memory.store.run("eval_index_set", fingerprint=fp, complete=not report.extraction_failures, report=json.dumps(data))
    return IndexOutcome(memory.namespace, fp, False, data)


class ReusingEncoder:
    """An encoder that first looks a text up among vectors it has seen: its own earlier results, and those
    read back from an index of the same corpus (:meth:`remember`). Embeddings are deterministic per text and
    model, so a τ variant of an index reuses the base index's vectors instead of re-embedding the corpus."""

    def __init__(self, base: Encoder) -> None:
        self.base = base
        self.name = base.name
        self.query_prefix = base.query_prefix
        self.synonym_threshold = base.synonym_threshold
        self.known: dict[str, np.ndarray] = {}
        self.reused = 0

    @property
    def dimension(self) -> int:
        return self.base.dimension

    @property
    def fingerprint(self) -> str:
        return self.base.fingerprint

    def remember(self, memory: HippoRAG) -> int:
        """Learn the phrase and passage vectors of ``memory``'s namespace (same encoder required)."""
        if memory.encoder.name != self.name:
            return 0
        before = len(self.known)
        for r in memory.store.run("phrase_embeddings"):
            if r["e"] is not None:
                self.known[r["key"]] = np.asarray(r["e"], dtype=np.float32)
        for r in memory.store.run("passage_embeddings"):
            if r["e"] is not None:
                text = f"{r['title']}\n{r['text']}" if r["title"] else r["text"]
                self.known[text] = np.asarray(r["e"], dtype=np.float32)
        return len(self.known) - before

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        missing = [t for t in dict.fromkeys(texts) if t not in self.known]
        self.reused += len(texts) - len(missing)
        if missing:
            for text, vector in zip(missing, self.base.encode(missing)):
                self.known[text] = vector
        if not texts:
            return self.base.encode([])
        return np.stack([self.known[t] for t in texts])

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode([self.query_prefix + t for t in texts])


ENTITY_SOURCES = ("question", "extractor", "named", "named-else-extractor", "gold")


def query_entities(memory: HippoRAG, questions: Sequence[Question]) -> dict[str, list[str]]:
    """Each question's query entities from ``memory``'s extractor (computed once, reused across settings)."""
    return {q.id: list(memory.extractor.query_entities(q.question)) for q in questions}


def diagnostic_entities(
    memory: HippoRAG, dataset: Dataset, source: str, *, min_link_cosine: float | None = None
) -> dict[str, list[str]] | None:
    """Query entities given to every mode instead of its own reading of the question (``question``, the default:
    None, each mode links the question's words to the namespace's phrases), for diagnosis:

    - ``extractor``: the configured extractor's (the offline one: spaCy entities and noun chunks);
    - ``named``: spaCy named entities only, no noun chunks (closer to the paper's LLM NER);
    - ``named-else-extractor``: ``named``, or the extractor's entities for a question without any;
    - ``gold``: an oracle: the supplied extraction's named entities of the question's gold passages that
      occur in the question (what perfect query NER could link to).

    ``min_link_cosine`` then drops entities whose best phrase is less similar than that.
    """
    from ..text import normalize_phrase

    if source == "question":
        if min_link_cosine is not None:
            raise ConfigError("--min-link-cosine drops query entities given to the modes: pick a --query-entities source.")
        return None
    if source == "extractor":
        found = query_entities(memory, dataset.questions)
    elif source in ("named", "named-else-extractor"):
        from ..extract.offline import OfflineExtractor

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


def _answer(reader: Any, question: Question, passages: Sequence[Any], top_k: int) -> dict[str, Any]:
    """The reader's answer from the top passages, scored against the gold answer and aliases, with its cost.
    A failed call (CallFailed) is recorded and scores 0; an unusable endpoint (LLMError) raises."""
    from ..llm.negotiation import CallFailed
    from ..reader import qa_scores

    texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in passages[:top_k]]
    stats = reader.chat.stats
    before = (stats.calls, stats.prompt_tokens, stats.completion_tokens)
    began = time.perf_counter()
    record: dict[str, Any] = {"answer": None, "parsed": False, "truncated": False, "error": None}
    try:
        answer = reader.answer(question.question, texts)
    except CallFailed as exc:
        record["error"] = str(exc)
    else:
        record.update(answer=answer.answer, parsed=answer.parsed, truncated=answer.truncated)
    record.update(qa_scores(record["answer"], question.answers))
    record.update(
        seconds=time.perf_counter() - began,
        calls=stats.calls - before[0],
        prompt_tokens=stats.prompt_tokens - before[1],
        completion_tokens=stats.completion_tokens - before[2],
    )
    return record


def _qa_summary(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """EM and F1 averaged over questions, how many answers were parsed, failed or cut off, and the cost."""
    n = len(entries)
    return {
        "em": sum(e["em"] for e in entries) / n if n else 0.0,
        "f1": sum(e["f1"] for e in entries) / n if n else 0.0,
        "parsed": sum(e["parsed"] for e in entries),
        "failed": sum(e["error"] is not None for e in entries),
        "truncated": sum(e["truncated"] for e in entries),
        "reader_calls": sum(e["calls"] for e in entries),
        "reader_prompt_tokens": sum(e["prompt_tokens"] for e in entries),
        "reader_completion_tokens": sum(e["completion_tokens"] for e in entries),
        "reader_seconds": sum(e["seconds"] for e in entries),
        "questions": n,
    }


def evaluate(
    memory: HippoRAG,
    dataset: Dataset,
    *,
    modes: Sequence[str] = EVAL_DEFAULT,
    top_k: int = 10,
    entities: dict[str, list[str]] | None = None,
    progress: Callable[[str, int], None] | None = None,
    use_filter: bool = True,
    reader: Any = None,
    reader_top_k: int = 5,
    iterative_steps: int | None = None,
    qa: bool = True,
) -> dict[str, Any]:
    """Run every mode (a name of :data:`~hippo_neo4j.retrieve.MODES`) on every question: ``{"summary": {mode: metrics},
    "questions": [...], "diagnostics": {...}}`` (and ``"qa"`` with a reader).

    Each question's entry per mode holds ``entities``, ``seeds`` ([phrase, weight]) and ``retrieved``
    ([passage id, score], best first); hipporag1 also records its entity links, hipporag2 its facts and
    passage seeds, and both whether they fell back. Retrieval depth is ``max(top_k, 10)`` so that
    Recall@10 is always defined. ``entities`` (question id -> names) are given to the modes that link entities
    instead of their reading of the question (:func:`diagnostic_entities`); None: each reads the question.

    With ``reader`` (a :class:`~hippo_neo4j.reader.Reader`), it answers each question from each mode's top
    ``reader_top_k`` passages: the entry gets ``qa`` (answer, em, f1, tokens, seconds), the summary ``em`` and
    ``f1`` (SQuAD normalisation, max over the gold answer and its aliases), and ``result["qa"][mode]`` the
    reader's calls, tokens and time. With ``iterative_steps`` (needs ``reader``), each mode also runs as
    ``<mode>+ircot``: :class:`~hippo_neo4j.iterative.IterativeRetrieval` with that many reasoning
    steps, the reader seeing ``reader_top_k`` pooled passages per step; its entry records every step.
    ``qa=False`` uses the reader for the iterative steps only (no answers, no EM / F1).
    """
    from ..iterative import IterativeRetrieval

    for mode in modes:
        MODES[mode]  # an unknown name is a ConfigError that lists the modes
    if isinstance(reader_top_k, bool) or not isinstance(reader_top_k, int) or reader_top_k < 1:
        raise ConfigError(f"reader_top_k must be a positive integer, not {reader_top_k!r}.")
    if iterative_steps is not None and reader is None:
        raise ConfigError("iterative retrieval needs a reader (an LLM) to write its reasoning steps.")
    depth = max(top_k, max(RECALL_KS))
    ks = sorted(set(RECALL_KS) | {top_k})
    loops = {
        m: IterativeRetrieval(memory, mode=m, steps=iterative_steps, reader=reader, context=reader_top_k)
        for m in modes
    } if iterative_steps is not None else {}
    variants = list(modes) + [m + IRCOT_SUFFIX for m in loops]
    answering = reader if qa else None
    records: list[dict[str, Any]] = []
    rankings: dict[str, list[list[str]]] = {m: [] for m in variants}
    latencies: dict[str, list[float]] = {m: [] for m in variants}
    fallbacks: dict[str, int] = {m: 0 for m in variants}
    answers: dict[str, list[dict[str, Any]]] = {m: [] for m in variants}
    chains: dict[str, list[dict[str, Any]]] = {m: [] for m in variants}
    linking = {m: uses_entities(m, memory.config) for m in modes}
    def record(variant: str, q: Question, entry: dict[str, Any], passages: Sequence[Any], elapsed_ms: float,
               fell_back: bool) -> None:
        """One question's ranking, latency, fallback and (with a reader) answer, for plain and iterative variants."""
        rankings[variant].append([p.id for p in passages])
        latencies[variant].append(elapsed_ms)
        fallbacks[variant] += fell_back
        if answering is not None:
            scored = _answer(answering, q, passages, reader_top_k)
            entry[variant]["qa"] = scored
            answers[variant].append(scored)

    for n, q in enumerate(dataset.questions):
        entry: dict[str, Any] = {"id": q.id, "question": q.question, "gold": list(q.gold)}
        if answering is not None:
            entry["answers"] = list(q.answers)
        for variant in modes:
            ents = entities.get(q.id, []) if entities is not None and linking[variant] else None
            result = memory.query(q.question, mode=variant, top_k=depth, entities=ents,
                                  recognition_filter=use_filter)
            retrieved = [[p.id, p.score] for p in result.passages]
            entry[variant] = {
                "entities": list(result.entities),
                "seeds": [[phrase, weight] for phrase, weight in dict(result.seeds).items()],
                "retrieved": retrieved,
                "fell_back": result.fell_back,
            }
            if result.linked:
                entry[variant]["linked"] = [[l.entity, l.phrase, l.similarity, l.passages] for l in result.linked]
            if MODES[variant].retriever.name == "hipporag2":
                entry[variant]["facts"] = [[*f.triple, f.score, f.kept] for f in result.facts]
                entry[variant]["passage_seeds"] = [[s.node, s.weight] for s in result.passage_seeds]
            record(variant, q, entry, result.passages, result.elapsed_ms, result.fell_back)
        for mode, loop in loops.items():
            variant = mode + IRCOT_SUFFIX
            ents = entities.get(q.id, []) if entities is not None and linking[mode] else None
            it = loop.run(q.question, top_k=depth, entities=ents, recognition_filter=use_filter,
                          keep_retrievals=False)
            chain = {
                "stopped": it.stopped,
                "error": it.error,
                "answer": it.answer,
                "llm_calls": it.llm_calls,
                "prompt_tokens": it.prompt_tokens,
                "completion_tokens": it.completion_tokens,
                "llm_seconds": sum(s.llm_ms for s in it.steps) / 1000,
            }
            entry[variant] = {
                "retrieved": [[p.id, p.score] for p in it.passages],
                "fell_back": it.fell_back,
                "steps": [
                    {"step": s.step, "sentence": s.sentence, "answer": s.answer, "query": s.query,
                     "added": s.added, "prompt_tokens": s.prompt_tokens, "completion_tokens": s.completion_tokens}
                    for s in it.steps
                ],
                **{f"chain_{k}" if k in ("answer", "error") else k: v for k, v in chain.items()},
            }
            chains[variant].append(chain)
            record(variant, q, entry, it.passages, it.elapsed_ms, it.fell_back)
        records.append(entry)
        if progress:
            progress(q.id, n + 1)
    golds = [q.gold for q in dataset.questions]
    summary = {m: summarize(rankings[m], golds, ks=ks) for m in variants}
    out: dict[str, Any] = {
        "summary": summary,
        "questions": records,
        "diagnostics": {
            m: {
                "fell_back": fallbacks[m],
                "latency_ms_p50": percentile(latencies[m], 50),
                "questions": len(dataset.questions),
            }
            for m in variants
        },
    }
    if answering is not None:
        out["qa"] = {}
        for m in variants:
            scores = out["qa"][m] = _qa_summary(answers[m])
            summary[m].update(em=scores["em"], f1=scores["f1"])
        out["reader"] = {"name": getattr(reader, "name", type(reader).__name__), "top_k": reader_top_k}
    for m in variants:
        if chains[m]:
            c = chains[m]
            out["diagnostics"][m].update(
                steps=iterative_steps,
                llm_calls=sum(x["llm_calls"] for x in c),
                prompt_tokens=sum(x["prompt_tokens"] for x in c),
                completion_tokens=sum(x["completion_tokens"] for x in c),
                llm_seconds=sum(x["llm_seconds"] for x in c),
                stopped={r: sum(x["stopped"] == r for x in c) for r in dict.fromkeys(x["stopped"] for x in c)},
                errors=sum(x["error"] is not None for x in c),
            )
    return out


def diagnose(result: dict[str, Any], dataset: Dataset, baseline: str = "dense", k: int = 5,
             phrases: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Why hipporag1 wins or loses: fallbacks, how well query entities link (cosine of the top-1 phrase),
    whether the seeds are phrases of the gold passages, and per-question wins/losses against ``baseline`` at
    Recall@k. ``phrases``: each passage's phrases in the graph as indexed (``cypher/passage_phrases.cypher``);
    without it, the subjects and objects of the dataset's supplied extraction (none when it supplies none)."""
    from ..text import normalize_phrase

    phrases_of: dict[str, set[str]] = {pid: set(found) for pid, found in (phrases or {}).items()}
    for p in dataset.passages if phrases is None else ():
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
        "link_cosine_median": percentile(cosines, 50),
        "links_below_0.8": sum(c < 0.8 for c in cosines) / len(cosines) if cosines else None,
        "links_below_0.6": sum(c < 0.6 for c in cosines) / len(cosines) if cosines else None,
        "seeds_in_gold_passages": seeds_in_gold / seeds if seeds else None,
        "questions_with_a_seed_in_gold": any_seed_in_gold / n,
        "seed_weight_on_gold_phrases": sum(seed_mass_in_gold) / n,
        **versus,
    }


def sweep(
    memory_for_tau: Callable[[float], HippoRAG],
    dataset: Dataset,
    entities: dict[str, list[str]] | None,
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
                say(f"tau {tau:g} damping {damping:g}: " + short(result["summary"]["hipporag1"]))
        finally:
            memory.config = base
    return rows
