"""entity-ppr with passages a signal scores alike ranked otherwise: recall of the default mode on indexed evaluation
namespaces, each question as written and in lower case, for each way of ranking a tie (passages whose scores are
equal to the signal's precision, hippo_neo4j/retrieve/entity_ppr.py, ``Ranking``):

- ``last place`` (the mode's): every passage of the tie at the last place it spans, the number of passages the
  signal ranks at least as high;
- ``mean of the places`` (the mid-rank of rank statistics);
- ``first place``;
- ``by place (id)``: each passage at its own place, the tie listed by passage id (the rule before the shared ranks).

Each rule is the mode run whole, its second hop's sources included, with ``Ranking.ranks`` ranking that way; the
places a tie spans are read off the mode's ranks (the first: one after the passages ranked above it).

    python bench/tie_ranks.py [--dataset ../shared/datasets/musique_train --namespace NS] ... [--questions N]

Without --dataset: musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the
namespaces ``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``).
"""

from __future__ import annotations

import argparse
import bisect
import sys
from typing import Callable

import numpy as np
from common import CUTOFFS, eval_set_options, eval_sets, table

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.evaluation.datasets import VARIANTS
from hippo_neo4j.evaluation.metrics import recall_at
from hippo_neo4j.retrieve.entity_ppr import Ranking

LAST_PLACE = Ranking.ranks


def ranked(place: Callable[[int, int, int], float]) -> Callable[[Ranking], dict[str, float]]:
    """``Ranking.ranks`` giving each passage ``place(first, last, own)``: the first and last places of its tie and its
    own place in the listing."""
    def ranks(self: Ranking) -> dict[str, float]:
        last = LAST_PLACE(self)
        values = sorted(last.values())
        return {pid: place(bisect.bisect_left(values, last[pid]) + 1, last[pid], i + 1) for i, pid in enumerate(self.ids)}
    return ranks


RULES: dict[str, Callable[[Ranking], dict[str, float]]] = {
    "last place (the mode's)": ranked(lambda first, last, own: last),
    "mean of the places": ranked(lambda first, last, own: (first + last) / 2),
    "first place": ranked(lambda first, last, own: first),
    "by place (id)": ranked(lambda first, last, own: own),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    eval_set_options(parser)
    args = parser.parse_args()
    sets = eval_sets(parser, args)
    for path, ns, n in sets:
        dataset = load_dataset(path).subset(n)
        with HippoRAG(namespace=ns) as memory:
            for variant in VARIANTS:
                questions = dataset.variant(variant).questions
                rows, orders = [], {}
                for rule, ranks in RULES.items():
                    Ranking.ranks = ranks  # type: ignore[method-assign]
                    try:
                        found = [[p.id for p in memory.query(q.question, top_k=10).passages] for q in questions]
                    finally:
                        Ranking.ranks = LAST_PLACE  # type: ignore[method-assign]
                    orders[rule] = found
                    rows.append([rule] + [100 * float(np.mean([recall_at(f, q.gold, k) for f, q in zip(found, questions)]))
                                          for k in CUTOFFS]
                                + [f"{sum(a != b for a, b in zip(found, orders[next(iter(RULES))]))}/{len(questions)}"])
                print(f"\n{dataset.name}, {ns}, {variant}")
                print("\n".join(table(["ties"] + [f"R@{k}" for k in CUTOFFS] + ["top 10 unlike the mode's"], rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
