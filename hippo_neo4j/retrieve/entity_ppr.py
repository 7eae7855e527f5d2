"""LLM-free graph retrieval over the mention graph, in two signals that are independent of each other:

- **the walk**: the query's named entities link to their nearest phrases (top-1, node specificity 1/|P_i|;
  with ``entity_relevance``, each also times how like the query the passages it names are: the mean of their
  positive cosine z-scores, a variant that loses the path-finding case), every passage more similar to
  the query than the namespace's average is seeded by its z-score, the two groups share the reset mass
  λ : 1 − λ (``entity_share``, ½), one PPR runs over phrases and passages in GDS (damping 0.5, the paper's), and
  passages rank by their own mass (``cypher/entity_ppr_passages.cypher``);
- **agreement at the top**: dense's top ``agreement_dense`` passages (exact cosines) that a second walk from the
  entity seeds alone (``cypher/entity_walk.cypher``, run at the same time as the first) ranks among its top
  ``agreement_walk`` go first, in dense's order, then that entity walk's own top ``agreement_dense`` that dense
  ranks among its top ``agreement_walk``, in the entity walk's order: the
  same rule both ways, so neither signal is privileged. Text similarity and the
  graph around the query's names are independent evidence: a passage both put at their top is the first hop
  of the answer. Dense's own top alone is not trusted (on multi-hop questions the passage most like the
  question is often not an answer), nor the walk's alone (a rare name can pull up a passage unrelated to the
  question);
- **the second hop** (``agreement_hop``): a third walk, from the passages placed alone, shows where that first
  hop leads: the passages that share an entity with them, or a synonym of one (:data:`HOP_STEPS` steps, not a
  walk to convergence); its top ``agreement_hop`` passages that the walk or dense ranks
  among its top ``agreement_walk`` go next, in its order: the same rule, one hop on
  (``cypher/entity_ppr_hop.cypher``). The rest follow in the walk's order.

The graph it walks links each passage to every entity it names (``graph/indexing.py``), so the walk reaches
passages that share an entity with the query, or with the passages most like the query, in one step: the
multi-hop hop that a single vector search misses. SYNONYM edges join the surface forms one name takes in
different passages, since the query's entity links to only one of them. Every weight is scale-free
(sum-normalised, z-scores, ranks), so nothing depends on one encoder's cosine scale or a corpus's size. Each
passage says which signal placed it and the share of its mass that came from the query's entities
(``RetrievedPassage.signals``; by linearity of PPR, the second walk's mass over the first's). With no entity
that links, the passage seeds alone drive the walk. How the design was chosen: docs/results.md.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..config import HippoConfig
from ..graph.passage_vectors import PassageCosines
from ..models import LinkedEntity, RetrievalResult, Seed
from .base import UNRESTRICTED, Query, Retriever, by_score, to_passages
from .hipporag1 import HippoRAG1Retriever
from .linking import newest_seed


# The nodes with the most mass looked up after the walk (the rest cannot hold the top passages when these hold
# top_k of them; else the statement runs again with a window 8 times larger): on musique_train the 500 of 25k
# nodes cut the statement by 30 % with every ranking and score unchanged, and held top_k passages for all 100
# questions with both graphs (bench/ppr_statements.py).
WINDOW = 500

# The second round's walk takes this many steps from the placed passages: passage -> entity -> passage (the
# passages that share an entity with them) and passage -> entity -> synonym -> passage (that share one under
# another name). A walk to convergence also counts the passages 4 and more steps away (those that share an entity
# with a passage that shares one), the reach the walk itself has already given. GDS's PageRank after n iterations
# holds every path of up to n - 1 steps, each of j steps weighted (1 - d) d^j (its first iteration starts the
# sources), so the statement runs HOP_STEPS + 1 iterations (reference.py's ``short_walk``: the same sum).
HOP_STEPS = 3


def specificity(linked: list[LinkedEntity]) -> dict[str, float]:
    """Node specificity: each linked phrase 1/|P_i|, summed over the entities that link to it."""
    weights: dict[str, float] = {}
    for link in linked:
        if link.passages > 0:
            weights[link.phrase] = weights.get(link.phrase, 0.0) + 1.0 / link.passages
    return weights


def entity_seeds(linked: list[LinkedEntity], share: float, relevance: dict[str, float] | None = None) -> dict[str, float]:
    """Phrase seeds: each linked phrase 1/|P_i| (summed over the entities that link to it), times its
    ``relevance`` when given (the mean passage seed of the passages it names), scaled to sum ``share``; a phrase
    of relevance 0 (none of its passages is more like the query than the average) seeds nothing."""
    weights = specificity(linked)
    if relevance is not None:
        weights = {t: w * relevance.get(t, 0.0) for t, w in weights.items()}
        weights = {t: w for t, w in weights.items() if w > 0}
    total = sum(weights.values())
    return {t: share * w / total for t, w in weights.items()} if total > 0 else {}


def phrase_relevance(members: dict[str, list[int]], cosines: PassageCosines, weights: np.ndarray) -> dict[str, float]:
    """Each phrase's mean passage seed over the passages it is MENTIONED_IN (``members``, node ids): how like
    the query the passages it names are, on the passage seeds' own scale-free footing (z-scores)."""
    seed = dict(zip(cosines.nodes.tolist(), weights.tolist()))
    return {t: sum(seed.get(n, 0.0) for n in nodes) / len(nodes) for t, nodes in members.items() if nodes}


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


