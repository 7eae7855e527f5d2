"""Background refreshes one at a time or all at once: the first graph queries after a write, on one indexed
namespace. Every write starts a refresh of each projection kind in use; built together they take every core
from the queries that go on meanwhile. Alternates the two settings per repetition, each repetition being
``suite.after_write_ms`` (5 rounds: index a passage, time the first hipporag1, hipporag2 and entity-ppr
query, delete it; then a steady query). The passages it writes are deleted again.

    python bench/refresh_builds.py --namespace eval-musique_train-bge-small-en-v1.5 --repeats 6

Prints, per setting and mode, the median over repetitions of the first-query and steady medians (ms), as JSON.
"""

from __future__ import annotations

import json
import statistics
import threading

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.graph import projection

from suite import Query, after_write_ms, namespace_parser

SETTINGS = {"one at a time": 1, "all at once": 100}


def main() -> None:
    parser = namespace_parser(__doc__)
    parser.add_argument("--repeats", type=int, default=6)
    args = parser.parse_args()
    extractor = OfflineExtractor()
    dataset = load_dataset(args.dataset)
    queries = [Query(q.question, list(extractor.query_entities(q.question))) for q in dataset.questions[:10]]
    runs: dict[str, list[dict]] = {name: [] for name in SETTINGS}
    original = projection._building
    try:
        with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
            for rep in range(args.repeats):
                for name, builds in SETTINGS.items():
                    projection._building = threading.Semaphore(builds)
                    copies = [p.model_copy(update={"id": f"bench-refresh-{rep}-{i}", "text": f"{p.text} (revised {rep})"})
                              for i, p in enumerate(dataset.passages[5 * rep : 5 * rep + 5])]
                    runs[name].append(after_write_ms(memory, copies, queries))
    finally:
        projection._building = original
    report = {
        name: {mode: {"first": round(statistics.median(r[mode]["first"] for r in reps), 1),
                      "steady": round(statistics.median(r[mode]["steady"] for r in reps), 1)}
               for mode in reps[0] if isinstance(reps[0][mode], dict)}
        for name, reps in runs.items()
    }
    print(json.dumps({"namespace": args.namespace, "repeats": args.repeats} | report, indent=2))


if __name__ == "__main__":
    main()
