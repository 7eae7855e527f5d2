"""The recall harness: metrics, dataset loading, index reuse, the reference check against an in-process
numpy/scipy implementation, and ``hippo eval`` on the sample dataset (real server)."""

from __future__ import annotations

import json
import uuid

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j import HippoConfig
from hippo_neo4j import evaluation as ev
from hippo_neo4j.retrieve import EVAL_DEFAULT
from hippo_neo4j.evaluation.reference import InProcess
from hippo_neo4j.cli import cli
from hippo_neo4j.cli.evaluation import eval_cmd
from hippo_neo4j.errors import HippoError
from hippo_neo4j.extract.offline import OfflineExtractor
from hippo_neo4j.models import PassageIn, content_hash
from hippo_neo4j.text import normalize_phrase

from .conftest import DATASETS

MUSIQUE = DATASETS / "musique_train"
SAMPLE = DATASETS / "sample"


@pytest.fixture(scope="module")
def musique() -> ev.Dataset:
    return ev.load_dataset(MUSIQUE)


# ---------------------------------------------------------------------------------------------- metrics


def test_recall_and_all_recall_on_hand_made_rankings():
    ranking = ["a", "x", "b", "y", "z", "c"]
    gold = ["a", "b", "c"]
    assert ev.recall_at(ranking, gold, 1) == pytest.approx(1 / 3)
    assert ev.recall_at(ranking, gold, 2) == pytest.approx(1 / 3)
    assert ev.recall_at(ranking, gold, 5) == pytest.approx(2 / 3)
    assert ev.recall_at(ranking, gold, 10) == pytest.approx(1.0)
    assert ev.all_recall_at(ranking, gold, 5) == 0.0
    assert ev.all_recall_at(ranking, gold, 6) == 1.0
    # duplicates in the gold list count once; no gold passages scores 0, never a division by zero
    assert ev.recall_at(["a"], ["a", "a"], 1) == 1.0
    assert ev.recall_at(["a"], [], 1) == 0.0 and ev.all_recall_at(["a"], [], 1) == 0.0
    assert ev.recall_at([], ["a"], 5) == 0.0


def test_summarize_averages_over_questions():
    rankings = [["g1", "g2", "n"], ["n", "n2", "h1", "x", "y", "z", "h2"], []]
    golds = [["g1", "g2"], ["h1", "h2"], ["k"]]
    summary = ev.summarize(rankings, golds)
    assert list(summary) == ["recall@1", "recall@2", "recall@5", "recall@10", "all_recall@2", "all_recall@5"]
    assert summary["recall@1"] == pytest.approx((0.5 + 0 + 0) / 3)
    assert summary["recall@2"] == pytest.approx((1 + 0 + 0) / 3)
    assert summary["recall@5"] == pytest.approx((1 + 0.5 + 0) / 3)
    assert summary["recall@10"] == pytest.approx((1 + 1 + 0) / 3)
    assert summary["all_recall@2"] == pytest.approx(1 / 3)
    assert summary["all_recall@5"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError):
        ev.summarize([["a"]], [])
    table = ev.summary_table({"dense": summary})
    assert table.splitlines()[0].startswith("| mode | R@1 | R@2 | R@5 | R@10 | AR@2 | AR@5")
    assert "| dense | 16.7 | 33.3 | 50.0 | 66.7 | 33.3 | 33.3 |" in table


# ------------------------------------------------------------------------------------------------ data


def test_load_musique_gold_ids_match_the_indexer_ids(musique):
    assert len(musique.questions) == 100 and len(musique.passages) == 1890
    assert musique.openie is not None and musique.openie.name.startswith("openie_")
    assert all(p.extraction is not None for p in musique.passages)
    assert not musique.unmatched_gold
    ids = {p.passage_id for p in musique.passages}
    raw = json.loads((MUSIQUE / "questions.json").read_text())
    for q, item in zip(musique.questions, raw):
        supporting = [p for p in item["paragraphs"] if p["is_supporting"]]
        assert len(q.gold) == len(supporting) >= 2
        assert set(q.gold) <= ids
        # the id the indexer gives a passage without an id: sha256(title + "\n" + text)[:16]
        expected = {PassageIn(title=p["title"], text=p["paragraph_text"]).passage_id for p in supporting}
        assert set(q.gold) == expected
        assert all(g == content_hash(p["title"], p["paragraph_text"])[:16] for g, p in zip(q.gold, supporting))