def agreement(dense: list[str], entity_walk: list[str], top: int, blind: bool = False) -> list[str]:
    """Dense's top ``top`` passages that the entity walk also ranks at its top (``entity_walk``: its top
    passages, as deep as confirms), in dense's order, then the entity walk's top ``top`` that dense ranks at
    its top (``dense``, as deep), in the entity walk's order: the two signals are independent (the query's
    text; the graph around the query's names), so a passage that one puts first and the other at its top is
    placed first. ``blind``: the entity walk reaches only the few passages of ``entity_walk`` (fewer than it
    would confirm: its seeds sit in a small part of the graph); it cannot see the others, so it does not veto
    dense's top passages among them: they are placed too."""
    in_dense, in_entity_walk = set(dense), set(entity_walk)
    by_dense = [pid for pid in dense[:top] if pid in in_entity_walk or blind]
    return by_dense + [pid for pid in entity_walk[:top] if pid in in_dense and pid not in by_dense]


def ranked_ids(found: list[Any]) -> list[str]:
    """The ids of a walk's passages ({id, mass}) by mass, ties by id."""
    return [x["id"] for x in by_score(found, "mass")]


def second_hop(hop: list[str], walk: list[str], dense: list[str], top: int) -> list[str]:
    """The walk from the placed passages' top ``top`` passages (``hop``: in its order, the placed ones left out)
    that the walk or dense (``walk``, ``dense``: their top passages, as deep as confirms) also ranks at its top:
    where the first hop leads, confirmed by the query's own signals."""
    confirmed = set(walk) | set(dense)
    return [pid for pid in hop[:top] if pid in confirmed]


