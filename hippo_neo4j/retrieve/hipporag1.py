"""HippoRAG (v1): query entities → their nearest phrases (seed weight 1/|P_i|, normalised) → Personalized
PageRank over the phrase graph in GDS → passage score = Σ_phrases PPR mass × MENTIONED_IN.count, in one
Cypher statement (``cypher/ppr_passages.cypher``). No entity that links: dense retrieval, and it says so."""

from __future__ import annotations

from typing import Any, Sequence

from ..config import HippoConfig
from ..graph.synonyms import synonym_tau
from ..models import LinkedEntity, RetrievalResult
from ..graph.scope import Scope
from .base import UNRESTRICTED, Query, Retriever, to_passages
from .dense import DenseRetriever
from .linking import link_entities, link_question, newest_seed


def ppr_parameters(config: HippoConfig, seeds: dict[str, float], top_k: int) -> dict[str, Any]:
    """The parameters of ``cypher/ppr_passages.cypher`` (all but ``$graph`` and ``$ns``), with no filter."""
    return {
        "seeds": [{"text": t, "weight": w} for t, w in seeds.items()],
        "damping": config.damping,
        "maxIterations": config.ppr_max_iterations,
        "tolerance": config.ppr_tolerance,
        "concurrency": config.ppr_concurrency,
        "minMass": config.ppr_min_mass,
        "topK": top_k,
        "topPhrases": config.top_phrases,
    } | UNRESTRICTED


class HippoRAG1Retriever(Retriever):
    name = "hipporag1"
    graph = True
    links_entities = True

    @classmethod
    def projections(cls, config: HippoConfig) -> tuple[str, ...]:
        return ("phrase",)

    def link(self, entities: Sequence[str], scope: Scope | None = None) -> list[LinkedEntity]:
        """Each query entity's nearest phrase (of those a filter's passages mention, with ``scope``)."""
        return link_entities(self.store, self.encoder, entities, scope)

    def link_query(self, query: Query, config: HippoConfig) -> tuple[list[str], list[LinkedEntity]]:
        """The query's entities and their links: the entities given with the query, each linked to its nearest
        phrase; else the phrases the question's words name (:func:`~hippo_neo4j.retrieve.linking.link_question`,
        whatever its casing), with the words and names it read as the entities."""
        if query.entities is not None:
            return list(query.entities), self.link(query.entities, query.scope)
        terms = self.context.query_terms(query.text)
        tau = synonym_tau(getattr(self.encoder, "synonym_threshold", 0.8), config)
        linked = link_question(self.store, self.encoder, terms, tau, query.scope)
        return list(dict.fromkeys([link.entity for link in linked] + terms.names)), linked

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text, top_k = query.text, query.top_k
        ents, linked = self.link_query(query, config)
        seeds = {link.phrase: link.weight for link in linked if link.weight > 0}
        if not seeds:
            fallback = self.context.retriever(DenseRetriever).rank(text, top_k, scope=query.scope)
            fallback.mode, fallback.entities, fallback.linked = self.name, ents, linked
            fallback.fell_back = True
            fallback.fallback_reason = (
                "no query entities" if not ents else "no query entity links to a phrase in this namespace"
            )
            return fallback
        result = RetrievalResult(query=text, mode=self.name, entities=ents, linked=linked)
        records = self.walk(result, query, "ppr_passages", *self.projections(config), needs=newest_seed(seeds, linked),
                            **ppr_parameters(config, seeds, top_k))
        result.top_phrases = records[0]["topPhrases"] if records else []
        result.passages = to_passages(records)
        return result
