"""LLM-free graph retrieval over the mention graph: three walks, and one score that says how strongly they place each
passage.

The signals, each a ranking of the namespace's passages:

- **dense**: the passages by cosine to the query;
- **the entity walk** (``cypher/entity_walk.cypher``): a Personalized PageRank over the mention graph (phrases and
  passages; MENTIONED_IN links a passage to every entity it names, SYNONYM joins the surface forms of one name) from
  the phrases the question names alone (:func:`~hippo_neo4j.retrieve.linking.link_question`: node specificity
  times link confidence), damping 0.5, the paper's, along the paths between passages: a passage passes its mass on
  along the entities it shares, not into a phrase it alone names (no other passage, no synonym), which would only
  hand it back, so that a passage that names many things of its own does not keep its mass through them;
- **the walk** (``cypher/entity_ppr_passages.cypher``, run at the same time): one PPR from those phrases and from
  every passage more similar to the query than the namespace's average (by its z-score), sharing the reset mass
  λ : 1 − λ (``entity_share``, ½);
- **the second hop** (``cypher/entity_ppr_hop.cypher``): a walk of :data:`HOP_STEPS` steps from the passages dense
  and the entity walk agree on, each weighted by that agreement: where that first hop of the answer leads (the
  passages that share an entity with it, or a synonym of one), stepping, as the entity walk does, along the
  phrases that lead somewhere else. It follows each mention as often as the passage makes it
  (``MENTIONED_IN.count``: the facts that name the entity, plus one), so it leaves a passage by what the passage
  says most about and reaches first the passages that say most about that entity: a film's director's own article
  before the films that name the director once. Its paths are summed where they are, not walked over the
  whole projection, at a cost that follows the sources' entities and the passages they name.

Each signal ranks the passages it reaches (those among the :data:`WINDOW` nodes a walk gives the most mass, the
hop's :data:`WINDOW` passages): a
passage's rank r is the number of passages the signal ranks at least as high as it, so passages it scores alike
share the last place they hold (listed by passage id, ranked alike), and a passage it does not rank counts as its
last of the namespace's ``m``. A rank r is the quantile q = r / m: the chance that a ranking that knows nothing puts
the passage at least that high. A passage's evidence is the smallest of these chances (:func:`chance`):

- agreement: dense and the entity walk both rank it high, ``chance(q_dense, q_entity)``: two independent signals,
  the query's text and the graph around its names, agree on the first hop of the answer;
- second hop: the hop ranks it high and the walk or dense confirms it, ``chance(q_hop, q_confirm)`` where q_confirm
  is the chance that the better of two random ranks is as good as the better of the walk's and dense's;
- one signal alone: ``q_walk``, ``q_entity``, ``q_dense``.

Its score is −log10 of that chance (3: one in a thousand), so the order is the score's, and the evidence of one kind
compares with another's: two signals that put a passage in their top ten of 2,000 are stronger evidence than one that
puts it first, and in a namespace of ten passages no evidence is strong. No cut decides which passages place:
dense's top three confirmed by the entity walk's top ten, as a rule once had it, is what the product of the two ranks
says continuously. With no phrase seed the walk and dense alone rank. Each passage says which evidence placed it, its
rank in every signal, and a second-hop passage the passage and phrase the hop reached it through (``RetrievedPassage.signals``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, cast

import numpy as np

from ..config import HippoConfig
from ..graph.passage_vectors import PassageCosines
from ..graph.store import together
from ..models import LinkedEntity, RetrievalResult, RetrievedPassage, Seed
from .base import Query, Retriever, to_passages
from .hipporag1 import HippoRAG1Retriever
from .linking import newest_seed


# How far each walk ranks: the passages among the WINDOW nodes (phrases and passages) to which it gives the most
# mass; a passage further down is, to the evidence, as if the walk did not reach it (a chance of WINDOW / m or more
# from one signal ranks below every passage a signal puts in its top ten). Dense ranks its WINDOW passages most like
# the query. On musique_train and 2wikimultihopqa every ranking is the same as with each walk's 500 first passages.
WINDOW = 2000

# The second hop's walk takes this many steps from the agreed passages: passage -> entity -> passage (the passages
# that share an entity with them) and passage -> entity -> synonym -> passage (that share one under another name). A
# walk to convergence also counts the passages 4 and more steps away (those that share an entity with a passage that
# shares one), the reach the walk itself has already given. The statement sums those two kinds of path, each of j
# steps weighted (1 - d) d^j times each step's share of its node's weighted degree (a named mention weighing its
# count, a synonym its score): the sum that GDS's PageRank holds after HOP_STEPS + 1 iterations (its first starts the
# sources) over a graph of those weights, and that reference.py's ``short_walk`` computes over ``hop_transition_t``.
HOP_STEPS = 3
# The hop starts from the passages whose agreement weight is at least this share of the strongest one's: the rest
# would start less than a thousandth of its mass each (the weight falls with the product of two ranks).
HOP_FLOOR = 1e-3


def chance(*quantiles: Any) -> Any:
    """The chance that independent random rankings put a passage at least as high in each as it is: with u the product
    of its quantiles q_i = rank / m, P(U_1 ... U_k <= u) = u · Σ_{i<k} (−ln u)^i / i! (one quantile: q itself)."""
    u = np.prod(np.asarray(quantiles, dtype=np.float64), axis=0)
    log = -np.log(np.maximum(u, np.finfo(np.float64).tiny))
    return u * sum(log ** i / math.factorial(i) for i in range(len(quantiles)))


def better_of_two(q: Any) -> Any:
    """The chance that the better of two independent random ranks has a quantile at most ``q``: 1 − (1 − q)²."""
    return 1.0 - (1.0 - np.asarray(q, dtype=np.float64)) ** 2


def specificity(linked: list[LinkedEntity]) -> dict[str, float]:
    """The phrase seeds' weights before the share: each linked phrase's link weight, summed over the links to it
    (node specificity 1/|P_i|, times the link's confidence when the question's words found it)."""
    weights: dict[str, float] = {}
    for link in linked:
        if link.passages > 0 and link.weight > 0:
            weights[link.phrase] = weights.get(link.phrase, 0.0) + link.weight
    return weights


def entity_seeds(linked: list[LinkedEntity], share: float, relevance: dict[str, float] | None = None) -> dict[str, float]:
    """Phrase seeds: each linked phrase's weight (:func:`specificity`), times its ``relevance`` when given (the mean
    passage seed of the passages it names), scaled to sum ``share``; a phrase of relevance 0 (none of its passages
    is more like the query than the average) seeds nothing."""
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


# Scores closer than this rank as equal (listed by passage id): a cosine is exact to about 1e-7 (the server's vector
# functions and the client's product compute in float32), and a walk's masses to about its tolerance
# (HippoConfig.ppr_tolerance: it stops when no mass moves by more), so passages whose scores are equal in theory (two
# passages that name one phrase alone) would otherwise be ordered by rounding.
COSINE_PRECISION = 1e-6


def walk_precision(config: HippoConfig) -> float:
    """The precision a walk's masses are ranked to: ten times its tolerance."""
    return 10 * config.ppr_tolerance


