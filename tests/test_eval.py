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
from .conftest import question_subset as _subset

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


def test_gds_path_and_inprocess_reference_give_the_same_ranking_on_musique_questions(on_musique10, musique10):
    """The gold and distractor paragraphs of 10 questions (GPT-3.5 OpenIE), queried with the offline
    extractor's entities: linking, seeds, scores and ranking compared with numpy/scipy."""
    small, _ = musique10
    memory = on_musique10(extractor=None, config=HippoConfig(ppr_tolerance=1e-9))  # converge like the reference
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
        got = [(p.id, p.score) for p in result.passages if not p.filled]  # the rest tops up from dense
        assert len(got) == len(expected) and len(result.passages) == 10
        # GDS stops iterating at tolerance 1e-9, so a phrase whose mass sits at the ppr_min_mass cut (1e-7) can
        # fall on either side of it: a passage score may differ by 1e-7 per such mention, hence atol 1e-6
        np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], rtol=1e-5, atol=1e-6)
        for (gid, gs), (eid, es) in zip(got, expected):  # same order up to exact ties
            assert gid == eid or abs(gs - es) < 1e-9
        compared += 1
    assert compared >= 8
    assert exact_links >= 0.95 * links, f"{links - exact_links} of {links} links are not the exact nearest phrase"


# ----------------------------------------------------------------------------------------------- CLI


def _gold_phrases(connection, ns, gold):
    from hippo_neo4j.db import connect

    with connect(connection) as driver:
        return driver.execute_query(
            "MATCH (ph:Phrase)-[:MENTIONED_IN]->(p:Passage {ns: $ns}) WHERE p.id IN $ids RETURN DISTINCT ph.text",
            ns=ns, ids=list(gold)).records


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
        assert {"entity-ppr", "hipporag2", "hipporag1", "hybrid-0.3", "hybrid-0.5", "hybrid-0.7", "dense", "bm25",
                "hipporag2-no-passage-nodes", "hipporag2-entity-linking", "hipporag2-top5", "entity-ppr-first-hop", "entity-ppr-walk",
                "entity-ppr-relevance"} == set(EVAL_DEFAULT)
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
        # the seeds are compared with the gold passages' phrases in the graph as indexed (offline extraction here)
        analysis = data["diagnostics"]["hipporag1"]["analysis"]
        seeded = {phrase for phrase, _ in question["hipporag1"]["seeds"]}
        named = {r[0] for r in _gold_phrases(connection, ns, gold)}
        assert analysis["seeds_in_gold_passages"] == pytest.approx(len(seeded & named) / len(seeded))
        assert analysis["seeds_in_gold_passages"] > 0
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
        # each stage shows its progress: the index, then the questions the modes are evaluated on
        assert f"evaluating {len(EVAL_DEFAULT)} modes" in out.stdout and "1/1" in out.stdout
        assert "evaluating 1 mode " in again.stdout
        # the same questions in lower case, on the same index: the modes read them alike
        lower_file = tmp_path / "lower.json"
        lower = runner.invoke(cli, ["eval", str(SAMPLE), "--namespace", ns, "--variant", "lower", "--mode", "entity-ppr",
                                    "--mode", "hipporag1", "--json", str(lower_file)], env=env, catch_exceptions=False)
        assert lower.exit_code == 0 and "reusing it" in lower.stderr and "(lower)" in lower.stdout
        lowered = json.loads(lower_file.read_text())
        assert lowered["config"]["variant"] == "lower" and data["config"]["variant"] == "as-written"
        (asked,) = lowered["questions"]
        assert asked["question"] == question["question"].lower() != question["question"]
        for mode in ("entity-ppr", "hipporag1"):
            assert [pid for pid, _ in asked[mode]["retrieved"]] == [pid for pid, _ in question[mode]["retrieved"]]
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)


# ------------------------------------------------------------------- QA scores and iterative retrieval

from hippo_neo4j.llm.settings import LLMSettings  # noqa: E402
from hippo_neo4j.models import Extraction  # noqa: E402
from hippo_neo4j.reader import READER_SYSTEM, STEP_SYSTEM, Reader, parse_step, qa_scores  # noqa: E402
from hippo_neo4j.iterative import IterativeRetrieval, explain  # noqa: E402

from .fake_openai import FakeOpenAI, llm_env  # noqa: E402,F401 - the fixture

