"""How loose can GDS PageRank's convergence tolerance be? For hipporag1 and hipporag2, on a dataset's
questions: recall, how many top-10 rankings differ from the 1e-9 run, the largest score difference, and
the p50 latency, per tolerance (relative to the total seed weight).

    python bench/ppr_tolerance.py --dataset ../shared/datasets/musique_train

Needs the evaluation's namespace (``hippo eval`` builds ``eval-musique_train``). Writes
bench/out/ppr_tolerance.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from hippo_neo4j import HippoRAG
from hippo_neo4j import evaluation as ev
from hippo_neo4j.evaluation.metrics import short

TOLERANCES = (1e-9, 1e-8, 1e-7, 1e-6)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dataset", default="../shared/datasets/musique_train")
    ap.add_argument("--namespace", default=None)
    ap.add_argument("--json", default="bench/out/ppr_tolerance.json")
    args = ap.parse_args()
    dataset = ev.load_dataset(args.dataset)
    out: dict = {}
    with HippoRAG(namespace=args.namespace or ev.default_namespace(dataset)) as memory:
        entities = ev.query_entities(memory, dataset.questions)
        base = memory.config
        try:
            for mode in ("hipporag1", "hipporag2"):
                reference = None
                for tol in TOLERANCES:
                    memory.config = base.model_copy(update={"ppr_tolerance": tol})
                    ev.evaluate(memory, dataset.subset(3), modes=[mode], entities=entities)  # warm-up
                    result = ev.evaluate(memory, dataset, modes=[mode], entities=entities)
                    ranked = [q[mode]["retrieved"] for q in result["questions"]]
                    row = {"summary": result["summary"][mode],
                           "latency_ms_p50": result["diagnostics"][mode]["latency_ms_p50"]}
                    if reference is None:
                        reference = ranked
                    else:
                        row["rankings_changed"] = sum(
                            [p for p, _ in a] != [p for p, _ in b] for a, b in zip(ranked, reference))
                        row["max_score_difference"] = max(
                            (abs(sa - sb) for a, b in zip(ranked, reference) for (_, sa), (_, sb) in zip(a, b)),
                            default=0.0)
                        row["median_top1_score"] = statistics.median(r[0][1] for r in reference if r)
                    out.setdefault(mode, {})[f"{tol:g}"] = row
                    print(mode, f"tol {tol:g}", short(row["summary"]),
                          {k: v for k, v in row.items() if k != "summary"}, flush=True)
        finally:
            memory.config = base
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