@dataclass
class Ranking:
    """One signal's ranking of passages: their ids, most first (scores equal to its precision listed by id), each
    one's score (mass, or cosine for dense) and its rank (:meth:`ranks`). A passage it does not rank is at ``m``,
    the namespace's count."""

    ids: list[str]
    score: dict[str, float] = field(default_factory=dict)
    rank: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, masses: dict[str, float], precision: float, depth: int = WINDOW) -> "Ranking":
        """A walk's ranking of the passages it gives ``masses`` (passage id -> mass) of at least ``precision``: the
        walk's precision, below which a mass says the walk barely reached the passage, or did not."""
        kept = {pid: m for pid, m in masses.items() if round(m / precision) >= 1}
        return cls.top(list(kept), np.fromiter(kept.values(), dtype=np.float64, count=len(kept)), precision, depth)

    @classmethod
    def top(cls, ids: list[str], scores: np.ndarray, precision: float, depth: int = WINDOW) -> "Ranking":
        """The ``depth`` passages of ``ids`` with the largest ``scores``, scores equal to ``precision`` listed by id
        (before the cut) and ranked alike: every passage of a tie holds the last place the tie spans, the tied
        passages past the cut counted too."""
        key = np.round(scores / precision) if precision > 0 else np.asarray(scores, dtype=np.float64)
        if len(ids) > depth:
            kth = np.partition(key, len(key) - depth)[len(key) - depth]
            keep = np.flatnonzero(key >= kth)  # every passage tied with the last one kept, then by id
        else:
            keep = np.arange(len(ids))
        by_key = keep[np.argsort(-key[keep], kind="stable")]
        k = key[by_key]
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])  # each tie: its first and past-last places
        ends = np.r_[starts[1:], len(k)]
        ordered = by_key.tolist()
        for a, b in zip(starts.tolist(), ends.tolist()):
            if b - a > 1:
                ordered[a:b] = sorted(ordered[a:b], key=ids.__getitem__)  # a tie, by id
        ordered = ordered[:depth]
        top = [ids[i] for i in ordered]
        # every passage of a tie holds the last place the tie spans
        return cls(top, dict(zip(top, np.asarray(scores, dtype=np.float64)[ordered].tolist())),
                   dict(zip(top, np.repeat(ends, ends - starts)[:depth].tolist())))

    def ranks(self) -> dict[str, int]:
        """Each passage's rank, 1 the first: the number of passages the signal ranks at least as high, so passages it
        scores alike share the last place they hold (3 for two tied behind the first) and a passage's evidence does
        not depend on its id; a ranking made of ids alone ranks them by place."""
        return dict(self.rank) if self.rank else {pid: i + 1 for i, pid in enumerate(self.ids)}