QA_PASSAGES = [
    PassageIn(title="Marie Curie", text="Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903.",
              extraction=Extraction(named_entities=["Marie Curie", "Warsaw"], triples=[["Marie Curie", "born in", "Warsaw"]])),
    PassageIn(title="Warsaw", text="Warsaw is the capital of Poland and lies on the Vistula river.",
              extraction=Extraction(named_entities=["Warsaw", "Poland", "Vistula"], triples=[["Warsaw", "capital of", "Poland"]])),
    PassageIn(title="Danube", text="The Danube flows through Vienna and Budapest before it reaches the Black Sea.",
              extraction=Extraction(named_entities=["Danube", "Vienna"], triples=[["Danube", "flows through", "Vienna"]])),
    PassageIn(title="Kyoto", text="Kyoto was the capital of Japan for more than a thousand years.",
              extraction=Extraction(named_entities=["Kyoto", "Japan"], triples=[["Kyoto", "capital of", "Japan"]])),
]
QA_QUESTION = "Which river flows through the city where Marie Curie was born?"


def _fake_reader(fake: FakeOpenAI, **overrides) -> Reader:
    values = dict(base_url=fake.base_url, model="fake-model", negotiation_file="off", max_attempts=2,
                  backoff_initial=0.01, backoff_max=0.05, timeout=60.0)
    values.update(overrides)
    return Reader(LLMSettings.from_env(**values))


def _usage(fake: FakeOpenAI, request: dict, content: str) -> tuple[int, int]:
    """The token counts the fake reports for one exchange (tests/fake_openai.py)."""
    return sum(len(str(m.get("content", ""))) for m in request["messages"]) // 4, len(content) // 4


@pytest.fixture
def qa_memory(memory_factory):
    memory = memory_factory()
    memory.index(QA_PASSAGES)
    return memory


def test_gold_answers_come_from_answer_and_aliases(tmp_path, musique):
    assert musique.questions[0].answers == ("G. Stanley Hall", "Stanley Hall")
    assert ev.load_dataset(SAMPLE).questions[0].answers == ("Thomas C. Sudhof",)  # a list, as in the sample
    (tmp_path / "corpus.json").write_text(json.dumps([{"title": "A", "text": "a"}]))
    (tmp_path / "questions.json").write_text(json.dumps([
        {"question": "q1", "answer": " Warsaw ", "answer_aliases": ["Warszawa", "Warsaw", "", 3]},
        {"question": "q2"},
    ]))
    q1, q2 = ev.load_dataset(tmp_path).questions
    assert q1.answers == ("Warsaw", "Warszawa") and q2.answers == ()


def test_parse_step_keeps_one_sentence_or_the_answer():
    assert parse_step("Curie was born in Warsaw. She won a prize.") == ("Curie was born in Warsaw.", None)
    assert parse_step("Curie was born in Warsaw. So the answer is: the Vistula.\nextra") == (
        "So the answer is: the Vistula.", "the Vistula")
    assert parse_step("so the answer is Vistula")[1] == "Vistula"
    assert parse_step("Warsaw is on the Vistula.\nAnswer: Vistula") == ("Warsaw is on the Vistula. Answer: Vistula", "Vistula")
    assert parse_step("<think>hmm</think>\n") == ("", None)
    assert parse_step("So the answer is:") == ("So the answer is:", None)  # no answer after the marker
    assert qa_scores(None, ["x"]) == {"em": 0.0, "f1": 0.0}
    assert qa_scores("The Vistula river", ["Vistula"]) == {"em": 0.0, "f1": pytest.approx(2 / 3)}


def test_iterative_stops_when_the_model_answers_at_step_1(llm_env, qa_memory):
    with FakeOpenAI(lambda r: "Curie was born in Warsaw, on the Vistula. So the answer is: Vistula.") as fake:
        loop = IterativeRetrieval(qa_memory, mode="dense", steps=3, reader=_fake_reader(fake))
        result = loop.run(QA_QUESTION, top_k=2)
        [request] = fake.requests
    assert result.stopped == "answer" and result.answer == "Vistula" and result.error is None
    assert result.llm_calls == 1 and len(result.steps) == 2
    first, second = result.steps
    assert first.query == QA_QUESTION and len(first.retrieved) == 2 and first.added == first.retrieved
    assert second.sentence.endswith("So the answer is: Vistula.") and second.query is None and second.retrieved == []
    assert [p.id for p in result.passages] == first.retrieved
    # the step saw the question and the passages of step 0, and its tokens are counted
    assert request["messages"][0]["content"] == STEP_SYSTEM
    assert QA_QUESTION in request["messages"][1]["content"] and "(none yet)" in request["messages"][1]["content"]
    assert (result.prompt_tokens, result.completion_tokens) == _usage(fake, request, second.raw)
    assert "stopped: answer" in explain(result)