def confirming(depth: int, passages: int) -> int:
    """How deep a signal's ranking confirms a passage: ``depth``, but no deeper than half the namespace's
    ``passages``: a top 10 of 10 passages says nothing about any of them."""
    return min(depth, passages // 2)


def first_round(dense: list[str], entity: list[str], seeding: Any, config: HippoConfig) -> tuple[list[str], int]:
    """The passages the agreement places from dense's ranking and the entity walk's (both as deep as they go), and
    the depth at which each confirms the other (:func:`confirming`, from the namespace's passages)."""
    depth = confirming(config.agreement_walk, len(seeding.cosines.ids) if seeding.cosines is not None else 0)
    return agreement(dense[:depth], entity[:depth], config.agreement_dense, 0 < len(entity) < depth), depth


def hops(config: HippoConfig) -> bool:
    """Whether entity-ppr under ``config`` runs the second round (it follows the agreement)."""
    return config.agreement_hop > 0 and config.agreement_dense > 0


def entity_ppr_parameters(config: HippoConfig, top_k: int) -> dict[str, Any]:
    """The parameters of ``cypher/entity_ppr_passages.cypher`` but those that depend on the projection walked
    (``$graph``, ``$graphVersion``, ``$passageSources``, ``$seeds``, ``$include``) and ``$ns``. With the second
    round the walk's top ``agreement_walk`` passages come back even when ``top_k`` is smaller: they confirm."""
    return {
        "entityShare": config.entity_share,
        "damping": config.damping,
        "maxIterations": config.ppr_max_iterations,
        "tolerance": config.ppr_tolerance,
        "concurrency": config.ppr_concurrency,
        "topK": max(top_k, config.agreement_walk) if hops(config) else top_k,
        "topPhrases": max(config.top_phrases, 100),
        "window": WINDOW,
        "entityWalk": config.agreement_walk if config.agreement_dense > 0 else 0,
    } | UNRESTRICTED


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
        linked = self.context.retriever(HippoRAG1Retriever).link(result.entities, query.scope)  # type: ignore[attr-defined]
        candidates = specificity(linked)
        members = ({r["text"]: list(r["nodes"]) for r in self.store.run("phrase_passages", texts=list(candidates))}
                   if config.entity_relevance and candidates else None)
        seeding = self.passage_seeding(vector, z_score_seeds, query.scope)
        walked: dict[str, Any] = {}

        def prepare(graph: Any) -> dict[str, Any]:
            params = seeding(graph)
            relevance = phrase_relevance(members, seeding.cosines, seeding.weights) if members is not None else None
            walked["seeds"] = seeds = entity_seeds(linked, config.entity_share, relevance)
            depth = config.agreement_walk if config.agreement_dense > 0 else 0  # dense's top, as deep as confirms
            walked["dense"] = [x["id"] for x in seeding.cosines.top(seeding.cosines.cosine, depth)]
            return params | {"seeds": [{"text": t, "weight": w} for t, w in seeds.items()], "include": walked["dense"]}

        if not candidates and not self.store.has_passages():
            return result  # search() says the namespace is empty
        newest = newest_seed(candidates, linked)
        params = entity_ppr_parameters(config, top_k)
        def entity_walk(args: dict[str, Any]) -> list[Any]:
            """The entity walk (its seeds alone), then, when it is complete, the second round from the passages
            the agreement places: both while the walk runs, on its projection (the agreement reads only the entity
            walk and dense; :meth:`_rank` checks that the walk ranks the passages it placed)."""
            records = self.store.run("entity_walk", **args)
            if not records or not hops(config) or not records[0]["entityComplete"]:
                return records
            placed, _ = first_round(walked["dense"], ranked_ids(records[0]["entityWalk"]), seeding, config)
            hop = self._hop(placed, lambda more: self.store.run("entity_ppr_hop", **(args | more)), config) if placed else []
            return [dict(records[0].items()) | {"placedAhead": placed, "hopAhead": hop}]

        # the entity walk at the same time on the same projection, when the agreement reads it
        beside = entity_walk if params["entityWalk"] else None
        records = self.walk(result, query, "entity_ppr_passages", "mentions", needs=newest, prepare=prepare,
                            beside=beside, **params)
        # fewer than top_k passages in the window, or than agreement_walk in the entity walk's: widen it
        while records and not (records[0]["complete"] and records[0].get("entityComplete", True)):
            params["window"] *= 8  # (the sort's memory grows with the window, so it is not made all nodes at once)
            records = self.walk(result, query, "entity_ppr_passages", "mentions", needs=newest, prepare=prepare,
                                beside=beside, **params)
        seeds = walked.get("seeds", {})
        for link in linked:  # the share of the reset mass each link gets, as in the walk (a phrase's seed split
            # over the entities that link to it by their specificity)
            seed = seeds.get(link.phrase, 0.0)
            link.weight = seed * (1.0 / link.passages) / candidates[link.phrase] if seed and link.passages > 0 else 0.0
        result.linked = linked
        result.phrase_seeds = [Seed(node=t, weight=w) for t, w in seeds.items()]
        if not seeds:
            result.warning = ("no query entity links to a phrase: the walk starts from the passages like the query"
                              if not candidates else
                              "no linked phrase names a passage more like the query than the average: the walk starts "
                              "from the passages like the query")
        if records:
            self._rank(result, records[0], seeding, walked.get("dense", []), query, config)
            result.top_phrases = records[0]["topPhrases"]
            result.passage_seeds = seeding.largest(records[0]["passageShare"])
        return result

    def _rank(self, result: RetrievalResult, record: Any, seeding: Any, dense: list[str], query: Query,
              config: HippoConfig) -> None:
        """Agreement first (each signal's top passages that the other confirms), then the second hop (where
        the placed passages lead, confirmed by the walk or dense), then the walk's order."""
        passages = {p.id: p for p in to_passages(record["ranked"])}
        walk = [r for r in by_score(record["ranked"]) if r["id"] in passages]
        entity_walk = record.get("entityWalk") or []
        entity = ranked_ids(entity_walk)
        entity_rank = {pid: i + 1 for i, pid in enumerate(entity)}
        entity_mass = {x["id"]: x["mass"] for x in entity_walk if x["id"] is not None}
        # the statement returns the entity walk's top agreement_walk passages: all it reaches, when fewer
        placed_all, depth = first_round(dense, entity, seeding, config)
        first = [pid for pid in placed_all if pid in passages]
        hop: list[str] = []
        if first and record.get("placedAhead") == first:  # walked ahead from these (the walk ranks all it placed)
            hop = record["hopAhead"]
        elif first and hops(config):
            hop = self._hop(first, lambda more: self.store.walk(
                "entity_ppr_hop", "mentions", fresh=query.fresh, needs=result.graph_version, within=query.within(),
                **query.restriction(), **more)[0], config)
        second = [pid for pid in second_hop(hop, [r["id"] for r in walk[:depth]], dense[:depth], config.agreement_hop)
                  if pid in passages]
        placed = first + second
        order = (placed + [r["id"] for r in walk if r["id"] not in placed])[: query.top_k]
        walk_rank = {r["id"]: i + 1 for i, r in enumerate(walk)}
        hop_rank = {pid: i + 1 for i, pid in enumerate(hop)}
        dense_rank = seeding.cosines.ranks(order) if seeding.cosines is not None else {}
        out = []
        for pid in order:
            p = passages[pid]
            p.signals = {
                "placed": "agreement" if pid in first else "hop" if pid in second else "walk",
                "dense_rank": dense_rank.get(pid),
                "entity_walk_rank": entity_rank.get(pid),
                "walk_rank": walk_rank[pid],
                "hop_rank": hop_rank.get(pid),
                "entity_share": entity_mass[pid] / p.score if pid in entity_mass and p.score > 0 else None,
            }
            out.append(p)
        result.passages = out

    def _hop(self, placed: list[str], run: Callable[[dict[str, Any]], list[Any]], config: HippoConfig) -> list[str]:
        """The passages a walk of :data:`HOP_STEPS` steps from ``placed`` alone gives the most mass, the placed ones
        left out, in its order
        (ties by id): as many as the second round reads (``agreement_hop``). ``run(parameters)``: the records of
        ``cypher/entity_ppr_hop.cypher`` on a projection at least as new as the first walk's (its own, when
        run beside it)."""
        params = {"placed": placed, "damping": config.damping, "maxIterations": min(HOP_STEPS + 1, config.ppr_max_iterations),
                  "tolerance": config.ppr_tolerance, "concurrency": config.ppr_concurrency,
                  "hopTop": config.agreement_hop, "window": WINDOW}
        while True:
            records = run(params)
            if not records or records[0]["complete"]:
                break
            params = params | {"window": params["window"] * 8}
        found = ranked_ids(records[0]["hop"]) if records else []
        return found[: config.agreement_hop]