@dataclass
class Evidence:
    """Why each passage ranks where it does: its rank in every signal (None: not ranked) and the chance of each kind
    of evidence (:func:`evidence`); ``placed``, the kind with the smallest chance, and ``chance`` that chance."""

    ranks: dict[str, dict[str, int]]
    chances: dict[str, dict[str, float]]
    placed: dict[str, str]
    best: dict[str, float]

    def order(self) -> list[str]:
        """The passages by evidence, strongest first; equal ones by id."""
        return sorted(self.best, key=lambda pid: (self.best[pid], pid))

    def score(self, pid: str) -> float:
        """−log10 of the passage's chance: 3 is one in a thousand."""
        return float(-np.log10(max(self.best[pid], np.finfo(np.float64).tiny)))


def agreement_chances(m: int, dense: Ranking, entity: Ranking | None) -> dict[str, float]:
    """The agreement's chance of every passage dense or the entity walk ranks: ``chance(q_dense, q_entity)``."""
    if entity is None or m == 0:
        return {}
    d, e = dense.ranks(), entity.ranks()
    ids = sorted(set(d) | set(e))
    q = np.array([[d.get(pid, m) / m, e.get(pid, m) / m] for pid in ids]).T
    return dict(zip(ids, chance(q[0], q[1]).tolist()))


def hop_sources(agreed: dict[str, float]) -> dict[str, float]:
    """The second hop's sources: the passages weighted by the strength of their agreement, 1 / its chance, scaled
    to sum 1, those of at least :data:`HOP_FLOOR` of the strongest's weight."""
    if not agreed:
        return {}
    weight = {pid: 1.0 / max(p, np.finfo(np.float64).tiny) for pid, p in agreed.items()}
    top = max(weight.values())
    kept = {pid: w for pid, w in weight.items() if w >= HOP_FLOOR * top}
    total = sum(kept.values())
    return {pid: w / total for pid, w in sorted(kept.items())}


# The kinds of evidence, in the order a tie between two of one passage's names the first: two signals that agree, the
# hop confirmed, then each signal alone.
KINDS = ("agreement", "hop", "walk", "entity", "dense")


def evidence(m: int, dense: Ranking, walk: Ranking, entity: Ranking | None, hop: Ranking | None) -> Evidence:
    """Each ranked passage's evidence (see the module's docstring): agreement (dense and the entity walk, when there
    is one), second hop (the hop, confirmed by the better of the walk's and dense's ranks, when it ran), and each
    signal's rank alone. A passage a signal does not rank takes its last rank, m."""
    ranks = {"dense": dense.ranks(), "walk": walk.ranks()}
    if entity is not None:
        ranks["entity"] = entity.ranks()
    if hop is not None:
        ranks["hop"] = hop.ranks()
    ids = sorted(set().union(*ranks.values()))
    q = {name: np.array([r.get(pid, m) / m for pid in ids]) for name, r in ranks.items()}
    chances: dict[str, np.ndarray] = {"walk": q["walk"], "dense": q["dense"]}
    if entity is not None:
        chances["agreement"] = chance(q["dense"], q["entity"])
        chances["entity"] = q["entity"]
    if hop is not None:
        chances["hop"] = chance(q["hop"], better_of_two(np.minimum(q["walk"], q["dense"])))
    kinds = [k for k in KINDS if k in chances]
    stacked = np.vstack([chances[k] for k in kinds])
    best = stacked.min(axis=0)
    placed = [kinds[i] for i in stacked.argmin(axis=0)]  # the first kind on a tie
    return Evidence(
        ranks=ranks,
        chances={k: dict(zip(ids, chances[k].tolist())) for k in kinds},
        placed=dict(zip(ids, placed)),
        best=dict(zip(ids, best.tolist())),
    )


