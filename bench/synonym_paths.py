"""Synonym candidates found in the client against the same found through the phrase vector index: musique_train
(the OpenIE file's extraction) indexed twice, into two fresh namespaces, once as a bulk run does (the
namespace's phrase vectors held in the client, exact candidates) and once with every new phrase searched in the
server's vector index.

    python bench/synonym_paths.py --json bench/out/synonym_paths.json

Prints per path the indexing time (extraction excluded) and its write and synonym parts, then how many SYNONYM
edges the two graphs share, hold alone, and the largest score difference of a shared edge. The namespaces are
dropped afterwards. The server's other namespaces slow the index path (its searches widen past their phrases).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hippo_neo4j import HippoRAG
from hippo_neo4j.config import ConnectionSettings
from hippo_neo4j.db import connect
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.extract import make_extractor

from suite import MUSIQUE, default_datasets_dir, timed_index

EDGES = "MATCH (a:Phrase {ns: $ns})-[s:SYNONYM]->(b:Phrase) RETURN a.text AS a, b.text AS b, s.score AS score"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default=str(default_datasets_dir() / MUSIQUE))
    parser.add_argument("--json", dest="json_out", default="bench/out/synonym_paths.json")
    args = parser.parse_args()
    passages = load_dataset(args.dataset).passages
    connection = ConnectionSettings.from_env()
    driver = connect(connection)
    result: dict = {"passages": len(passages)}
    edges = {}
    for path in ("client", "index"):
        memory = HippoRAG(connection, namespace=f"bench-synonyms-{path}", driver=driver, extractor=make_extractor("offline"))
        try:
            memory.drop_namespace()
            if path == "index":
                memory.indexer.synonyms.hold = lambda passages, dimension: None  # every phrase searched in the index
            report, index_s = timed_index(memory, [p.model_copy(deep=True) for p in passages])
            t = report.timings
            result[path] = {"index_s": index_s, "write_s": t.get("write_s"), "synonym_s": t.get("synonym_s"),
                            "embed_s": t.get("embed_s"), "edges": report.synonym_edges}
            print(path, json.dumps(result[path]), flush=True)
            edges[path] = {(r["a"], r["b"]): r["score"] for r in driver.execute_query(EDGES, ns=memory.namespace).records}
        finally:
            memory.drop_namespace()
    client, index = edges["client"], edges["index"]
    shared = set(client) & set(index)
    result["edges"] = {
        "shared": len(shared), "client_only": len(set(client) - set(index)), "index_only": len(set(index) - set(client)),
        "max_score_difference": max((abs(client[k] - index[k]) for k in shared), default=None),
        "client_only_examples": sorted(set(client) - set(index))[:5], "index_only_examples": sorted(set(index) - set(client))[:5],
    }
    print(json.dumps(result["edges"]))
    Path(args.json_out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json_out).write_text(json.dumps(result, indent=2, default=list))
    driver.close()


if __name__ == "__main__":
    main()
