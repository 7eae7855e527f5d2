"""entity-ppr's second hop, walked otherwise: each variant of the hop's walk in the in-process reference
(hippo_neo4j/evaluation/reference.py, ``ReferenceGraph.entity_ppr`` with ``hop_masses``), on the evaluation
namespaces, each question as written and in lower case, from the phrase seeds the mode itself linked.

``current`` is the mode's hop in the reference: its figures must be the mode's own (the line ``the mode``, its
passages as the server ranked them; the two walks' masses differ in their last digits, so a top 10 can differ below
the first places: the count of identical ones is printed). The variants:

- ``without each source's own return``: a source's mass that comes back to it through its own entities (paths of
  2 and 3 steps from it to itself) is taken out too, not only its starting mass;
- ``first step by the question's facts``: a source's mass goes to its phrases in proportion to how like the
  question the facts it asserted that name the phrase are (the most alike; z-score over the namespace's facts):
  ``z+`` (the part above the mean, 0 for the rest), ``1 + z+``, ``exp(z)`` (a phrase in no fact: as at the mean);
  from there the hop walks the rest of its steps;
- the weight of a named mention (the mode: its count, how often the passage makes it, both ways): ``once`` (1.0,
  as the walks weigh it), ``count from the source only`` (the step from a passage to its phrases by count, from a
  phrase to its passages 1.0), ``count to the passage only`` (the other way round), ``square root of the count``.

    python bench/hop_variants.py [--questions N]
    python bench/hop_variants.py --dataset ../shared/datasets/case_study_university \
        --namespace eval-case_study_university-offline-bge-small-en-v1.5

musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the namespaces
``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``), or the sets given.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np
import scipy.sparse as sp
from common import eval_set_options, eval_sets, reference_variants

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation.reference import ReferenceGraph, short_walk
from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS

def without_own_return(graph: ReferenceGraph, query: np.ndarray, sources: dict[str, float],
                       damping: float) -> tuple[np.ndarray, np.ndarray]:
    """The hop, each source's mass back at itself after 1 to HOP_STEPS steps taken out with its starting mass."""
    led, taken = graph.hop_masses(query, sources, damping)
    t, n = graph.hop_transition_t, len(graph.phrases)
    index = {p: i for i, p in enumerate(graph.passages)}
    taken = taken.copy()
    for pid, w in sources.items():
        node = n + index[pid]
        step = np.zeros(t.shape[0])
        step[node] = 1.0
        for j in range(1, HOP_STEPS + 1):
            step = t @ step
            taken[index[pid]] += (1 - damping) * w * damping ** j * step[node]
    return led, taken


class FactSteps:
    """The hop's first step weighted by the question's facts (see the module's docstring), for one namespace."""

    def __init__(self, memory: HippoRAG, graph: ReferenceGraph, weigh: Callable[[np.ndarray], np.ndarray]) -> None:
        index = {p: i for i, p in enumerate(graph.passages)}
        self.facts: dict[tuple[int, int], list[int]] = {}  # (passage, phrase) -> the facts naming it
        rows = memory.driver.execute_query(
            "MATCH (f:Fact {ns: $ns}) WHERE f.embedding IS NOT NULL "
            "RETURN f.subject AS s, f.object AS o, f.sources AS sources ORDER BY f.id",
            ns=memory.namespace, database_=memory.database).records  # aligned with graph.facts
        for i, r in enumerate(rows):
            for source in {x for x in r["sources"] or [] if x in index}:
                for phrase in {r["s"], r["o"]} & graph.phrase_index.keys():
                    self.facts.setdefault((index[source], graph.phrase_index[phrase]), []).append(i)
        self.forward = graph.hop_transition_t.T.tocsr()  # row: a node's steps, with their shares
        self.weigh = weigh

    def __call__(self, graph: ReferenceGraph, query: np.ndarray, sources: dict[str, float],
                 damping: float) -> tuple[np.ndarray, np.ndarray]:
        n, index = len(graph.phrases), {p: i for i, p in enumerate(graph.passages)}
        cosines = graph.fact_vectors @ query if graph.fact_vectors is not None and len(graph.facts) else np.zeros(0)
        mean, sd = (cosines.mean(), cosines.std() or 1.0) if len(cosines) else (0.0, 1.0)
        reset = np.zeros(n + len(graph.passages))
        for pid, w in sources.items():
            row = self.forward.getrow(n + index[pid])
            best = np.array([max((cosines[f] for f in self.facts.get((index[pid], t), [])), default=np.nan)
                             for t in row.indices])
            weights = self.weigh((best - mean) / sd) * row.data
            reset[row.indices] += w * (weights / weights.sum() if weights.sum() > 0 else row.data)
        led = damping * short_walk(graph.hop_transition_t, reset, damping, HOP_STEPS - 1)  # one step in
        return led, np.zeros(len(graph.passages))


