"""Namespaces side by side: one namespace of musique_train alone on the server, then with --copies more copies.

Indexes musique_train (its GPT-3.5 OpenIE file) into `bench-ns-0` and times it; measures that namespace's
hipporag1 linking (query entities to phrases) and every mode's query p50; copies the namespace --copies times on
the server (nodes and edges, each copy with its own labels and indexes) and queries each copy once (its
projections); measures the first namespace again, then times indexing one more copy, `bench-ns-last`, beside
them. Ratios > 1 are what the other namespaces cost. Run it on a server of its own (`HIPPO_NEO4J_PORT` ...).
"""

from __future__ import annotations

from common import (asked, default_datasets_dir, drop, emptied, measure_latency, musique_docs, parser, percentile,
                    say, timed, timed_index, write_json)

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract import make_extractor
from hippo_neo4j.retrieve.linking import link_entities

COPY = [  # one namespace's nodes, then its edges, into namespace $dst (with the labels its own indexes cover)
    "MATCH (n:HippoNamespace {name: $src}) MERGE (m:HippoNamespace {name: $dst}) SET m = n {.*, name: $dst}",
    "MATCH (n) WHERE (n:Passage OR n:Phrase OR n:Fact) AND n.ns = $src "
    "WITH n, [k IN ['Passage', 'Phrase', 'Fact'] WHERE k IN labels(n)][0] AS kind "
    "CALL (n, kind) { CREATE (c:$([kind, $labels[toLower(kind)]])) SET c = n {.*, ns: $dst} } "
    "IN TRANSACTIONS OF 5000 ROWS",
    "MATCH (a:Phrase {ns: $src})-[r:RELATION|SYNONYM]->(b:Phrase) CALL (a, r, b) { "
    "MATCH (ca:Phrase {ns: $dst, text: a.text}), (cb:Phrase {ns: $dst, text: b.text}) "
    "CREATE (ca)-[c:$(type(r))]->(cb) SET c = properties(r) } IN TRANSACTIONS OF 5000 ROWS",
    "MATCH (a:Phrase {ns: $src})-[r:MENTIONED_IN]->(p:Passage) CALL (a, r, p) { "
    "MATCH (ca:Phrase {ns: $dst, text: a.text}), (cp:Passage {ns: $dst, id: p.id}) "
    "CREATE (ca)-[c:MENTIONED_IN]->(cp) SET c = properties(r) } IN TRANSACTIONS OF 5000 ROWS",
]


def measure(memory: HippoRAG, questions) -> dict[str, float | None]:
    """p50 ms of hipporag1's linking (query entities to phrases) and of every mode's query."""
    linking = [timed(lambda q=q: link_entities(memory.store, memory.encoder, q.entities)) for q in questions]
    modes = measure_latency(memory, questions, reference=False)
    return {"linking": percentile(linking, 50)} | {mode: m["p50"] for mode, m in modes.items()}


def main() -> None:
    p = parser(__doc__)
    p.add_argument("--copies", type=int, default=9)
    p.add_argument("--queries", type=int, default=30)
    p.add_argument("--json", default="bench/out/namespaces.json")
    args = p.parse_args()
    connection = ConnectionSettings.from_env()
    driver = connect(connection)
    extractor = make_extractor("offline")
    dataset = load_dataset(default_datasets_dir() / "musique_train")
    questions = asked(extractor, [q.question for q in dataset.questions[: args.queries]])
    docs = musique_docs()
    made = [emptied(HippoRAG(connection, namespace="bench-ns-0", driver=driver))]
    result: dict = {"copies": args.copies, "queries": len(questions)}
    result["index_alone_s"] = timed_index(made[0], docs)[1]
    result["alone_ms"] = measure(made[0], questions)
    say(f"alone: index {result['index_alone_s']:.0f} s, p50 ms {result['alone_ms']}")
    for i in range(1, args.copies + 1):
        copy = emptied(HippoRAG(connection, namespace=f"bench-ns-{i}", driver=driver))
        made.append(copy)
        with driver.session(database=connection.database) as session:
            for statement in COPY:
                session.run(statement, src="bench-ns-0", dst=copy.namespace, labels=copy.store.labels).consume()
        copy.ensure_schema()
        for mode in ("hipporag1", "hipporag2", "entity-ppr"):  # its projections, as a namespace in use has
            copy.query(questions[0].text, mode=mode, entities=questions[0].entities)
        say(f"copy {i}: {copy.stats()['phrases']} phrases")
    result["beside_ms"] = measure(made[0], questions)
    made.append(emptied(HippoRAG(connection, namespace="bench-ns-last", driver=driver)))
    result["index_beside_s"] = timed_index(made[-1], docs)[1]
    result["ratios"] = {k: result["beside_ms"][k] / v for k, v in result["alone_ms"].items() if v}
    result["ratios"]["index"] = result["index_beside_s"] / result["index_alone_s"]
    say(f"beside {args.copies} copies: index {result['index_beside_s']:.0f} s, p50 ms {result['beside_ms']}")
    say(f"ratios: {result['ratios']}")
    write_json(args.json, result)
    for memory in made:
        drop(memory, result)


if __name__ == "__main__":
    main()
