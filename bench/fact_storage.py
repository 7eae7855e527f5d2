"""Facts as nodes or as relationships: the measurement behind hipporag2's choice of ``(:Fact)`` nodes.

The alternative is a relationship vector index: one relationship per distinct triple between its subject
and object phrases, carrying the triple's embedding. This script copies an indexed namespace's facts into
such relationships (type ``HIPPO_FACT_PROBE``) with their own relationship vector index, then runs the same
query-to-fact search both ways on the dataset's questions and compares latency and the top-5 facts found.
The probe relationships and their index are removed afterwards.

    python bench/fact_storage.py --namespace eval-musique_train --dataset ../shared/datasets/musique_train

Needs a namespace indexed with facts (``hippo eval`` builds ``eval-musique_train``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset

INDEX = "hippo_fact_probe"
REL_QUERY = """
CALL db.index.vector.queryRelationships($index, $k, $embedding) YIELD relationship AS r, score
WITH r, score WHERE r.ns = $ns
WITH r, score ORDER BY score DESC LIMIT $topK
WITH r, score, startNode(r) AS s, endNode(r) AS o
RETURN r.id AS id, s.text AS subject, o.text AS object, 2 * score - 1 AS score,
       COUNT { (s)-[:MENTIONED_IN]->() } AS subjectPassages, COUNT { (o)-[:MENTIONED_IN]->() } AS objectPassages
"""


def timed(fn):
    began = time.perf_counter()
    out = fn()
    return (time.perf_counter() - began) * 1000, out


def cleanup(memory: HippoRAG) -> None:
    """Remove the probe index and relationships (also those a run that was interrupted left behind)."""
    with memory.driver.session(database=memory.database) as session:  # CALL IN TRANSACTIONS: implicit tx
        session.run(f"DROP INDEX {INDEX} IF EXISTS").consume()
        session.run("MATCH ()-[r:HIPPO_FACT_PROBE]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 5000 ROWS").consume()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--namespace", default="eval-musique_train")
    ap.add_argument("--dataset", default="../shared/datasets/musique_train")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--json", default="bench/out/fact_storage.json")
    args = ap.parse_args()

    questions = [q.question for q in load_dataset(args.dataset).questions[: args.queries]]
    with HippoRAG(namespace=args.namespace) as memory:
        run = lambda q, **p: memory.driver.execute_query(q, database_=memory.database, **p).records  # noqa: E731
        facts = [dict(r) for r in run(
            "MATCH (f:Fact {ns: $ns}) WHERE f.embedding IS NOT NULL "
            "RETURN f.id AS id, f.subject AS subject, f.object AS object, f.embedding AS embedding", ns=args.namespace,
        )]
        if not facts:
            raise SystemExit(f"namespace {args.namespace!r} has no facts: run `hippo eval {args.dataset}` first")
        dim = len(facts[0]["embedding"])
        result: dict = {"namespace": args.namespace, "facts": len(facts), "queries": len(questions)}
        cleanup(memory)
        try:
            write_ms, _ = timed(lambda: [
                run("UNWIND $rows AS row MATCH (s:Phrase {ns: $ns, text: row.subject}), (o:Phrase {ns: $ns, text: row.object}) "
                    "CREATE (s)-[:HIPPO_FACT_PROBE {ns: $ns, id: row.id, embedding: row.embedding}]->(o)",
                    rows=facts[i : i + 2000], ns=args.namespace)
                for i in range(0, len(facts), 2000)
            ])
            result["relationship_write_s"] = write_ms / 1000
            index_ms, _ = timed(lambda: (
                run(f"CREATE VECTOR INDEX {INDEX} IF NOT EXISTS FOR ()-[r:HIPPO_FACT_PROBE]-() ON (r.embedding) "
                    f"OPTIONS {{indexConfig: {{`vector.dimensions`: {int(dim)}, `vector.similarity_function`: 'cosine', "
                    "`vector.quantization.enabled`: false}}"),
                run("CALL db.awaitIndexes(600)"),
            ))
            result["relationship_index_build_s"] = index_ms / 1000
            node_ms, rel_ms, same = [], [], 0
            vectors = memory.encoder.encode_queries(questions)
            for vector in vectors[:3]:  # warm-up
                memory.link_facts(vector)
                run(REL_QUERY, index=INDEX, k=50, embedding=vector.tolist(), ns=args.namespace, topK=5)
            for vector in vectors:
                t1, by_node = timed(lambda: memory.link_facts(vector))
                t2, by_rel = timed(lambda: run(REL_QUERY, index=INDEX, k=50, embedding=vector.tolist(),
                                               ns=args.namespace, topK=5))
                node_ms.append(t1)
                rel_ms.append(t2)
                same += [(f.subject, f.object) for f in by_node] == [(r["subject"], r["object"]) for r in by_rel]
            result |= {
                "node_index_p50_ms": statistics.median(node_ms),
                "relationship_index_p50_ms": statistics.median(rel_ms),
                "same_top5_subject_object": same,
            }
        finally:
            cleanup(memory)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