class MentionWeights:
    """The hop over the mention graph with each named mention weighted ``out(count)`` from its passage to its phrase
    and ``into(count)`` from its phrase to its passage (synonyms their score), for one namespace."""

    def __init__(self, memory: HippoRAG, graph: ReferenceGraph, out: Callable[[float], float],
                 into: Callable[[float], float]) -> None:
        rows = memory.driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[m:MENTIONED_IN]->(p:Passage {ns: $ns}) WHERE coalesce(m.named, true) "
            "RETURN a.text AS a, p.id AS p, toFloat(coalesce(m.count, 1)) AS c", ns=memory.namespace,
            database_=memory.database).records
        synonyms = memory.driver.execute_query(
            "MATCH (a:Phrase {ns: $ns})-[r:SYNONYM]->(b:Phrase {ns: $ns}) RETURN a.text AS a, b.text AS b, r.score AS w",
            ns=memory.namespace, database_=memory.database).records
        n, m = len(graph.phrases), len(graph.passages)
        phrase, passage = graph.phrase_index, {p: i for i, p in enumerate(graph.passages)}
        at = ([phrase[r["a"]] for r in rows], [passage[r["p"]] for r in rows])
        to_passages = sp.csr_matrix(([into(r["c"]) for r in rows], at), shape=(n, m))
        to_phrases = sp.csr_matrix(([out(r["c"]) for r in rows], at[::-1]), shape=(m, n))
        ends = ([phrase[e["a"]] for e in synonyms] + [phrase[e["b"]] for e in synonyms],
                [phrase[e["b"]] for e in synonyms] + [phrase[e["a"]] for e in synonyms])
        synonym = sp.csr_matrix(([e["w"] for e in synonyms] * 2, ends), shape=(n, n))
        both = sp.csr_matrix(sp.bmat([[synonym, to_passages], [to_phrases, None]], format="csr"), shape=(n + m,) * 2)
        degree = np.asarray(both.sum(axis=1)).ravel()
        inv = np.divide(1.0, degree, out=np.zeros_like(degree), where=degree > 0)
        self.transition_t = (sp.diags(inv) @ both).T.tocsr()

    def __call__(self, graph: ReferenceGraph, query: np.ndarray, sources: dict[str, float],
                 damping: float) -> tuple[np.ndarray, np.ndarray]:
        n, index = len(graph.phrases), {p: i for i, p in enumerate(graph.passages)}
        reset = np.zeros(n + len(graph.passages))
        for pid, w in sources.items():
            reset[n + index[pid]] = w
        return short_walk(self.transition_t, reset, damping, HOP_STEPS), (1 - damping) * reset[n:]


def once(count: float) -> float:
    return 1.0


MENTION_WEIGHTS: dict[str, tuple[Callable[[float], float], Callable[[float], float]]] = {
    "mentions weighed once": (once, once),
    "count from the source only": (float, once),
    "count to the passage only": (once, float),
    "square root of the count": (np.sqrt, np.sqrt),
}


WEIGHTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "z+": lambda z: np.nan_to_num(np.maximum(z, 0.0)),
    "1 + z+": lambda z: 1.0 + np.nan_to_num(np.maximum(z, 0.0)),
    "exp(z)": lambda z: np.exp(np.nan_to_num(z)),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    eval_set_options(parser)
    args = parser.parse_args()

    def variants(memory: HippoRAG, graph: ReferenceGraph) -> dict[str, dict]:
        return ({"without each source's own return": {"hop_masses": without_own_return}}
                | {f"first step by the question's facts, {k}": {"hop_masses": FactSteps(memory, graph, w)}
                   for k, w in WEIGHTS.items()}
                | {f"mentions: {k}": {"hop_masses": MentionWeights(memory, graph, out, into)}
                   for k, (out, into) in MENTION_WEIGHTS.items()})

    return reference_variants(variants, args.questions, "hop", eval_sets(parser, args))


if __name__ == "__main__":
    sys.exit(main())
