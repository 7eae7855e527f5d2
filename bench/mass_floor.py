"""hipporag1's passage sum with a higher mass floor (``HippoConfig.ppr_min_mass``, default 1e-7) on a kept scale
namespace (``bench/scale.py --keep``): per floor, hipporag1's step profile (``common.profile_hipporag1``: the walk's
statement, GDS's PageRank alone, and what the sum reads: phrases with more mass than the floor, their MENTIONED_IN
rows, the passages those reach), and how many of the first floor's top-10 passages each floor keeps, and for how many
questions in the same order (docs/scale.md, "What bounds a graph query"). The masses sum to 1, so at most 1/floor
phrases pass a floor, whatever the namespace's size: the question is what the top 10 pays for it. With
``--recall``, instead, hipporag1's R@1/2/5/10 at each floor on the evaluation namespaces (musique_train with both
graphs, 2wikimultihopqa; those ``hippo eval`` builds), each question as written and in lower case, and how many top
tens differ from the first floor's.

    python bench/mass_floor.py --size 50000 --queries 20 --floors 1e-7,1e-6,1e-5,1e-4
    python bench/mass_floor.py --recall --floors 1e-7,1e-6
"""

from __future__ import annotations

import json
import statistics

import numpy as np
from common import CUTOFFS, VARIANTS, default_eval_sets, load_dataset, parser, profile_hipporag1, recall_at, say
from scale import Corpus, TokenBagEncoder, make_queries

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import HippoConfig


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--size", type=int, help="the kept namespace bench-scale-<size>")
    p.add_argument("--recall", action="store_true", help="recall on the evaluation namespaces instead")
    p.add_argument("--queries", type=int, default=20)
    p.add_argument("--floors", default="1e-7,1e-6,1e-5,1e-4", help="ppr_min_mass values; the first is the baseline")
    p.add_argument("--seed", type=int, default=0, help="the corpus seed of the scale run")
    args = p.parse_args()
    floors = [float(f) for f in args.floors.split(",")]
    if args.recall:
        return recall(floors)
    if not args.size:
        p.error("--size is required without --recall")
    queries = make_queries(Corpus(seed=args.seed).passages(args.size), args.queries)
    baseline: list[list[str]] = []
    for floor in floors:
        with HippoRAG(namespace=f"bench-scale-{args.size}", encoder=TokenBagEncoder(),
                      config=HippoConfig(ppr_min_mass=floor)) as memory:
            profile = profile_hipporag1(memory, queries)
            tops = [[r.id for r in memory.query(q.text, mode="hipporag1", top_k=10, entities=q.entities).passages]
                    for q in queries]
        baseline = baseline or tops
        print(json.dumps({"floor": floor, **{k: round(v, 1) for k, v in profile.items() if v is not None},
                          "top10_kept": statistics.mean(len(set(a) & set(b)) for a, b in zip(baseline, tops)),
                          "same_top10_order": sum(a == b for a, b in zip(baseline, tops))}), flush=True)


def recall(floors: list[float]) -> None:
    """hipporag1's recall at each floor on the evaluation sets, both casings."""
    for path, ns, n in default_eval_sets(None):
        dataset = load_dataset(path).subset(n)
        for variant in VARIANTS:
            questions, first = dataset.variant(variant).questions, None
            for floor in floors:
                with HippoRAG(namespace=ns, config=HippoConfig(ppr_min_mass=floor)) as memory:
                    tops = [[r.id for r in memory.query(q.question, mode="hipporag1", top_k=10).passages]
                            for q in questions]
                first = first or tops
                figures = " / ".join(f"{100 * np.mean([recall_at(t, q.gold, k) for t, q in zip(tops, questions)]):.1f}"
                                     for k in CUTOFFS)
                say(f"{dataset.name}, {ns}, {variant}, floor {floor}: R@1/2/5/10 {figures}; top 10 unlike the first "
                    f"floor's: {sum(a != b for a, b in zip(first, tops))} of {len(questions)}")


if __name__ == "__main__":
    main()
