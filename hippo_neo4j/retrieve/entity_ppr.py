"""LLM-free graph retrieval over the mention graph: the query's named entities link to their nearest phrases
(top-1, node specificity 1/|P_i|), every passage more similar to the query than the namespace's average is
seeded by its z-score, the two groups share the reset mass λ : 1 − λ (``entity_share``, ½: the query's names
and the query's text have an equal say), one PPR runs over phrases and passages in GDS (damping 0.5, the
paper's), and passages rank by their own mass (``cypher/entity_ppr_passages.cypher``).

The graph it walks links each passage to every entity it names (``graph/indexing.py``), so the walk reaches
passages that share an entity with the query, or with the passages most like the query, in one step: the
multi-hop hop that a single vector search misses. SYNONYM edges join the surface forms one name takes in
different passages, since the query's entity links to only one of them. Both seed groups are scale-free
(sum-normalised, z-scores), so nothing depends on one encoder's cosine scale. No extractor or LLM is needed at query time beyond spaCy's
query entities; with no entity that links, the passage seeds alone drive the walk.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config import HippoConfig
from ..graph.passage_vectors import PassageCosines
from ..models import LinkedEntity, RetrievalResult, Seed
from .base import Query, Retriever, to_passages
from .hipporag1 import HippoRAG1Retriever
from .linking import newest_seed


# The nodes with the most mass looked up after the walk (the rest cannot hold the top passages when these hold
# top_k of them; else the statement runs again with a window 8 times larger): on musique_train the 500 of 25k
# nodes cut the statement by 30 % with every ranking and score unchanged, and held top_k passages for all 100
# questions with both graphs (bench/ppr_statements.py).
WINDOW = 500


def entity_seeds(linked: list[LinkedEntity], share: float) -> dict[str, float]:
    """Phrase seeds: each linked phrase 1/|P_i| (summed over the entities that link to it), scaled to sum ``share``."""
    weights: dict[str, float] = {}
    for link in linked:
        if link.passages > 0:
            weights[link.phrase] = weights.get(link.phrase, 0.0) + 1.0 / link.passages
    total = sum(weights.values())
    return {t: share * w / total for t, w in weights.items()} if total > 0 else {}


def z_score_seeds(cosines: PassageCosines) -> np.ndarray:
    """Each passage's seed before the share: its z-score (cos - mean) / sd over the passages, for those above
    the mean (0 for the rest), normalised to sum 1; all 0 when every passage scores alike."""
    c = cosines.cosine
    weights = np.zeros(len(c))
    if len(c) == 0:
        return weights
    mean, sd = c.mean(), c.std()
    if not sd > 0:
        return weights
    above = c > mean
    weights[above] = (c[above] - mean) / sd
    return weights / weights.sum()


def entity_ppr_parameters(config: HippoConfig, seeds: dict[str, float], top_k: int) -> dict[str, Any]:
    """The parameters of ``cypher/entity_ppr_passages.cypher`` but those that depend on the projection walked
    (``$graph``, ``$graphVersion``, ``$passageSources``) and ``$ns``."""
    return {
        "seeds": [{"text": t, "weight": w} for t, w in seeds.items()],
        "entityShare": config.entity_share,
        "damping": config.damping,
        "maxIterations": config.ppr_max_iterations,
        "tolerance": config.ppr_tolerance,
        "concurrency": config.ppr_concurrency,
        "topK": top_k,
        "topPhrases": max(config.top_phrases, 100),
        "window": WINDOW,
    }


class EntityPPRRetriever(Retriever):
    name = "entity-ppr"
    graph = True
    links_entities = True

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text, top_k = query.text, query.top_k
        result = RetrievalResult(query=text, mode=self.name)
        vector = self.encoder.encode_queries([text])[0] if text.strip() else None
        if vector is None or not np.isfinite(vector).all():
            result.fell_back, result.fallback_reason = True, "the query has no text to embed"
            return result
        result.entities = list(query.entities) if query.entities is not None else list(self.context.query_entities(text))
        linked = self.context.retriever(HippoRAG1Retriever).link(result.entities)  # type: ignore[attr-defined]
        seeds = entity_seeds(linked, config.entity_share)
        total = sum(1.0 / link.passages for link in linked if link.passages > 0)
        for link in linked:  # the share of the reset mass each link's phrase gets, as in the walk
            link.weight = config.entity_share * (1.0 / link.passages) / total if link.passages > 0 and total else 0.0
        result.linked = linked
        result.phrase_seeds = [Seed(node=t, weight=w) for t, w in seeds.items()]
        if not seeds:
            if not self.store.has_passages():
                return result  # search() says the namespace is empty
            result.warning = "no query entity links to a phrase: the walk starts from the passages like the query"
        newest = newest_seed(seeds, linked)
        params = entity_ppr_parameters(config, seeds, top_k)
        seeding = self.passage_seeding(vector, z_score_seeds)
        records = self.walk(result, query, "entity_ppr_passages", "mentions", needs=newest, prepare=seeding, **params)
        while records and not records[0]["complete"]:  # fewer than top_k passages in the window: widen it
            params["window"] *= 8  # (the sort's memory grows with the window, so it is not made all nodes at once)
            records = self.walk(result, query, "entity_ppr_passages", "mentions", needs=newest, prepare=seeding, **params)
        if records:
            ranked = sorted(records[0]["ranked"], key=lambda r: (-r["score"], r["id"]))
            result.passages = to_passages(ranked)
            result.top_phrases = records[0]["topPhrases"]
            result.passage_seeds = seeding.largest(records[0]["passageShare"])
        return result