def test_load_sample_format(tmp_path):
    sample = ev.load_dataset(SAMPLE)
    assert sample.openie is None and len(sample.questions) == 1 and len(sample.passages) == 3
    sudhof = next(p for p in sample.passages if p.title == "Thomas C. Sudhof")
    assert sample.questions[0].gold == (sudhof.passage_id,)
    # a gold paragraph that is not in the corpus is reported, not silently dropped
    questions = json.loads((SAMPLE / "questions.json").read_text())
    questions[0]["paragraphs"][0]["text"] += " (edited)"
    (tmp_path / "questions.json").write_text(json.dumps(questions))
    (tmp_path / "corpus.json").write_text((SAMPLE / "corpus.json").read_text())
    edited = ev.load_dataset(tmp_path)
    assert edited.questions[0].gold == () and edited.unmatched_gold == [(questions[0]["id"], "Thomas C. Sudhof")]
    assert ev.default_namespace(edited) == f"eval-{tmp_path.name}"
    assert ev.default_namespace("musique_train", 0.85) == "eval-musique_train-tau0.85"


# ---------------------------------------------------------------------------------------- index reuse


def _subset(dataset: ev.Dataset, questions: int) -> ev.Dataset:
    """The first questions and only their paragraphs (gold and distractors) as the corpus."""
    raw = json.loads((dataset.root / "questions.json").read_text())[:questions]
    wanted = {content_hash(p["title"], p["paragraph_text"]) for q in raw for p in q["paragraphs"]}
    passages = [p for p in dataset.passages if p.hash in wanted]
    return ev.Dataset(dataset.name, dataset.root, passages, dataset.questions[:questions], dataset.openie)


def test_ensure_index_reuses_the_same_corpus_and_refuses_another(memory_factory, musique, monkeypatch):
    small = _subset(musique, 2)
    memory = memory_factory(extractor=None)
    first = ev.ensure_index(memory, small)
    assert not first.reused and first.report["indexed"] == len(small.passages)

    def no_indexing(*args, **kwargs):
        raise AssertionError("index() must not be called for an index of the same corpus")

    monkeypatch.setattr(memory, "index", no_indexing)
    again = ev.ensure_index(memory, small)
    assert again.reused and again.fingerprint == first.fingerprint and again.report["indexed"] == len(small.passages)
    monkeypatch.undo()

    # another corpus (one passage fewer) in the same namespace: an error unless asked to rebuild
    other = ev.Dataset(small.name, small.root, small.passages[:-1], small.questions, small.openie)
    with pytest.raises(HippoError, match="--reindex"):
        ev.ensure_index(memory, other)
    rebuilt = ev.ensure_index(memory, other, reindex=True)
    assert not rebuilt.reused and memory.stats()["passages"] == len(other.passages)
    # any write after the recorded index (here: a deletion) means the namespace is no longer that index
    memory.delete([other.passages[0].passage_id])
    resumed = ev.ensure_index(memory, other)
    assert not resumed.reused and resumed.report["indexed"] == 1 and memory.stats()["passages"] == len(other.passages)


# ------------------------------------------------------------------------------------- reference check


