"""Start-up cost of the library and the CLI, as a user pays it: the size of the virtualenv, the time of a
fresh ``python -c "import hippo_neo4j"``, and the wall time of fresh ``hippo query`` processes per mode.

    python bench/startup.py --namespace eval-musique_train-bge-small-en-v1.5 --runs 5 --json bench/out/startup.json

Run it with the virtualenv of ``make demo`` (default dependencies only) for the figures of a fresh install.
The query is the first musique_train question; each figure is the median of ``--runs`` fresh processes (the
first, which may fill OS caches, is also reported).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUESTION = "Who was the first president of the association which published Journal of Psychotherapy Integration?"


def tree_mb(path: Path) -> float:
    return sum((Path(root) / name).lstat().st_size for root, _, files in os.walk(path) for name in files) / 2**20


def wall(cmd: list[str], runs: int) -> dict[str, float | list[float]]:
    samples = []
    for _ in range(runs):
        began = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        samples.append(time.perf_counter() - began)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd[:4])} ... failed:\n{done.stderr[-2000:]}")
    return {"median_s": statistics.median(samples), "first_s": samples[0], "samples_s": samples}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])  # no library import: cold caches stay cold
    p.add_argument("--namespace", required=True, help="an indexed namespace to query")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--modes", default="entity-ppr,dense,hipporag2,hipporag1")  # entity-ppr: the default mode
    p.add_argument("--json", dest="json_out", default="bench/out/startup.json")
    args = p.parse_args()
    hippo = str(Path(sys.executable).with_name("hippo"))
    result = {"venv": sys.prefix, "venv_mb": tree_mb(Path(sys.prefix)),
              "import": wall([sys.executable, "-c", "import hippo_neo4j"], args.runs), "query": {}}
    for mode in args.modes.split(","):
        cmd = [hippo, "query", QUESTION, "--mode", mode, "--namespace", args.namespace, "--json"]
        result["query"][mode] = wall(cmd, args.runs)
    out = Path(args.json_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")  # not common.write_json: no library import
    print(f"virtualenv {result['venv']}: {result['venv_mb']:,.0f} MB")
    print(f"import hippo_neo4j: median {result['import']['median_s']:.2f} s")
    for mode, fig in result["query"].items():
        print(f"hippo query --mode {mode}: median {fig['median_s']:.2f} s (first {fig['first_s']:.2f} s)")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
