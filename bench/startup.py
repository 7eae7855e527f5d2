"""Start-up cost of the library and the CLI, as a user pays it: the size of the virtualenv, the time of a
fresh ``python -c "import hippo_neo4j"``, and the wall and CPU (user + system) time of fresh ``hippo query``
processes per mode.

    python bench/startup.py --namespace eval-musique_train-bge-small-en-v1.5 --runs 5 --json bench/out/startup.json
    python bench/startup.py --namespace ... --modes entity-ppr,dense --against /tmp/previous   # paired runs

Run it with the virtualenv of ``make demo`` (default dependencies only) for the figures of a fresh install.
The query is the first musique_train question; each figure is the median of ``--runs`` fresh processes (the
first, which may fill OS caches, is also reported). ``--against DIR`` (a checkout of another commit, e.g.
``git archive HEAD~1 | tar -x -C DIR``) alternates every process with the same command on DIR's package, in
the same virtualenv, so that both meet the same load, and prints the medians of both and of the pairs' ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUESTION = "Who was the first president of the association which published Journal of Psychotherapy Integration?"


def tree_mb(path: Path) -> float:
    return sum((Path(root) / name).lstat().st_size for root, _, files in os.walk(path) for name in files) / 2**20


def timed(cmd: list[str], package: str | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one process; ``package``: the directory put first on its path."""
    env = {**os.environ, "PYTHONPATH": package} if package else None
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[:4])} ... failed:\n{done.stderr[-2000:]}")
    return elapsed, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


def summary(samples: list[tuple[float, float]]) -> dict[str, float | list[float]]:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return {"median_s": statistics.median(walls), "first_s": walls[0], "samples_s": walls,
            "cpu_median_s": statistics.median(cpus), "cpu_samples_s": cpus}


def measure(cmd: list[str], runs: int, against: str | None) -> dict[str, object]:
    if against is None:
        return summary([timed(cmd) for _ in range(runs)])
    ours, theirs = [], []
    for _ in range(runs):
        ours.append(timed(cmd, str(Path(__file__).resolve().parents[1])))
        theirs.append(timed(cmd, against))
    fig = summary(ours)
    fig["against"] = summary(theirs)
    fig["wall_ratio_median"] = statistics.median(a[0] / b[0] for a, b in zip(ours, theirs))
    fig["cpu_ratio_median"] = statistics.median(a[1] / b[1] for a, b in zip(ours, theirs))
    return fig


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])  # no library import: cold caches stay cold
    p.add_argument("--namespace", required=True, help="an indexed namespace to query")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--modes", default="entity-ppr,dense,hipporag2,hipporag1")  # entity-ppr: the default mode
    p.add_argument("--against", help="a checkout of another commit: alternate every process with its package")
    p.add_argument("--json", dest="json_out", default="bench/out/startup.json")
    args = p.parse_args()
    hippo = str(Path(sys.executable).with_name("hippo"))
    against = str(Path(args.against).resolve()) if args.against else None
    result = {"venv": sys.prefix, "venv_mb": tree_mb(Path(sys.prefix)), "against": against,
              "import": measure([sys.executable, "-c", "import hippo_neo4j"], args.runs, against), "query": {}}
    for mode in args.modes.split(","):
        cmd = [hippo, "query", QUESTION, "--mode", mode, "--namespace", args.namespace, "--json"]
        result["query"][mode] = measure(cmd, args.runs, against)
    out = Path(args.json_out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")  # not common.write_json: no library import
    print(f"virtualenv {result['venv']}: {result['venv_mb']:,.0f} MB")
    for what, fig in [("import hippo_neo4j", result["import"]),
                      *((f"hippo query --mode {mode}", fig) for mode, fig in result["query"].items())]:
        print(f"{what}: median {fig['median_s']:.2f} s (first {fig['first_s']:.2f} s), CPU {fig['cpu_median_s']:.2f} s")
        if against:
            print(f"  against {against}: median {fig['against']['median_s']:.2f} s, CPU "
                  f"{fig['against']['cpu_median_s']:.2f} s; ratio of the pairs: wall {fig['wall_ratio_median']:.2f}, "
                  f"CPU {fig['cpu_ratio_median']:.2f}")
        runs = zip(fig["samples_s"], fig["cpu_samples_s"])
        print("  runs (wall / CPU s): " + " ".join(f"{w:.2f}/{c:.2f}" for w, c in runs))
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