def test_gds_path_and_inprocess_reference_give_the_same_ranking_on_musique_questions(memory_factory, musique):
    """Index the gold and distractor paragraphs of 10 questions (GPT-3.5 OpenIE), query with the offline
    extractor's entities, and compare linking, seeds, scores and ranking with numpy/scipy."""
    small = _subset(musique, 10)
    memory = memory_factory(extractor=None, config=HippoConfig(ppr_tolerance=1e-9))  # converge like the reference
    ev.ensure_index(memory, small)
    local = InProcess.load(memory)
    assert len(local.ref.passages) == len(small.passages) == memory.stats()["passages"]
    extractor = OfflineExtractor()
    compared = links = exact_links = 0
    for q in small.questions:
        entities = extractor.query_entities(q.question)
        result = memory.query(q.question, mode="hipporag1", entities=entities, top_k=10)
        if result.fell_back:
            continue
        # linking: the reported cosine is the phrase's cosine (the vector index is int8-quantized: within 0.03), and
        # the phrase is the exact top-1 in-process (the approximate, shared index may miss it: counted)
        for link in result.linked:
            vec = memory.encoder.encode([normalize_phrase(link.entity)])[0]
            sims = np.nan_to_num(local.phrase_vectors) @ vec
            assert sims[local.ref.phrase_index[link.phrase]] == pytest.approx(link.similarity, abs=0.03)
            (exact,) = local.link([link.entity])
            links += 1
            exact_links += exact == link.phrase or sims[local.ref.phrase_index[exact]] - link.similarity < 0.03
        seeds = local.ref.seed_weights([link.phrase for link in result.linked])
        assert seeds == pytest.approx(dict(result.seeds), abs=1e-12)
        expected = local.ref.retrieve(seeds, damping=memory.config.damping, top_k=10, min_mass=memory.config.ppr_min_mass)
        got = [(p.id, p.score) for p in result.passages]
        assert len(got) == len(expected)
        # GDS stops iterating at tolerance 1e-9, so a phrase whose mass sits at the ppr_min_mass cut (1e-7) can
        # fall on either side of it: a passage score may differ by 1e-7 per such mention, hence atol 1e-6
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5, atol=1e-6)
        for (gid, gs), (eid, es) in zip(got, expected):  # same order up to exact ties
            assert gid == eid or abs(gs - es) < 1e-9
        compared += 1
    assert compared >= 8
    assert exact_links >= 0.95 * links, f"{links - exact_links} of {links} links are not the exact nearest phrase"


# ----------------------------------------------------------------------------------------------- CLI


def test_hippo_eval_on_the_sample_dataset_writes_the_issue_json(tmp_path, connection):
    if "eval" not in cli.commands:
        cli.add_command(eval_cmd)
    ns = f"eval-t-{uuid.uuid4().hex[:8]}"
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value()}
    out_file = tmp_path / "eval.json"
    runner = CliRunner()
    try:
        out = runner.invoke(
            cli, ["eval", str(SAMPLE), "--namespace", ns, "--json", str(out_file)], env=env, catch_exceptions=False
        )
        assert out.exit_code == 0, out.output
        assert "| mode | R@1 | R@2 | R@5 | R@10 | AR@2 | AR@5" in out.stdout
        data = json.loads(out_file.read_text())
        metrics = {"recall@1", "recall@2", "recall@5", "recall@10", "all_recall@2", "all_recall@5"}
        assert set(data["summary"]) == set(EVAL_DEFAULT)
        assert {"hipporag2", "hipporag1", "hybrid-0.3", "hybrid-0.5", "hybrid-0.7", "dense", "bm25",
                "hipporag2-no-passage-nodes", "hipporag2-entity-linking"} == set(EVAL_DEFAULT)
        assert all(set(v) == metrics for v in data["summary"].values())
        (question,) = data["questions"]
        gold = ev.load_dataset(SAMPLE).questions[0].gold
        assert question["id"] == "sample/question_1.json" and question["gold"] == list(gold)
        for mode in EVAL_DEFAULT:
            entry = question[mode]
            assert {"entities", "seeds", "retrieved"} <= set(entry)
            ids = [pid for pid, _ in entry["retrieved"]]
            assert entry["retrieved"] and all(isinstance(s, float) for _, s in entry["retrieved"])
            # the summary is the metric of this one question's ranking
            assert data["summary"][mode]["recall@5"] == ev.recall_at(ids, gold, 5)
        assert question["hipporag1"]["entities"]  # from the offline extractor
        assert question["dense"]["entities"] == [] and question["dense"]["seeds"] == []
        # hipporag2 records its facts (triple, cosine, kept) and seeds; no LLM here, so the filter is off
        assert data["config"]["recognition_filter"] == "off"
        h2 = question["hipporag2"]
        assert len(h2["facts"]) == 5 and all(f[4] is True for f in h2["facts"])
        assert h2["seeds"] and len(h2["seeds"]) <= 5 and h2["passage_seeds"]
        assert question["hipporag2-entity-linking"]["entities"] == question["hipporag1"]["entities"]
        assert data["config"]["namespace"] == ns and not data["config"]["index_reused"]
        again = runner.invoke(cli, ["eval", str(SAMPLE), "--namespace", ns, "--mode", "bm25"], env=env, catch_exceptions=False)
        assert again.exit_code == 0 and "reusing it" in again.stderr and "| bm25 |" in again.stdout
        assert "| dense |" not in again.stdout
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)
