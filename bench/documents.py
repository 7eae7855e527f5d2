"""Retrieval and indexing on documents against the same text as passages: a dataset's corpus written as Markdown
documents of --sections ``##`` sections each (musique_train's 1,890 passages: 95 documents of 20), indexed with
the default splitter (`HippoRAG.index_documents`), beside the same passages as a JSON corpus in a namespace of
their own; both with the offline extractor and no extraction cache, so both do the same work.

Prints each mode's recall on both, counting a gold passage as found when a retrieved passage holds at least 80 %
of its text (hippo_neo4j/evaluation/documents.py), and the indexing time of the documents over the passages'
(the target: at most 1.15).

    python bench/documents.py [--dataset ../shared/datasets/musique_train] [--sections 20] [--variant lower]
        [--passages-namespace NS] [--timing N [--repeats 3]] [--no-recall] [--keep] [--json FILE]

Without --keep the recall namespaces are dropped at the end; with it a second run reuses them. The timing indexes
the first N passages as a JSON corpus and then as documents, --repeats times, each into a fresh namespace.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from common import default_datasets_dir, table, write_json

from hippo_neo4j import HippoRAG
from hippo_neo4j.documents import read_folder
from hippo_neo4j.evaluation import load_dataset
from hippo_neo4j.evaluation.documents import recall_by_text, write_markdown
from hippo_neo4j.extract import make_extractor

MODES = ("entity-ppr", "hipporag2", "hipporag1", "hybrid", "dense", "bm25")
CUTOFFS = (1, 2, 5, 10)


def timed_pair(passages: list, sections: int, extractor: object, name: str, documents_first: bool = False
               ) -> tuple[float, float]:
    """Seconds to index ``passages`` as a JSON corpus and as Markdown documents, each into a fresh namespace, the
    documents first when ``documents_first`` (pairs alternate the order, so what the first run leaves behind, a
    projection refresh or the server's clean-up of the namespace dropped, weighs on both sides alike)."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / name
        write_markdown(passages, folder, sections)
        for side in ("documents", "passages") if documents_first else ("passages", "documents"):
            with HippoRAG(namespace=f"bench-timing-{side}-{name}", extractor=extractor) as memory:
                memory.drop_namespace()
                start = time.perf_counter()
                if side == "passages":
                    memory.index(passages)
                else:
                    memory.index_documents(read_folder(folder)[0])
                out[side] = time.perf_counter() - start
                memory.drop_namespace()
    return out["passages"], out["documents"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_datasets_dir() / "musique_train")
    parser.add_argument("--sections", type=int, default=20, help="## sections per Markdown document")
    parser.add_argument("--variant", choices=("as-written", "lower"), default="as-written")
    parser.add_argument("--mode", action="append", help=f"modes (repeatable) [default: {', '.join(MODES)}]")
    parser.add_argument("--passages-namespace", help="a namespace holding the dataset's passages already (e.g. "
                        "hippo eval's eval-<dataset>-offline-<encoder>): recall on it instead of indexing them")
    parser.add_argument("--timing", type=int, default=0, metavar="N",
                        help="also time indexing the first N passages both ways, in fresh namespaces (0: no timing)")
    parser.add_argument("--repeats", type=int, default=3, help="timing pairs, the ratio's median")
    parser.add_argument("--no-recall", action="store_true", help="timing only")
    parser.add_argument("--keep", action="store_true", help="keep the recall namespaces (a later run reuses them)")
    parser.add_argument("--json", type=Path, help="write the figures to this file")
    args = parser.parse_args()
    modes = args.mode or list(MODES)
    dataset = load_dataset(args.dataset, use_openie=False).variant(args.variant)
    passages = dataset.passages
    gold_text = {p.passage_id: p.text for p in passages}
    name = dataset.name
    out: dict = {"dataset": name, "variant": args.variant, "passages": len(passages), "sections": args.sections}
    extractor = make_extractor("offline", cache=False)  # the same extraction work on both sides

    if args.timing:
        pairs = [timed_pair(passages[:args.timing], args.sections, extractor, name, documents_first=bool(i % 2))
                 for i in range(args.repeats)]
        ratios = sorted(d / p for p, d in pairs)
        out["timing"] = {"passages": args.timing, "pairs_s": pairs, "ratio_median": ratios[len(ratios) // 2]}
        print(f"indexing {args.timing} passages, JSON corpus vs Markdown documents (s): "
              + ", ".join(f"{p:.1f} vs {d:.1f}" for p, d in pairs) + f"; median ratio {out['timing']['ratio_median']:.3f}",
              flush=True)
    if not args.no_recall:
        out["recall"] = recall(args, dataset, modes, gold_text, extractor, out)
        header = ["mode"] + [f"passages R@{k}" for k in CUTOFFS] + [f"documents R@{k}" for k in CUTOFFS]
        rows = [[mode] + [out["recall"][mode]["passages"][f"R@{k}"] for k in CUTOFFS]
                + [out["recall"][mode]["documents"][f"R@{k}"] for k in CUTOFFS] for mode in modes]
        print("\n".join(table(header, rows)))
    if args.json:
        write_json(args.json, out)
    return 0


def recall(args: argparse.Namespace, dataset: object, modes: list[str], gold_text: dict[str, str], extractor: object,
           out: dict) -> dict:
    """Each mode's R@k on the passages and on the documents (:func:`recall_by_text`)."""
    name, passages, questions = dataset.name, dataset.passages, dataset.questions  # type: ignore[attr-defined]
    found: dict = {}
    with HippoRAG(namespace=args.passages_namespace or f"bench-passages-{name}", extractor=extractor) as flat, \
            HippoRAG(namespace=f"bench-documents-{name}", extractor=extractor) as docs:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / name
            out["documents"] = len(write_markdown(passages, folder, args.sections))
            if not flat.stats()["passages"]:
                flat.index(passages, progress=True)
            if not docs.stats()["passages"]:
                documents, unreadable = read_folder(folder)
                out["document_passages"] = docs.index_documents(documents, progress=True).passages
                assert not unreadable, unreadable
        for mode in modes:
            ranked: dict[str, list[list[str]]] = {"passages": [], "documents": []}
            for question in questions:
                for side, memory in (("passages", flat), ("documents", docs)):
                    result = memory.query(question.question, mode=mode, top_k=max(CUTOFFS))
                    ranked[side].append([p.text for p in result.passages])
            golds = [[gold_text[g] for g in q.gold if g in gold_text] for q in questions]
            found[mode] = {side: recall_by_text(ranked[side], golds, CUTOFFS) for side in ranked}
            print(mode, found[mode], flush=True)
        if not args.keep:
            if not args.passages_namespace:
                flat.drop_namespace()
            docs.drop_namespace()
    return found


if __name__ == "__main__":
    sys.exit(main())
