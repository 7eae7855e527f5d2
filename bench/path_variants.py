"""entity-ppr's walks stepping only along the paths between passages: from a passage, the entity walk and the
second hop step only into the phrases that lead somewhere else (another passage, or a synonym), not into those the
passage alone names, each of which would only hand its mass back to it (cypher/project_mention_graph.cypher, the
`path` weights). Each variant sets which walks do that (``paths``: the mode's are the entity walk and the hop; the
walk seeded by the passages like the question steps into every phrase), and whether they also step into the
question's own phrases (``seed_mentions``: a graph per question, which no projection holds). Run in the in-process
reference (``ReferenceGraph.entity_ppr`` with ``paths`` and ``seed_mentions``) on the evaluation namespaces, each
question as written and in lower case, from the phrase seeds the mode itself linked; ``current`` is the mode in the
reference (bench/common.reference_variants).

    python bench/path_variants.py [--questions N]
    python bench/path_variants.py --dataset ../shared/datasets/case_study_university \\
        --namespace eval-case_study_university-offline-bge-small-en-v1.5

musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the namespaces
``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``), or the sets given.
"""

from __future__ import annotations

import sys

from common import variants_main

ALL = frozenset({"walk", "entity", "hop"})
VARIANTS = {
    "every walk into every phrase (as before)": {"paths": frozenset()},
    "the entity walk alone": {"paths": frozenset({"entity"})},
    "the entity walk alone, and the question's phrases": {"paths": frozenset({"entity"}), "seed_mentions": True},
    "the entity walk and the hop, and the question's phrases": {"seed_mentions": True},
    "the entity walk and the walk": {"paths": frozenset({"entity", "walk"})},
    "the walk alone": {"paths": frozenset({"walk"})},
    "the hop alone": {"paths": frozenset({"hop"})},
    "all three walks": {"paths": ALL},
    "all three walks, and the question's phrases": {"paths": ALL, "seed_mentions": True},
}


def main() -> int:
    return variants_main(__doc__, VARIANTS)


if __name__ == "__main__":
    sys.exit(main())
