"""entity-ppr's evidence, combined otherwise: how each alternative way of turning a passage's ranks into its chance
(hippo_neo4j/retrieve/entity_ppr.py, ``evidence``) would rank the passages the default mode returns, on indexed
evaluation namespaces, each question as written and in lower case.

Each question is asked once (entity-ppr, its top --depth passages with their ranks in every signal:
``RetrievedPassage.signals``); each variant then re-orders those passages by its own chance. ``current`` is the
mode's own combination: its line must reproduce the mode's top 10 on every question (printed), or the variants are
not comparable. A passage below --depth is out of reach of every variant, so a variant's R@10 can only be
understated, never its R@1/R@2 by much at a depth of 30.

    python bench/evidence_variants.py [--dataset ../shared/datasets/musique_train --namespace NS] ... [--depth 30]

Without --dataset: musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the
namespaces ``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``).
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable

import numpy as np
from common import CUTOFFS, eval_set_options, eval_sets, table

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.evaluation.datasets import VARIANTS
from hippo_neo4j.evaluation.metrics import recall_at
from hippo_neo4j.retrieve.entity_ppr import better_of_two, chance



def harmonic(*chances: float) -> float:
    """The harmonic mean of chances (the harmonic mean p-value: evidence that may depend on each other, combined
    without assuming independence; the smallest chance weighs the most, but every other adds)."""
    return len(chances) / sum(1.0 / max(c, float(np.finfo(np.float64).tiny)) for c in chances)


def hop(q: dict[str, float]) -> float:
    """The mode's second-hop chance: the hop confirmed by the better of the walk's and dense's ranks."""
    return float(chance(q["hop"], better_of_two(min(q["walk"], q["dense"]))))


def alone(q: dict[str, float]) -> list[float]:
    """The chances every variant keeps: dense and the entity walk agreeing, and each signal alone."""
    return [chance(q["dense"], q["entity"]), q["walk"], q["entity"], q["dense"]]


# Each variant: a passage's quantiles (rank / m; 1 where a signal does not rank it) -> its chance, the smallest wins.
VARIANTS_OF_EVIDENCE: dict[str, Callable[[dict[str, float]], float]] = {
    "current": lambda q: min(alone(q) + [chance(q["hop"], better_of_two(min(q["walk"], q["dense"])))]),
    "hop confirmed by walk and dense both": lambda q: min(alone(q) + [chance(q["hop"], q["walk"], q["dense"])]),
    "hop confirmed by dense": lambda q: min(alone(q) + [chance(q["hop"], q["dense"])]),
    "hop confirmed by dense or by the walk, the better test times two": lambda q: min(
        alone(q) + [min(1.0, 2 * min(chance(q["hop"], q["dense"]), chance(q["hop"], q["walk"])))]),
    "hop confirmed by dense, or by the walk": lambda q: min(
        alone(q) + [chance(q["hop"], q["dense"]), chance(q["hop"], q["walk"])]),
    "hop confirmed by the walk": lambda q: min(alone(q) + [chance(q["hop"], q["walk"])]),
    "hop confirmed by entity walk or dense": lambda q: min(
        alone(q) + [chance(q["hop"], better_of_two(min(q["entity"], q["dense"])))]),
    "hop confirmed by the best of three": lambda q: min(
        alone(q) + [chance(q["hop"], 1 - (1 - min(q["walk"], q["dense"], q["entity"])) ** 3)]),
    "+ dense, entity walk and hop agreeing": lambda q: min(
        alone(q) + [chance(q["hop"], better_of_two(min(q["walk"], q["dense"]))),
                    chance(q["dense"], q["entity"], q["hop"])]),
    "agreement: dense and the better of entity walk and walk": lambda q: min(
        [chance(q["dense"], better_of_two(min(q["entity"], q["walk"]))), q["walk"], q["entity"], q["dense"],
         chance(q["hop"], better_of_two(min(q["walk"], q["dense"])))]),
    "+ dense and walk agreeing": lambda q: min(
        alone(q) + [chance(q["hop"], better_of_two(min(q["walk"], q["dense"]))), chance(q["dense"], q["walk"])]),
    "no walk or entity walk alone": lambda q: min(
        [chance(q["dense"], q["entity"]), q["dense"], chance(q["hop"], better_of_two(min(q["walk"], q["dense"])))]),
    "no dense alone": lambda q: min(
        [chance(q["dense"], q["entity"]), q["walk"], q["entity"],
         chance(q["hop"], better_of_two(min(q["walk"], q["dense"])))]),
    "harmonic mean of every kind's chance": lambda q: harmonic(*alone(q), hop(q)),
    "harmonic mean of agreement and hop, or a signal alone": lambda q: min(
        [harmonic(alone(q)[0], hop(q))] + alone(q)[1:]),
    "agreement, hop, or the harmonic mean of the signals alone": lambda q: min(
        [alone(q)[0], hop(q), harmonic(*alone(q)[1:])]),
}
SIGNALS = {"dense": "dense_rank", "entity": "entity_walk_rank", "walk": "walk_rank", "hop": "hop_rank"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    eval_set_options(parser)
    parser.add_argument("--depth", type=int, default=30, help="how many of the mode's passages each variant re-orders")
    args = parser.parse_args()
    sets = eval_sets(parser, args)
    reproduced = True
    for path, ns, n in sets:
        dataset = load_dataset(path).subset(n)
        with HippoRAG(namespace=ns) as memory:
            m = memory.stats()["passages"]
            for variant in VARIANTS:
                recalls: dict[str, dict[int, list[float]]] = {v: {k: [] for k in CUTOFFS} for v in VARIANTS_OF_EVIDENCE}
                same = 0
                questions = dataset.variant(variant).questions
                for question in questions:
                    found = memory.query(question.question, top_k=args.depth).passages
                    quantiles = {p.id: {s: (p.signals.get(key) or m) / m for s, key in SIGNALS.items()} for p in found}
                    for name, combine in VARIANTS_OF_EVIDENCE.items():
                        order = sorted(quantiles, key=lambda pid: (combine(quantiles[pid]), pid))
                        if name == "current":
                            same += order[:10] == [p.id for p in found[:10]]
                        for k in CUTOFFS:
                            recalls[name][k].append(recall_at(order, question.gold, k))
                reproduced &= same == len(questions)
                print(f"\n{dataset.name}, {ns}, {variant}: 'current' reproduces the mode's top 10 on {same}/{len(questions)}")
                print("\n".join(table(["variant"] + [f"R@{k}" for k in CUTOFFS],
                                      [[name] + [100 * float(np.mean(r[k])) for k in CUTOFFS]
                                       for name, r in recalls.items()])))
    return 0 if reproduced else 1


if __name__ == "__main__":
    sys.exit(main())