def test_iterative_stops_after_n_steps_when_the_model_never_answers(llm_env, qa_memory):
    sentences = iter(["Marie Curie was born in Warsaw.", "Warsaw lies on the Vistula river.",
                      "The Danube flows through Vienna.", "Kyoto was the capital of Japan."])
    with FakeOpenAI(lambda r: next(sentences) + " And more text that is not kept.") as fake:
        reader = _fake_reader(fake)
        result = IterativeRetrieval(qa_memory, mode="dense", steps=3, reader=reader).run(QA_QUESTION, top_k=1)
        requests = list(fake.requests)
    assert result.stopped == "max_steps" and result.answer is None
    assert result.llm_calls == len(requests) == 3 == reader.chat.stats.calls
    assert len(result.steps) == 4 and [s.step for s in result.steps] == [0, 1, 2, 3]
    written = ["Marie Curie was born in Warsaw.", "Warsaw lies on the Vistula river.", "The Danube flows through Vienna."]
    assert [s.sentence for s in result.steps[1:]] == written
    # every sentence became the next query; each later prompt carries the sentences before it
    assert [s.query for s in result.steps] == [QA_QUESTION, *written]
    for n, request in enumerate(requests):
        user = request["messages"][1]["content"]
        assert all(f"{i + 1}. {s}" in user for i, s in enumerate(written[:n]))
        assert written[n] not in user
    # the pool: each passage once, the union of what the steps added, best score kept
    added = [pid for s in result.steps for pid in s.added]
    assert len(added) == len(set(added)) and result.passages[0].id in added
    best = {}
    for s in result.steps:
        for p in s.retrieval.passages:
            best[p.id] = max(best.get(p.id, -1.0), p.score)
    assert result.passages[0].score == max(best.values())
    assert result.prompt_tokens == sum(s.prompt_tokens for s in result.steps) == reader.chat.stats.prompt_tokens
    assert result.completion_tokens == reader.chat.stats.completion_tokens > 0
    # steps=0 is plain retrieval, without the LLM
    plain = IterativeRetrieval(qa_memory, mode="dense", steps=0, reader=reader).run(QA_QUESTION, top_k=2)
    assert plain.stopped == "no_llm_steps" and plain.llm_calls == 0 and len(plain.steps) == 1
    with pytest.raises(HippoError, match="steps must be"):
        IterativeRetrieval(qa_memory, mode="dense", steps=11, reader=reader)
    with pytest.raises(HippoError, match="Unknown mode"):
        IterativeRetrieval(qa_memory, mode="nope", reader=reader)


def test_iterative_returns_a_flagged_partial_result_when_the_endpoint_dies(llm_env, qa_memory):
    with FakeOpenAI(lambda r: "Marie Curie was born in Warsaw.") as fake:
        fake.die_after(1)
        reader = _fake_reader(fake)
        result = IterativeRetrieval(qa_memory, mode="dense", steps=3, reader=reader).run(QA_QUESTION, top_k=2)
    # it gave up after its two attempts at step 2 (one retry), instead of retrying on and on
    assert reader.chat.stats.retries == 1 and len(fake.requests) == 2
    assert result.stopped == "error" and result.partial and result.llm_calls == 1
    assert result.error.startswith("step 2: ") and fake.base_url.rsplit("/", 1)[0] in result.error
    assert len(result.steps) == 3 and result.steps[2].sentence is None and result.steps[2].query is None
    assert result.passages and result.steps[1].query == "Marie Curie was born in Warsaw."
    assert "partial result" in explain(result)


def _scripted(request: dict) -> str:
    """Reader prompts get fixed answers; step prompts answer at once; anything else is empty NER / OpenIE."""
    system = request["messages"][0]["content"]
    if system == READER_SYSTEM:
        return "Warsaw is on the Vistula.\nAnswer: the Vistula river"
    if system == STEP_SYSTEM:
        return "So the answer is: Vistula."
    return json.dumps({"triples": []} if "triples" in system.lower() else {"named_entities": []})