def entity_ppr_parameters(config: HippoConfig) -> dict[str, Any]:
    """The parameters of ``cypher/entity_ppr_passages.cypher`` and ``cypher/entity_walk.cypher`` but those that
    depend on the projection walked (``$graph``, ``$graphVersion``, ``$passageSources``, ``$seeds``) and ``$ns``."""
    return {
        "entityShare": config.entity_share,
        "damping": config.damping,
        "maxIterations": config.ppr_max_iterations,
        "tolerance": config.ppr_tolerance,
        "concurrency": config.ppr_concurrency,
        "window": WINDOW,
    }


def hop_parameters(config: HippoConfig, sources: list[list[float]], only: list[int] | None) -> dict[str, Any]:
    """The parameters of ``cypher/entity_ppr_hop.cypher``: ``sources`` [[node id, weight]], ``only`` the node ids of a
    filter's passages (None without one)."""
    return {"sources": sources, "damping": config.damping, "window": WINDOW, "only": only}


def passage_masses(window: list[Any], passages: dict[int, str]) -> dict[str, float]:
    """The passages among a walk's ``window`` ([node id, mass], most first) with their mass, by passage id
    (``passages``: node id -> passage id, the passages the walk may rank)."""
    return {passages[int(n)]: float(mass) for n, mass in window if int(n) in passages}


