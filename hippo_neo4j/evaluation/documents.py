"""A dataset's passages as documents people keep: Markdown files of ``##`` sections (:func:`write_markdown`), and
recall on the passages indexing them gives back, which are cut by the documents' structure and so carry other
ids than the dataset's: a gold passage is found when a retrieved passage holds most of its text (:func:`holds`)."""

from __future__ import annotations

from difflib import SequenceMatcher
from pathlib import Path
from typing import Sequence

from ..models import PassageIn

HELD_SHARE = 0.8  # a retrieved passage holding this share of a gold passage's text finds it


def write_markdown(passages: Sequence[PassageIn], folder: Path, per_document: int, *, stem: str = "part") -> list[Path]:
    """Write ``passages`` as Markdown files of ``per_document`` sections each (``# <stem> N``, then ``## <title>``
    and the passage's text per section), in order; the files written."""
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for number, start in enumerate(range(0, len(passages), per_document), 1):
        lines = [f"# {stem.capitalize()} {number}", ""]
        for passage in passages[start:start + per_document]:
            lines += [f"## {passage.title or 'Untitled'}", "", passage.text.strip(), ""]
        path = folder / f"{stem}-{number:03d}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        files.append(path)
    return files


def held_share(retrieved: str, gold: str) -> float:
    """The share of ``gold``'s characters that ``retrieved`` holds in the same order (matching blocks)."""
    gold, retrieved = " ".join(gold.split()), " ".join(retrieved.split())
    if not gold:
        return 0.0
    if gold in retrieved:
        return 1.0
    matcher = SequenceMatcher(None, gold, retrieved, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(gold)


def holds(retrieved: str, gold: str, share: float = HELD_SHARE) -> bool:
    """Whether a retrieved passage's text holds at least ``share`` of a gold passage's text."""
    return held_share(retrieved, gold) >= share


def recall_by_text(ranked: Sequence[Sequence[str]], gold: Sequence[Sequence[str]], cutoffs: Sequence[int] = (1, 2, 5, 10)
                   ) -> dict[str, float]:
    """R@k (percent) over questions, each with its retrieved texts in rank order and its gold passages' texts: the
    share of a question's gold passages that a retrieved passage among the top k holds (:func:`holds`)."""
    out: dict[str, float] = {}
    for k in cutoffs:
        shares = []
        for texts, golds in zip(ranked, gold):
            if golds:
                shares.append(sum(any(holds(t, g) for t in texts[:k]) for g in golds) / len(golds))
        out[f"R@{k}"] = round(100 * sum(shares) / max(len(shares), 1), 1)
    return out
