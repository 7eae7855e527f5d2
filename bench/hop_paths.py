"""entity-ppr's second hop summed over its paths in the database (``cypher/entity_ppr_hop.cypher``) against the
same hop as GDS's PageRank stopped after HOP_STEPS + 1 iterations over the mention graph as the hop weighs it
(``cypher/bench_hop_pagerank.cypher`` on ``common.hop_graph``'s projection, each named mention weighted by its
count), from the sources entity-ppr's own queries give the hop: each question of
each evaluation set, as written and in lower case. Per set: the largest difference of a passage's mass between the
two (passages both rank), how many PageRank windows cut a passage with more mass than their last one, how many hops
order the passages both rank alike and give the same top 10 (masses to the walk's precision, ties by id; the sums
also rank the passages that the PageRank's window of WINDOW nodes, phrases among them, cut, which can join a tie of
the last places), and the p50 milliseconds of each
statement (the two alternate per hop, so a loaded machine slows each alike).

    python bench/hop_paths.py [--dataset DIR --namespace NS]... [--questions N]

Default: musique_train (offline extraction and the GPT-3.5 graph) and 2wikimultihopqa (offline), the namespaces
``hippo eval`` builds for them (index them first: ``hippo eval DATASET [--no-openie]``).
"""

from __future__ import annotations

import json
import time
from statistics import median
from typing import Any

from common import eval_set_options, eval_sets, hop_graph, parser

from hippo_neo4j import HippoRAG
from hippo_neo4j.db import cypher
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.evaluation.datasets import VARIANTS
from hippo_neo4j.retrieve.entity_ppr import HOP_STEPS, WINDOW, Ranking, walk_precision


def hop_runs(memory: HippoRAG, questions: list[str]) -> list[dict[str, Any]]:
    """The parameters of every second hop entity-ppr runs for ``questions``."""
    runs: list[dict[str, Any]] = []
    run = memory.store.run

    def spy(name: str, **params: Any) -> list[Any]:
        if name == "entity_ppr_hop":
            runs.append(params)
        return run(name, **params)

    memory.store.run = spy  # type: ignore[method-assign]
    try:
        for text in questions:
            memory.query(text, mode="entity-ppr", top_k=10)
    finally:
        memory.store.run = run  # type: ignore[method-assign]
    return runs


def timed(memory: HippoRAG, statement: str, params: dict[str, Any]) -> tuple[dict[int, float], float]:
    """The passages' masses (node id -> mass) of one run of ``statement`` and its milliseconds."""
    start = time.perf_counter()
    records = memory.driver.execute_query(statement, database_=memory.database, **params).records
    return {int(n): m for n, m in records[0]["window"]}, 1000 * (time.perf_counter() - start)


def compare(memory: HippoRAG, runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The two statements on every hop of ``runs``, alternating which goes first."""
    with hop_graph(memory) as graph:
        return _compare(memory, runs, graph)


def _compare(memory: HippoRAG, runs: list[dict[str, Any]], graph: str) -> dict[str, Any]:
    config = memory.config
    passages = {r["n"] for r in memory.driver.execute_query(
        "MATCH (p:Passage {ns: $ns}) RETURN id(p) AS n", ns=memory.namespace, database_=memory.database).records}
    sums, walk = cypher("entity_ppr_hop"), cypher("bench_hop_pagerank")
    gds = {"graph": graph, "maxIterations": HOP_STEPS + 1, "tolerance": config.ppr_tolerance,
           "concurrency": config.ppr_concurrency}
    ms: dict[str, list[float]] = {"paths": [], "pagerank": []}
    largest, cut_above, same, top10 = 0.0, 0, 0, 0
    for i, params in enumerate(runs):
        order = [("paths", sums, params), ("pagerank", walk, params | gds)]
        masses = {}
        for name, statement, p in order if i % 2 == 0 else order[::-1]:
            masses[name], took = timed(memory, statement, p)
            ms[name].append(took)
        paths, pagerank = masses["paths"], {n: m for n, m in masses["pagerank"].items() if n in passages}
        both = set(paths) & set(pagerank)
        largest = max([largest] + [abs(paths[n] - pagerank[n]) for n in both])
        cut = [paths[n] for n in set(paths) - set(pagerank)]
        cut_above += bool(cut and pagerank and max(cut) > min(pagerank.values()))
        rank = lambda m: Ranking.of({str(n): x for n, x in m.items()}, walk_precision(config), WINDOW).ids  # noqa: E731
        walked, summed = rank(pagerank), rank(paths)
        held = set(walked)
        same += [x for x in summed if x in held] == walked
        top10 += summed[:10] == walked[:10]
    return {"hops": len(runs), "largest_mass_difference": largest, "windows_that_cut_a_heavier_passage": cut_above,
            "same_order": same, "same_top10": top10, "p50_ms": {k: round(median(v), 1) if v else None for k, v in ms.items()}}


def main() -> int:
    p = parser(__doc__)
    eval_set_options(p)
    args = p.parse_args()
    report = {}
    for directory, namespace, questions in eval_sets(p, args):
        dataset = load_dataset(directory).subset(questions)
        texts = [q.question for variant in VARIANTS for q in dataset.variant(variant).questions]
        with HippoRAG(namespace=namespace) as memory:
            report[namespace] = compare(memory, hop_runs(memory, texts))
        print(json.dumps({namespace: report[namespace]}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
