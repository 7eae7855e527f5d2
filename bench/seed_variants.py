"""entity-ppr's walk seeded from fewer passages: the walk (phrase seeds and passage seeds) seeds every passage more
like the question than the namespace's average, about half of them, so its sources grow with the namespace
(docs/scale.md, "entity-ppr at 50,000 passages"). Each variant seeds only the N passages with the largest z-scores,
the same weights, scaled to the same share: a number of sources that does not grow with the namespace, and a walk
whose neighbourhood does not either. Run in the in-process reference (``ReferenceGraph.entity_ppr`` with
``passage_seeds``) on the evaluation namespaces, each question as written and in lower case, from the phrase seeds
the mode itself linked; ``current`` is the mode in the reference (bench/common.reference_variants).

    python bench/seed_variants.py [--questions N] [--seeds 1000,200,50]

musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the namespaces
``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``).
"""

from __future__ import annotations

import argparse
import sys

from common import reference_variants


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=None, help="the first N questions of each set")
    parser.add_argument("--seeds", default="1000,200,50", help="passage seed counts, e.g. 1000,200,50")
    args = parser.parse_args()
    counts = [int(n) for n in args.seeds.split(",")]
    return reference_variants(lambda memory, graph: {f"top {n} passages": {"passage_seeds": n} for n in counts},
                              args.questions, "passage seeds")


if __name__ == "__main__":
    sys.exit(main())
