"""Progress bars on long work (indexing, reading a folder, re-embedding, evaluating): rich's, with the count done
and an estimate of the time left; nothing when disabled (``--json`` output) or when there is nothing to do."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator


@contextmanager
def progress_bar(enabled: bool, total: int, label: str) -> Iterator[Callable[[int], None]]:
    """A bar of ``total`` steps labelled ``label``; yields ``advance(n)``."""
    if not enabled or total == 0:
        yield lambda n: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), transient=False
    ) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)