def test_evaluate_scores_the_readers_answers_and_the_iterative_variant(llm_env, qa_memory):
    dataset = ev.Dataset("qa", SAMPLE, QA_PASSAGES, [
        ev.Question("q1", QA_QUESTION, (QA_PASSAGES[0].passage_id, QA_PASSAGES[1].passage_id), ("Vistula", "Wisła")),
        ev.Question("q2", "Where does the Danube end?", (QA_PASSAGES[2].passage_id,), ("the Vistula river",)),
    ])
    with FakeOpenAI(_scripted) as fake:
        reader = _fake_reader(fake)
        result = ev.evaluate(qa_memory, dataset, modes=["dense", "bm25"], reader=reader, reader_top_k=2, iterative_steps=2)
        calls = len(fake.requests)
    variants = ["dense", "bm25", "dense+ircot", "bm25+ircot"]
    assert list(result["summary"]) == variants and list(result["qa"]) == variants
    # per question: "the Vistula river" vs "Vistula" is F1 2/3 (EM 0); vs "the Vistula river" EM 1
    for variant in variants:
        q1, q2 = (q[variant]["qa"] for q in result["questions"])
        assert q1["answer"] == q2["answer"] == "the Vistula river"
        assert (q1["em"], q1["f1"]) == (0.0, pytest.approx(2 / 3)) and (q2["em"], q2["f1"]) == (1.0, 1.0)
        assert result["summary"][variant]["em"] == 0.5 and result["summary"][variant]["f1"] == pytest.approx(5 / 6)
        qa = result["qa"][variant]
        assert qa["reader_calls"] == 2 and qa["parsed"] == 2 and qa["failed"] == 0 and qa["reader_prompt_tokens"] > 0
    for q in result["questions"]:
        assert q["answers"] and q["dense+ircot"]["stopped"] == "answer" and q["dense+ircot"]["chain_answer"] == "Vistula"
        assert [s["step"] for s in q["bm25+ircot"]["steps"]] == [0, 1] and q["bm25+ircot"]["llm_calls"] == 1
    d = result["diagnostics"]["dense+ircot"]
    assert d["llm_calls"] == 2 and d["stopped"] == {"answer": 2} and d["errors"] == 0 and d["steps"] == 2
    # 4 variants x 2 questions reader calls + 2 modes x 2 questions step calls
    assert calls == reader.chat.stats.calls == 8 + 4
    table = ev.summary_table(result["summary"], result["diagnostics"])
    assert "| EM | F1 |" in table and "| dense+ircot |" in table
    with pytest.raises(HippoError, match="needs a reader"):
        ev.evaluate(qa_memory, dataset, modes=["dense"], iterative_steps=2)


def test_hippo_eval_reader_and_iterative_on_the_sample_dataset(llm_env, tmp_path, connection):
    ns = f"eval-t-{uuid.uuid4().hex[:8]}"
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value()}
    runner = CliRunner()
    no_llm = runner.invoke(cli, ["eval", str(SAMPLE), "--reader", "--namespace", ns], env=env)
    assert no_llm.exit_code == 1 and "--reader needs an LLM endpoint: set OPENAI_BASE_URL" in no_llm.output
    assert len(no_llm.output.strip().splitlines()) == 1
    no_llm = runner.invoke(cli, ["ask", "Who?", "--iterative"], env=env)
    assert no_llm.exit_code == 1 and "OPENAI_BASE_URL" in no_llm.output and len(no_llm.output.strip().splitlines()) == 1
    out_file = tmp_path / "eval.json"
    try:
        with FakeOpenAI(_scripted) as fake:
            env.update(OPENAI_BASE_URL=fake.base_url, HIPPO_LLM_MODEL="fake-model")
            out = runner.invoke(cli, ["eval", str(SAMPLE), "--namespace", ns, "--mode", "dense", "--reader",
                                      "--reader-top-k", "2", "--iterative", "--steps", "1", "--json", str(out_file)],
                                env=env, catch_exceptions=False)
        assert out.exit_code == 0, out.output
        assert "| mode | R@1 | R@2 | R@5 | R@10 | AR@2 | AR@5 | EM | F1 |" in out.stdout
        assert "| dense+ircot |" in out.stdout and "reader calls" in out.stdout
        data = json.loads(out_file.read_text())
        (question,) = data["questions"]
        assert question["answers"] == ["Thomas C. Sudhof"]
        for variant in ("dense", "dense+ircot"):
            assert question[variant]["qa"]["answer"] == "the Vistula river" and question[variant]["qa"]["em"] == 0.0
            assert data["summary"][variant]["em"] == 0.0 and data["qa"][variant]["reader_calls"] == 1
        assert question["dense+ircot"]["steps"][1]["answer"] == "Vistula"
        assert data["config"]["reader_top_k"] == 2 and data["config"]["iterative_steps"] == 1
        assert "fake-model" in data["config"]["reader"]
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)


def test_parse_step_and_parse_answer_accept_the_answer_is():
    # what SmolLM2 writes instead of the asked-for forms
    assert parse_step("The answer is: The answer is: Vistula.")[1] == "Vistula"
    assert parse_step("I think the answer is clear. Warsaw is a city.") == ("I think the answer is clear.", None)
    from hippo_neo4j.reader import parse_answer

    assert parse_answer("Warsaw.\nThe answer is: Warsaw").answer == "Warsaw" and parse_answer("The final answer is: X").parsed
