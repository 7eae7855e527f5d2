"""How close a vector index's top nodes come to the exact ones, by the number of candidates the index reads
(its HNSW beam), on one indexed namespace: for each question, the namespace's top 10 passages (facts, phrases) from
``db.index.vector.queryNodes`` at each k against the exact top 10 by cosine over the namespace's nodes.

    python bench/vector_candidates.py --namespace eval-musique_train-bge-small-en-v1.5 --queries 100
    python bench/vector_candidates.py --namespace eval-musique_train-bge-small-en-v1.5 --index fact

The index spans every namespace of the database, so other namespaces' vectors (twins of the same corpus
among them) compete for the k candidates. Prints per k: questions whose top 10 differs, exact top-5
nodes the index missed, and the median milliseconds per search, as JSON.
"""

from __future__ import annotations

import json
import statistics
import time

from hippo_neo4j import HippoRAG
from hippo_neo4j.evaluation import load_dataset

from suite import namespace_parser

INDEXED = """CALL db.index.vector.queryNodes($index, $k, $embedding) YIELD node, score
WITH node, score WHERE node.ns = $ns RETURN coalesce(node.id, node.text) AS id ORDER BY score DESC LIMIT 10"""
EXACT = """MATCH (p {ns: $ns}) WHERE $label IN labels(p) AND p.embedding IS NOT NULL
RETURN coalesce(p.id, p.text) AS id ORDER BY vector.similarity.cosine(p.embedding, $embedding) DESC, id LIMIT 10"""
INDEXES = {"passage": ("Passage", "hippo_passage_embedding"), "fact": ("Fact", "hippo_fact_embedding"),
           "phrase": ("Phrase", "hippo_phrase_embedding")}


def main() -> None:
    parser = namespace_parser(__doc__)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", default="50,100,200,400", help="candidate counts, comma-separated")
    parser.add_argument("--index", choices=sorted(INDEXES), default="passage")
    args = parser.parse_args()
    questions = [q.question for q in load_dataset(args.dataset, use_openie=False).questions[: args.queries]]
    with HippoRAG(namespace=args.namespace) as memory:
        vectors = [v.tolist() for v in memory.encoder.encode_queries(questions)]
        ids = lambda statement, **p: [r["id"] for r in memory.driver.execute_query(  # noqa: E731
            statement, ns=args.namespace, database_=memory.database, **p).records]
        label, index = INDEXES[args.index]
        exact = [ids(EXACT, label=label, embedding=v) for v in vectors]
        report = {"namespace": args.namespace, "index": index, "questions": len(questions), "by_k": {}}
        for k in (int(x) for x in args.k.split(",")):
            times, found = [], []
            for v in vectors:
                start = time.perf_counter()
                found.append(ids(INDEXED, index=index, k=k, embedding=v))
                times.append((time.perf_counter() - start) * 1000)
            report["by_k"][k] = {
                "questions_differing_top10": sum(e != f for e, f in zip(exact, found)),
                "exact_top5_missed": sum(len(set(e[:5]) - set(f[:5])) for e, f in zip(exact, found)),
                "median_ms": round(statistics.median(times), 2),
            }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
