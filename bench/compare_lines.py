"""Two `hippo eval --json` runs of one dataset on two servers (e.g. Neo4j 2026.01 + GDS 2.26 and 5.26 + GDS 2.13),
compared mode by mode: questions whose top 10 are the same passages in the same order, the largest difference
of a top-10 score, whether the seeds were the same, and each run's median latency. Exit status 1 when a graph
mode differs (top 10, or a score by more than --tolerance).

    hippo eval DATASET --json a.json   # on the first server, then the same on the second (HIPPO_NEO4J_URI)
    python bench/compare_lines.py a.json b.json [--tolerance 1e-6]
"""

from __future__ import annotations

import argparse
import json
import sys

GRAPH = ("entity-ppr", "hipporag1", "hipporag2", "hybrid")  # the modes (and their variants) that walk the graph


def compare(a: dict, b: dict, mode: str) -> dict:
    same_top, same_seeds, worst = 0, 0, 0.0
    pairs = list(zip(a["questions"], b["questions"]))
    for qa, qb in pairs:
        ra, rb = qa[mode]["retrieved"][:10], qb[mode]["retrieved"][:10]
        same_top += [x[0] for x in ra] == [x[0] for x in rb]
        seeds = lambda q: (q[mode].get("seeds"), q[mode].get("passage_seeds"), q[mode].get("facts"))  # noqa: E731
        same_seeds += seeds(qa) == seeds(qb)
        scores_b = dict((pid, s) for pid, s in rb)
        worst = max([worst] + [abs(s - scores_b[pid]) for pid, s in ra if pid in scores_b])
    return {"questions": len(pairs), "same_top10": same_top, "same_seeds": same_seeds, "max_score_diff": worst,
            "p50_ms": [run["diagnostics"][mode]["latency_ms_p50"] for run in (a, b)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--tolerance", type=float, default=1e-6)
    args = parser.parse_args()
    a, b = (json.load(open(path)) for path in (args.first, args.second))
    failed = False
    print(f"| mode | same top 10 | same seeds | max score diff | p50 ms {args.first} | p50 ms {args.second} |")
    print("|---|---|---|---|---|---|")
    for mode in (m for m in a["summary"] if m in b["summary"]):
        c = compare(a, b, mode)
        print(f"| {mode} | {c['same_top10']}/{c['questions']} | {c['same_seeds']}/{c['questions']} | "
              f"{c['max_score_diff']:.1e} | {c['p50_ms'][0]:.1f} | {c['p50_ms'][1]:.1f} |")
        failed |= mode.startswith(GRAPH) and (c["same_top10"] < c["questions"] or c["max_score_diff"] > args.tolerance)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
