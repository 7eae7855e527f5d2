"""Why hipporag2 ranks as it does on a dataset: how many retrieved facts and phrase seeds belong to gold
passages, and recall under variants of its settings (phrase seeds kept, passage weight, top-N seeding).

    hippo eval ../shared/datasets/musique_train --json bench/out/eval_musique_train.json
    python bench/hipporag2_diagnosis.py --eval-json bench/out/eval_musique_train.json

The variants run on the evaluation's own questions: they explain a result, they do not tune defaults.
Writes bench/out/hipporag2_diagnosis.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from hippo_neo4j import HippoRAG
from hippo_neo4j import evaluation as ev
from hippo_neo4j.evaluation.metrics import short
from suite import Query, profile_hipporag2
from hippo_neo4j.text import normalize_phrase

VARIANTS = {
    "defaults": {},
    "2 phrase seeds": {"link_top_phrases": 2},
    "passage weight 0": {"passage_node_weight": 0.0},
    "passage weight 0.2": {"passage_node_weight": 0.2},
    "passage weight 0.5": {"passage_node_weight": 0.5},
    "10 facts": {"fact_top_k": 10},
    "top-200 dense passages seeded": {"passage_seed_top_n": 200},
}


def gold_shares(result: dict, dataset: ev.Dataset, memory: HippoRAG) -> dict:
    """Per mode with seeds: the share of phrase seeds that are phrases of a gold passage; for hipporag2 also
    the share of retrieved facts asserted by a gold passage."""
    phrases: dict[str, set[str]] = {}
    for p in dataset.passages:
        found = set()
        for t in p.extraction.triples if p.extraction else []:
            if isinstance(t, (list, tuple)) and len(t) == 3 and all(isinstance(x, str) for x in t):
                found |= {normalize_phrase(t[0]), normalize_phrase(t[2])}
        phrases[p.passage_id] = found
    sources = {
        (r["s"], r["p"], r["o"]): set(r["src"])
        for r in memory.driver.execute_query(
            "MATCH (f:Fact {ns: $ns}) RETURN f.subject AS s, f.predicate AS p, f.object AS o, f.sources AS src",
            ns=memory.namespace, database_=memory.database,
        ).records
    }
    out = {}
    modes = [m for m in result["summary"] if all(m in q for q in result["questions"])]
    for mode in modes:
        seeds = in_gold = with_gold_seed = facts = gold_facts = with_gold_fact = 0
        for q in result["questions"]:
            gold, entry = set(q["gold"]), q[mode]
            gold_phrases = set().union(*(phrases.get(g, set()) for g in gold))
            hits = [s for s, _ in entry["seeds"] if s in gold_phrases]
            seeds, in_gold, with_gold_seed = seeds + len(entry["seeds"]), in_gold + len(hits), with_gold_seed + bool(hits)
            found = [bool(sources.get(tuple(f[:3]), set()) & gold) for f in entry.get("facts", [])]
            facts, gold_facts, with_gold_fact = facts + len(found), gold_facts + sum(found), with_gold_fact + any(found)
        if seeds:
            out[mode] = {"seeds_in_gold_passages": in_gold / seeds, "questions_with_a_gold_seed": with_gold_seed}
            if facts:
                out[mode] |= {"facts_from_gold_passages": gold_facts / facts, "questions_with_a_gold_fact": with_gold_fact}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="../shared/datasets/musique_train")
    ap.add_argument("--eval-json", default="bench/out/eval_musique_train.json")
    ap.add_argument("--namespace", default=None, help="the evaluation's namespace [default: eval-<dataset dir>]")
    ap.add_argument("--json", default="bench/out/hipporag2_diagnosis.json")
    args = ap.parse_args()

    dataset = ev.load_dataset(args.dataset)
    result = json.loads(Path(args.eval_json).read_text())
    out: dict = {"variants": {}}
    with HippoRAG(namespace=args.namespace or ev.default_namespace(dataset)) as memory:
        out["gold_shares"] = gold_shares(result, dataset, memory)
        print(json.dumps(out["gold_shares"], indent=2))
        base = memory.config
        queries = [Query(q.question, []) for q in dataset.questions[:40]]
        try:
            for name, overrides in VARIANTS.items():
                memory.config = base.model_copy(update=overrides)
                summary = ev.evaluate(memory, dataset, modes=["hipporag2"])["summary"]["hipporag2"]
                profile_hipporag2(memory, queries[:3])  # warm-up
                timing = profile_hipporag2(memory, queries)
                out["variants"][name] = {"overrides": overrides, "summary": summary, "profile_ms": timing}
                print(f"{name}: {short(summary)}, p50 total {timing['total']:.0f} ms", flush=True)
        finally:
            memory.config = base
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
