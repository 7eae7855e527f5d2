"""Where a graph query's statement spends its time, on one indexed namespace: GDS PageRank alone (one iteration
and to convergence, ``cypher/bench_ppr_only.cypher``), entity-ppr's walk with its first window of nodes against a
window 8 times wider, and its entity walk, hipporag2's statement with its mass floor against sorting every node (rankings compared)
and its PageRank alone, and the passage cosines of a query in the client and on the server. Statements alternate
per question, so a loaded machine slows each alike. Prints medians (ms) as JSON; the figures: docs/results.md.
"""

from __future__ import annotations

import json
from collections import defaultdict

from common import Steps, namespace_questions

from hippo_neo4j import HippoRAG
from hippo_neo4j.db import cypher
from hippo_neo4j.graph.server import Server
from hippo_neo4j.retrieve import entity_ppr
from hippo_neo4j.retrieve.entity_ppr import entity_ppr_parameters, entity_seeds, z_score_seeds
from hippo_neo4j.retrieve.hipporag1 import ppr_parameters
from hippo_neo4j.retrieve.hipporag2 import mass_floor, passage_seeds, ppr2_parameters

WIDE = 8 * entity_ppr.WINDOW  # a window 8 times wider


def main() -> None:
    args, extractor, questions = namespace_questions(__doc__, 15)
    ppr, entity_statement, hipporag2_statement = (cypher(name) for name in (
        "bench_ppr_only", "entity_ppr_passages", "ppr2_passages"))
    with HippoRAG(namespace=args.namespace, extractor=extractor) as memory:
        ns, db, driver = memory.namespace, memory.database, memory.driver
        phrase, mentions, passages = (Server.of(driver, db).projections.ensure(ns, kind)
                                      for kind in ("phrase", "mentions", "passage"))
        hipporag2 = memory.retriever("hipporag2")
        runs: dict[str, list[tuple[str, dict]]] = defaultdict(list)  # statement and parameters, per question
        client: list = []  # query vectors, for the client's passage cosines
        for text, entities in ((q.text, q.entities) for q in questions):
            linked = memory.link_entities(entities)
            seeds = {link.phrase: link.weight for link in linked if link.weight > 0}
            if seeds:
                p = ppr_parameters(memory.config, seeds, 10) | {"graph": phrase.name, "ns": ns}
                runs["pagerank, 1 iteration"].append((ppr, p | {"maxIterations": 1}))
                runs["pagerank, to tolerance"].append((ppr, p))
            vector = memory.encoder.encode_queries([text])[0]
            cosines = memory.retrieval.passage_vectors().cosines(vector, mentions)
            seeds = entity_seeds(linked, memory.config.entity_share)
            e = entity_ppr_parameters(memory.config) | {
                "graph": mentions.name, "graphVersion": mentions.version, "ns": ns,
                "passageSources": cosines.sources(z_score_seeds(cosines)),
                "seeds": [{"text": t, "weight": w} for t, w in seeds.items()]}
            runs["passage cosines on the server"].append((cypher("passage_cosines"), {
                "ns": ns, "embedding": vector.tolist(), "graphVersion": mentions.version}))
            client.append(vector)
            runs[f"entity-ppr, window {entity_ppr.WINDOW}"].append((entity_statement, e))
            runs[f"entity-ppr, window {WIDE}"].append((entity_statement, e | {"window": WIDE}))
            runs[f"entity walk, window {entity_ppr.WINDOW}"].append((cypher("entity_walk"), e))
            fact_seeds = hipporag2.fact_seeds(memory.link_facts(vector), memory.config)  # type: ignore[attr-defined]
            if fact_seeds:
                passage = memory.retrieval.passage_vectors().cosines(vector, passages)
                weights = passage_seeds(memory.config, passage, None)
                h = ppr2_parameters(memory.config, fact_seeds, 10) | {
                    "graph": passages.name, "graphVersion": passages.version, "ns": ns,
                    "passageSources": passage.sources(weights)}
                runs["hipporag2, mass floor"].append(
                    (hipporag2_statement, h | {"massFloor": mass_floor(weights, 10, memory.config.damping)}))
                runs["hipporag2, every node sorted"].append((hipporag2_statement, h | {"massFloor": 0.0}))
                runs["hipporag2, pagerank only"].append((cypher("bench_ppr2_only"), h))
        steps, ranked = Steps(*runs), defaultdict(list)
        for i in range(max(len(v) for v in runs.values())):
            for name, items in runs.items():
                if i < len(items):
                    records = steps(name, lambda: driver.execute_query(*items[i], database_=db).records)
                    if "ranked" in records[0].keys():
                        ranked[name].append([(r["id"], r["score"]) for r in records[0]["ranked"]])
        held = memory.retrieval.passage_vectors()
        for vector in client:
            steps("passage cosines in the client", lambda: held.cosines(vector, mentions))
        out = {name: round(v, 1) for name, v in steps.medians().items() if v is not None}
        for label, (cut, full) in {
            "hipporag2 rankings and scores equal (mass floor vs every node)":
                ("hipporag2, mass floor", "hipporag2, every node sorted"),
        }.items():
            out[label] = f"{sum(a == b for a, b in zip(ranked[cut], ranked[full]))}/{len(ranked[full])}"
        out["projections (nodes)"] = {"phrase": phrase.nodes, "mentions": mentions.nodes, "passage": passages.nodes}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