class EntityPPRRetriever(Retriever):
    name = "entity-ppr"
    graph = True
    links_entities = True

    @classmethod
    def projections(cls, config: HippoConfig) -> tuple[str, ...]:
        return ("mentions",)

    def get_search_results(self, query: Query, config: HippoConfig) -> RetrievalResult:
        text = query.text
        result = RetrievalResult(query=text, mode=self.name)
        vector: np.ndarray | None = None
        if text.strip():  # its encoding while its entities link (their own encoding, then the phrase index's statement)
            vector, (entities, linked) = together(
                lambda: self.encoder.encode_queries([text])[0],
                lambda: self.context.retriever(HippoRAG1Retriever).link_query(query, config))
        if vector is None or not np.isfinite(vector).all():
            result.fell_back, result.fallback_reason = True, "the query has no text to embed"
            return result
        result.entities = entities
        candidates = specificity(linked)
        members = ({r["text"]: list(r["nodes"]) for r in self.store.run("phrase_passages", texts=list(candidates))}
                   if config.entity_relevance and candidates else None)
        seeding = self.passage_seeding(vector, z_score_seeds, query.scope)
        walked: dict[str, Any] = {}

        def prepare(graph: Any) -> dict[str, Any]:
            params = seeding(graph)
            cosines = cast(PassageCosines, seeding.cosines)  # set by seeding(graph)
            relevance = phrase_relevance(members, cosines, seeding.weights) if members is not None else None
            walked["seeds"] = seeds = entity_seeds(linked, config.entity_share, relevance)
            walked["passages"] = dict(zip(cosines.nodes.tolist(), cosines.ids))
            walked["dense"] = Ranking.top(cosines.ids, cosines.cosine.astype(np.float64), COSINE_PRECISION)
            return params | {"seeds": [{"text": t, "weight": w} for t, w in seeds.items()]}

        if not candidates and not self.store.has_passages():
            return result  # search() says the namespace is empty
        newest = newest_seed(candidates, linked)
        params = entity_ppr_parameters(config)

        def entity_walk(args: dict[str, Any]) -> list[Any]:
            """The entity walk (its seeds alone), then the second hop from the passages it and dense agree on, both
            while the walk runs, on its projection (neither reads the walk); neither without agreement (the walk and
            dense alone rank: entity-ppr-walk)."""
            if not config.entity_agreement:
                return [{"entity": None, "sources": {}, "hop": None}]
            records = self.store.run("entity_walk", **args)
            entity = (Ranking.of(passage_masses(records[0]["window"], walked["passages"]), walk_precision(config))
                      if walked["seeds"] else None)
            agreed = agreement_chances(len(walked["passages"]), walked["dense"], entity)
            sources = hop_sources(agreed) if config.entity_hop else {}  # none without an entity walk
            hop = self._hop(sources, walked["passages"], lambda more: self.store.run("entity_ppr_hop", **more),
                            config, args["only"]) if sources else None
            return [{"entity": entity, "sources": sources, "hop": hop}]

        records = self.walk(result, query, "entity_ppr_passages", *self.projections(config), needs=newest, prepare=prepare,
                            beside=entity_walk, **params)
        seeds = walked.get("seeds", {})
        for link in linked:  # the share of the reset mass each link gets, as in the walk (a phrase's seed split
            # over the links to it by their weights)
            seed = seeds.get(link.phrase, 0.0)
            link.weight = seed * link.weight / candidates[link.phrase] if seed and link.phrase in candidates else 0.0
        result.linked = linked
        result.phrase_seeds = [Seed(node=t, weight=w) for t, w in seeds.items()]
        if not seeds:
            result.warning = (
                ("no query entity links to a phrase" if query.entities is not None else
                 "no phrase of the namespace is named in the question") if not candidates else
                "no linked phrase names a passage more like the query than the average"
            ) + ": the walk starts from the passages like the query"
        if records:
            self._rank(result, records[0], walked, query, config)
            result.passage_seeds = seeding.largest(records[0]["passageShare"])
        return result

    def _rank(self, result: RetrievalResult, record: Any, walked: dict[str, Any], query: Query,
              config: HippoConfig) -> None:
        """The passages by evidence (:func:`evidence`), with their details and explanations
        (``cypher/entity_ppr_details.cypher``)."""
        passages = walked["passages"]
        walk_mass = passage_masses(record["window"], passages)
        walk = Ranking.of(walk_mass, walk_precision(config))
        entity: Ranking | None = record["entity"]
        hop: Ranking | None = record["hop"]
        found = evidence(len(passages), walked["dense"], walk, entity, hop)
        order = found.order()[: query.top_k]
        phrases = sorted(([int(n), float(mass)] for n, mass in record["window"] if int(n) not in passages),
                         key=lambda x: (-x[1], x[0]))[: max(config.top_phrases, 100)]
        hop_ids = [pid for pid in order if found.placed[pid] == "hop"]
        details = self.store.run("entity_ppr_details", ids=order, phrases=phrases[:10], mass={str(n): m for n, m in phrases},
                                 hopIds=hop_ids, sources=record["sources"] if hop_ids else {}, damping=config.damping,
                                 only=query.restriction()["only"]) if order else []
        via = {r["id"]: r["via"] for r in details}
        out: list[RetrievedPassage] = []
        for p in to_passages([dict(r.items()) | {"score": found.score(r["id"])} for r in details]):
            pid = p.id
            p.signals = {
                "placed": found.placed[pid],
                "evidence": {kind: float(-np.log10(max(c[pid], np.finfo(np.float64).tiny)))
                             for kind, c in found.chances.items() if pid in c},
                "dense_rank": found.ranks["dense"].get(pid),
                "entity_walk_rank": found.ranks.get("entity", {}).get(pid),
                "walk_rank": found.ranks["walk"].get(pid),
                "hop_rank": found.ranks.get("hop", {}).get(pid),
                "via": via.get(pid),
            }
            out.append(p)
        result.passages = out
        result.top_phrases = details[0]["topPhrases"] if details else []

    def _hop(self, sources: dict[str, float], passages: dict[int, str], run: Callable[[dict[str, Any]], list[Any]],
             config: HippoConfig, only: list[int] | None = None) -> Ranking:
        """The second hop's ranking: the passages by the mass a walk of :data:`HOP_STEPS` steps from ``sources``
        (passage id -> weight) brings them, each source's own starting mass, (1 − d) × its weight, taken out.
        ``run(parameters)``: the records of ``cypher/entity_ppr_hop.cypher``; ``only``: a filter's passages (node
        ids), the graph the walks ran on."""
        nodes = {pid: n for n, pid in passages.items()}
        rows = [[float(nodes[pid]), w] for pid, w in sources.items() if pid in nodes]
        records = run(hop_parameters(config, rows, only))
        mass = passage_masses(records[0]["window"], passages) if records else {}
        for pid, w in sources.items():
            if pid in mass:
                mass[pid] -= (1.0 - config.damping) * w
        return Ranking.of(mass, walk_precision(config))
