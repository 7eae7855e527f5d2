"""Run a command while a CPU hog of our own keeps every core busy (``make test-under-load``).

    python tests/cpu_hog.py [--max-seconds 5400] [--per-core 1] -- COMMAND ...

One busy-loop process per core (``--per-core`` of them per core) spins until the command ends, and stops by
itself after ``--max-seconds`` or when this process is gone, whichever comes first: a hog can never outlive
the run it loads. The exit status is the command's.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import time


def spin(deadline: float, parent: int) -> None:
    """Busy arithmetic until ``deadline`` (monotonic) or until ``parent`` is no longer this process's parent."""
    x = 0
    while time.monotonic() < deadline and os.getppid() == parent:
        for i in range(200_000):
            x = (x * 31 + i) % 1_000_003


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-seconds", type=float, default=5400, help="the hog stops itself after this long")
    parser.add_argument("--per-core", type=int, default=1, help="busy processes per core")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run under load (after --)")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command given")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    deadline = time.monotonic() + args.max_seconds
    hogs = [multiprocessing.Process(target=spin, args=(deadline, os.getpid()), daemon=True)
            for _ in range(cores * args.per_core)]
    for hog in hogs:
        hog.start()
    print(f"cpu hog: {len(hogs)} busy processes on {cores} cores, for at most {args.max_seconds:.0f} s", flush=True)
    began = time.monotonic()
    try:
        return subprocess.call(command)
    finally:
        for hog in hogs:
            hog.terminate()
        for hog in hogs:
            hog.join(10)
        print(f"cpu hog: stopped after {time.monotonic() - began:.0f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
