"""entity-ppr's walks ranking passages by their mass per mention: a walk on an undirected graph gives a node mass in
proportion to its degree as well as to its closeness to the sources, and by the walk's symmetry,
d(s)·p_s(v) = d(v)·p_v(s), a passage's mass divided by its degree (its named mentions) is the mass a walk from the
passage brings the sources. The mode ranks every walk's passages by their mass; each variant ranks the passages of
some walks (the entity walk, the second hop, the walk) per mention instead, counting every named mention, or only
those of phrases that lead somewhere else (another passage or a synonym: the paths into the passage); by the
square root of the mentions (the geometric mean of the walks both ways, sources to passage and passage to sources);
or by the mass less what the passage gets back through the phrases only it names (a share d² of what it sends them:
what a passage that names many things of its own keeps). Run in the in-process reference
(``ReferenceGraph.entity_ppr`` with ``per_mention``, ``mentions``, ``mention_power``, ``no_returns``) on the evaluation
namespaces, each question as written and in lower case, from the phrase seeds the mode itself linked; ``current`` is
the mode in the reference (bench/common.reference_variants).

    python bench/degree_variants.py [--questions N]
    python bench/degree_variants.py --dataset ../shared/datasets/case_study_university \\
        --namespace eval-case_study_university-offline-bge-small-en-v1.5

musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the namespaces
``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``), or the sets given.
"""

from __future__ import annotations

import sys

from common import variants_main

VARIANTS = {
    "the entity walk and the hop per mention": {"per_mention": frozenset({"entity", "hop"})},
    "the entity walk per mention": {"per_mention": frozenset({"entity"})},
    "the hop per mention": {"per_mention": frozenset({"hop"})},
    "all three walks per mention": {"per_mention": frozenset({"walk", "entity", "hop"})},
    "the entity walk and the hop per shared mention": {"per_mention": frozenset({"entity", "hop"}), "mentions": "shared"},
    "the entity walk per shared mention": {"per_mention": frozenset({"entity"}), "mentions": "shared"},
    "the entity walk and the hop per √mention": {"per_mention": frozenset({"entity", "hop"}), "mention_power": 0.5},
    "the entity walk per √mention": {"per_mention": frozenset({"entity"}), "mention_power": 0.5},
    "the entity walk without returns": {"no_returns": frozenset({"entity"})},
    "the entity walk and the walk without returns": {"no_returns": frozenset({"entity", "walk"})},
}


def main() -> int:
    return variants_main(__doc__, VARIANTS)


if __name__ == "__main__":
    sys.exit(main())
