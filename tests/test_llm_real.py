"""The LLM layer against a real llama.cpp server (tests/llama_server.py), without Neo4j.

The default model (SmolLM2-135M) is weak: these tests check the plumbing on real, messy output (format
negotiation, token budgets, parsing, the cache, failures recorded with their raw answer), not what it
extracts. With ``HIPPO_TEST_GGUF`` naming a stronger model they also check content.
"""

from __future__ import annotations

import json
import re
import string
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import openai
import pytest

from hippo_neo4j.extract.cache import CachedExtractor, ExtractionCache
from hippo_neo4j.extract.llm import LLMExtractor
from hippo_neo4j.llm.negotiation import NegotiationStore
from hippo_neo4j.llm.parsing import ResponseParseError
from hippo_neo4j.llm.settings import LLMSettings
from hippo_neo4j.models import PassageIn
from hippo_neo4j.reader import Reader, RecognitionFilter

from .llama_server import LlamaServer, llama_server  # noqa: F401 - the session fixture

PASSAGES = [
    PassageIn(title="Marie Curie", text="Marie Curie was born in Warsaw in 1867. She won the Nobel Prize in Physics in 1903."),
    PassageIn(title="Danube", text="The Danube flows through Vienna and Budapest before it reaches the Black Sea."),
    PassageIn(title="Alan Turing", text="Alan Turing studied at King's College, Cambridge. He worked at Bletchley Park during the Second World War."),
    PassageIn(title="Kyoto", text="Kyoto was the capital of Japan for more than a thousand years. It is home to the temple Kinkaku-ji."),
]
QUESTION = "In which city was Marie Curie born?"
FACTS = [("Marie Curie", "born in", "Warsaw"), ("Danube", "flows through", "Vienna"),
         ("Alan Turing", "studied at", "King's College")]


class Recorder:
    """Every chat request the openai client sends, and the body of every answer."""

    def __init__(self) -> None:
        self.exchanges: list[tuple[dict[str, Any], int, str]] = []
        self._lock = threading.Lock()

    def client(self, settings: LLMSettings) -> openai.OpenAI:
        def on_response(response: Any) -> None:
            response.read()
            request = json.loads(response.request.content or b"{}")
            with self._lock:
                self.exchanges.append((request, response.status_code, response.text))

        http = openai.DefaultHttpxClient(timeout=settings.timeout, event_hooks={"response": [on_response]})
        assert settings.api_key is not None
        return openai.OpenAI(base_url=settings.url, api_key=settings.api_key.get_secret_value(),
                             timeout=settings.timeout, max_retries=0, http_client=http)

    @property
    def requests(self) -> list[dict[str, Any]]:
        return [request for request, _, _ in self.exchanges]

    def formats(self, start: int = 0) -> list[str | None]:
        out = []
        for request in self.requests[start:]:
            rf = request.get("response_format")
            out.append(None if rf is None else rf["type"] + ("+schema" if "schema" in rf else ""))
        return out


@pytest.fixture(scope="module")
def real(llama_server: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Shared by the module's tests in order: settings, the cache and negotiation files, what was seen."""
    root = tmp_path_factory.mktemp("llm-real")
    seen: dict[str, Any] = {"server": llama_server, "root": root, "outputs": {}}
    yield seen
    # what the model said, for a person to judge (pytest -s shows it; the file stays in the temp dir)
    (root / "outputs.json").write_text(json.dumps(seen["outputs"], indent=1, ensure_ascii=False))
    print(f"\n[llm-real] model {llama_server.gguf.name}; outputs in {root / 'outputs.json'}")


def settings_for(real: dict[str, Any], **overrides: Any) -> LLMSettings:
    server: LlamaServer = real["server"]
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "model": server.model,
        "concurrency": 1,  # one server thread: parallel requests would only queue
        "timeout": 120.0,
        "max_attempts": 2,
        "backoff_initial": 0.1,
        "negotiation_file": str(real["root"] / "llm-endpoints.json"),
    }
    values.update(overrides)
    return LLMSettings.from_env(**values)


def is_triple(t: Any) -> bool:
    return isinstance(t, list) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t)


def in_text(phrase: str, text: str) -> bool:
    squash = lambda s: re.sub(r"\W+", " ", s).strip().lower()  # noqa: E731
    return bool(squash(phrase)) and squash(phrase) in squash(text)


@pytest.mark.timeout(600)
def test_extraction_on_a_real_server(real):
    settings = settings_for(real)
    recorder = Recorder()
    cache = ExtractionCache(real["root"] / "extractions.sqlite")
    extractor = CachedExtractor(LLMExtractor(settings, client=recorder.client(settings)), cache)
    started = time.monotonic()
    results = extractor.extract(PASSAGES)
    real["outputs"]["extraction_seconds"] = round(time.monotonic() - started, 1)
    real["outputs"]["exchanges"] = [
        {"format": f, "status": s, "max_tokens": r.get("max_tokens"), "answer": _content(b)}
        for f, (r, s, b) in zip(recorder.formats(), recorder.exchanges)
    ]

    # llama-cpp-python refuses json_schema (HTTP 500) once; every later call uses its json_object + schema
    # extension, with no retry spent on the refusal
    formats = recorder.formats()
    assert formats[0] == "json_schema" and recorder.exchanges[0][1] == 500
    assert formats[1:] == ["json_object+schema"] * (len(formats) - 1)
    assert extractor.inner.stats.retries == 0
    assert all(status == 200 for _, status, _ in recorder.exchanges[1:])
    # two calls a passage, a third only where an answer was cut off with nothing usable
    assert 2 * len(PASSAGES) <= len(formats) - 1 <= 3 * len(PASSAGES)

    # every passage ends as a cached success or a recorded failure with the raw answer
    failures = {f.passage_id: f for f in cache.failures(extractor.name)}
    assert extractor.counts.new + extractor.counts.failed == len(PASSAGES)
    for passage, result in zip(PASSAGES, results):
        stored = cache.get(extractor.name, passage.hash)
        assert (stored is None) == (result is None) == (passage.passage_id in failures)
        if result is None:
            failure = failures[passage.passage_id]
            assert "not parseable" in failure.error and failure.raw is not None, failure
            continue
        assert stored == result
        # the grammar held the weak model to the schema: strings, and triples of exactly three
        assert all(isinstance(e, str) and e.strip() for e in result.named_entities)
        assert all(is_triple(t) for t in result.triples), result.triples
    assert extractor.counts.new >= len(PASSAGES) // 2, failures  # real output parsed, not just failures
    real["outputs"]["extracted"] = {
        p.title: (r.model_dump() if r else {"failure": failures[p.passage_id].error})
        for p, r in zip(PASSAGES, results)
    }

    if real["server"].strong:
        grounded = [t for p, r in zip(PASSAGES, results) if r for t in r.triples
                    if in_text(t[0], p.full_text) and in_text(t[2], p.full_text)]
        assert grounded, "a strong model should write a triple whose subject and object are in its passage"

    # the negotiation is remembered for the next run
    store = NegotiationStore(Path(settings.negotiation_file))
    profile = store.get(settings.url, settings.model)
    assert profile is not None and profile.response_format == "json_object+schema" and profile.verified
    assert "json_object" in profile.rejected["json_schema"]
    real["outputs"]["negotiation"] = json.loads(Path(settings.negotiation_file).read_text())

    # a second run: successes come from the cache, only recorded failures are asked again, and no
    # request carries the refused format
    again_recorder = Recorder()
    again = CachedExtractor(LLMExtractor(settings, client=again_recorder.client(settings)), cache)
    started = time.monotonic()
    again_results = again.extract(PASSAGES)
    real["outputs"]["rerun_seconds"] = round(time.monotonic() - started, 2)
    assert again.counts.cached == extractor.counts.new
    assert all(second == first for first, second in zip(results, again_results) if first is not None)
    assert len(again_recorder.requests) <= 3 * len(failures)
    assert "json_schema" not in again_recorder.formats()
    third_recorder = Recorder()
    third = CachedExtractor(LLMExtractor(settings, client=third_recorder.client(settings)), cache)
    third.extract([p for p, r in zip(PASSAGES, again_results) if r is not None])
    assert third_recorder.requests == []  # all cached: zero LLM calls


@pytest.mark.timeout(300)
def test_query_ner_on_a_real_server(real):
    settings = settings_for(real)
    recorder = Recorder()
    extractor = LLMExtractor(settings, client=recorder.client(settings))
    entities = extractor.query_entities(QUESTION)
    real["outputs"]["query_ner"] = {"question": QUESTION, "entities": entities,
                                    "answer": _content(recorder.exchanges[-1][2])}
    assert extractor.chat.remembered  # learnt by the extraction test (or its own first call)
    assert recorder.formats() == ["json_object+schema"]
    assert isinstance(entities, list) and all(isinstance(e, str) and e.strip() for e in entities)
    schema = recorder.requests[0]["response_format"]["schema"]
    assert schema["properties"]["named_entities"]["maxItems"] >= 8 and recorder.requests[0]["max_tokens"] > 0
    if real["server"].strong:
        assert any(in_text(e, QUESTION) for e in entities), entities


@pytest.mark.timeout(300)
def test_reader_on_a_real_server(real):
    settings = settings_for(real)
    recorder = Recorder()
    reader = Reader(settings, client=recorder.client(settings))
    result = reader.answer(QUESTION, PASSAGES[:2])
    real["outputs"]["reader"] = {"question": QUESTION, "answer": result.answer, "parsed": result.parsed,
                                 "truncated": result.truncated, "raw": result.raw}
    [request] = recorder.requests
    assert "response_format" not in request and request["max_tokens"] > 0
    assert result.raw.strip() and isinstance(result.answer, str)
    assert result.truncated == (json.loads(recorder.exchanges[0][2])["choices"][0]["finish_reason"] == "length")
    if real["server"].strong:
        assert result.parsed and "warsaw" in result.answer.lower(), result.raw


@pytest.mark.timeout(300)
def test_recognition_filter_on_a_real_server(real):
    settings = settings_for(real)
    recorder = Recorder()
    flt = RecognitionFilter(settings, client=recorder.client(settings))
    try:
        kept: list[int] | str = flt.select(QUESTION, FACTS)
    except ResponseParseError as exc:  # an unusable answer is an error the caller reports, never a crash
        kept = f"unparseable: {exc}"
    real["outputs"]["filter"] = {"question": QUESTION, "facts": FACTS, "kept": kept,
                                 "answer": _content(recorder.exchanges[-1][2])}
    [request] = recorder.requests
    assert recorder.formats() == ["json_object+schema"]
    assert request["response_format"]["schema"]["properties"]["triples"]["maxItems"] == len(FACTS)
    assert isinstance(kept, list), kept  # the grammar keeps even a weak model's answer parseable
    assert kept == sorted(set(kept)) and all(0 <= i < len(FACTS) for i in kept)
    if real["server"].strong:
        assert 0 in kept, kept


@pytest.mark.timeout(900)
def test_hipporag_index_through_a_real_server(real, memory_factory, tmp_path):
    """The reported failure, end to end on Neo4j: LLM indexing against llama.cpp indexed nothing."""
    settings = settings_for(real, negotiation_file=str(tmp_path / "llm-endpoints.json"))  # negotiates anew
    recorder = Recorder()
    extractor = CachedExtractor(LLMExtractor(settings, client=recorder.client(settings)),
                                ExtractionCache(tmp_path / "extractions.sqlite"))
    memory = memory_factory(extractor=extractor)
    report = memory.index(PASSAGES[:2])
    assert report.indexed + len(report.extraction_failures) == 2 and report.indexed >= 1, report
    assert extractor.inner.stats.retries == 0 and recorder.formats().count("json_schema") == 1
    sent = len(recorder.requests)
    again = memory.index(PASSAGES[:2])  # same content: nothing to extract, nothing to write
    assert again.unchanged == report.indexed and len(recorder.requests) <= sent + 3 * len(report.extraction_failures)


def _content(body: str) -> str | None:
    try:
        return json.loads(body)["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return body[:300]


# -- QA scores and iterative retrieval on Neo4j, with the real model writing the answers and the steps --------

QA_QUESTIONS = [
    {"id": "curie", "question": QUESTION, "answer": "Warsaw", "answer_aliases": ["Warszawa"], "support": ["Marie Curie"]},
    {"id": "kyoto", "question": "Which city is home to the temple Kinkaku-ji?", "answer": "Kyoto", "answer_aliases": [],
     "support": ["Kyoto"]},
    {"id": "turing", "question": "Where did Alan Turing work during the Second World War?", "answer": "Bletchley Park",
     "answer_aliases": ["Bletchley"], "support": ["Alan Turing"]},
]
EXTRACTIONS = {
    "Marie Curie": (["Marie Curie", "Warsaw", "Nobel Prize in Physics"], [["Marie Curie", "born in", "Warsaw"]]),
    "Danube": (["Danube", "Vienna", "Budapest", "Black Sea"], [["Danube", "flows through", "Vienna"]]),
    "Alan Turing": (["Alan Turing", "King's College", "Bletchley Park"], [["Alan Turing", "worked at", "Bletchley Park"]]),
    "Kyoto": (["Kyoto", "Japan", "Kinkaku-ji"], [["Kyoto", "home to", "Kinkaku-ji"]]),
}


def qa_dataset(root: Path) -> Path:
    """PASSAGES and QA_QUESTIONS laid out as a dataset directory, with a hand-made OpenIE file (no extraction)."""
    root.mkdir(parents=True, exist_ok=True)
    by_title = {p.title: p for p in PASSAGES}
    (root / "corpus.json").write_text(json.dumps([{"title": p.title, "text": p.text} for p in PASSAGES]))
    (root / "questions.json").write_text(json.dumps([
        {"id": q["id"], "question": q["question"], "answer": q["answer"], "answer_aliases": q["answer_aliases"],
         "paragraphs": [{"title": t, "paragraph_text": by_title[t].text, "is_supporting": True} for t in q["support"]]}
        for q in QA_QUESTIONS
    ]))
    docs = [{"idx": i, "title": p.title, "text": p.text, "passage": p.full_text,
             "extracted_entities": EXTRACTIONS[p.title][0], "extracted_triples": EXTRACTIONS[p.title][1]}
            for i, p in enumerate(PASSAGES)]
    (root / "openie_hand.json").write_text(json.dumps({"docs": docs}))
    return root


def hand_scores(prediction: str, golds: list[str]) -> tuple[float, float]:
    """EM and F1 computed here, apart from reader.py: lower-case, no punctuation, no a/an/the, token overlap."""
    def tokens(s: str) -> list[str]:
        s = "".join(c for c in s.lower() if c not in string.punctuation)
        return [t for t in s.split() if t not in ("a", "an", "the")]

    em, best = 0.0, 0.0
    for gold in golds:
        p, g = tokens(prediction), tokens(gold)
        em = max(em, float(p == g))
        common = sum(min(p.count(t), g.count(t)) for t in set(p))
        if p and g and common:
            precision, recall = common / len(p), common / len(g)
            best = max(best, 2 * precision * recall / (precision + recall))
        elif not p and not g:
            best = max(best, 1.0)
    return em, best


def usage_of(recorder: Recorder) -> tuple[int, int]:
    prompt = completion = 0
    for _, status, body in recorder.exchanges:
        if status == 200:
            usage = json.loads(body).get("usage") or {}
            prompt += usage.get("prompt_tokens") or 0
            completion += usage.get("completion_tokens") or 0
    return prompt, completion


@pytest.mark.timeout(900)
def test_qa_scores_on_a_real_server(real, memory_factory, tmp_path):
    from hippo_neo4j import evaluation as ev

    dataset = ev.load_dataset(qa_dataset(tmp_path / "qa"))
    assert [q.answers for q in dataset.questions] == [("Warsaw", "Warszawa"), ("Kyoto",), ("Bletchley Park", "Bletchley")]
    memory = memory_factory()
    ev.ensure_index(memory, dataset)
    settings = settings_for(real, max_tokens=160)  # a weak model can ramble to any budget: keep the run short
    recorder = Recorder()
    reader = Reader(settings, client=recorder.client(settings))
    started = time.monotonic()
    result = ev.evaluate(memory, dataset, modes=["dense"], reader=reader, reader_top_k=2)
    seconds = time.monotonic() - started
    answers = [(q["id"], q["dense"]["qa"]) for q in result["questions"]]
    real["outputs"]["qa"] = {"seconds": round(seconds, 1), "summary": result["summary"]["dense"], "qa": result["qa"]["dense"],
                             "answers": {qid: {k: a[k] for k in ("answer", "em", "f1", "parsed", "truncated")} for qid, a in answers}}

    # one reader call a question, with the top 2 passages; every answer scored as computed by hand
    assert len(recorder.requests) == len(dataset.questions) == result["qa"]["dense"]["reader_calls"]
    for request, question in zip(recorder.requests, dataset.questions):
        user = request["messages"][-1]["content"]
        assert "[2] " in user and "[3] " not in user and question.question in user
    ems, f1s = [], []
    for (qid, qa), question in zip(answers, dataset.questions):
        assert isinstance(qa["answer"], str) and qa["error"] is None
        em, f1_ = hand_scores(qa["answer"], list(question.answers))
        assert qa["em"] == em and qa["f1"] == pytest.approx(f1_), (qid, qa["answer"])
        ems.append(em)
        f1s.append(f1_)
    summary = result["summary"]["dense"]
    assert summary["em"] == pytest.approx(sum(ems) / len(ems)) and summary["f1"] == pytest.approx(sum(f1s) / len(f1s))
    # tokens are the server's own usage figures
    qa = result["qa"]["dense"]
    assert (qa["reader_prompt_tokens"], qa["reader_completion_tokens"]) == usage_of(recorder)
    assert qa["reader_seconds"] > 0
    if real["server"].strong:
        assert summary["em"] >= 2 / 3, answers


@pytest.mark.timeout(900)
def test_iterative_retrieval_on_a_real_server(real, memory_factory, tmp_path):
    from hippo_neo4j import evaluation as ev
    from hippo_neo4j.reader import STEP_MAX_TOKENS
    from hippo_neo4j.iterative import IterativeRetrieval, explain

    dataset = ev.load_dataset(qa_dataset(tmp_path / "qa"))
    memory = memory_factory()
    ev.ensure_index(memory, dataset)
    settings = settings_for(real)
    recorder = Recorder()
    reader = Reader(settings, client=recorder.client(settings))
    question = dataset.questions[2].question
    started = time.monotonic()
    result = IterativeRetrieval(memory, mode="bm25", steps=2, reader=reader, order="rank").run(question, top_k=2)
    seconds = time.monotonic() - started
    real["outputs"]["ircot"] = {"seconds": round(seconds, 1), "explain": explain(result), "stopped": result.stopped,
                                "answer": result.answer, "raws": [s.raw for s in result.steps],
                                "passages": [p.title for p in result.passages]}

    # bounded: at most 2 LLM calls, every one counted with the server's token figures
    assert result.stopped in ("answer", "max_steps", "no_sentence") and result.error is None
    assert 1 <= result.llm_calls == len(recorder.requests) == reader.chat.stats.calls <= 2
    assert (result.prompt_tokens, result.completion_tokens) == usage_of(recorder)
    assert all(r["max_tokens"] == STEP_MAX_TOKENS and "response_format" not in r for r in recorder.requests)
    # every step is in the explanation: the sentence written, the query it became, what it added
    assert result.steps[0].query == question and result.steps[0].retrieved
    written = []
    for step, request in zip(result.steps[1:], recorder.requests):
        user = request["messages"][-1]["content"]
        assert question in user and all(s in user for s in written)  # the reasoning so far was given back
        assert step.raw is not None and step.sentence is not None
        if step.answer is None and step.sentence:
            assert step.query == step.sentence and step.retrieval is not None
            assert set(step.added) <= set(step.retrieved)
        else:
            assert step.query is None
        written.append(step.sentence)
    ids = [p.id for p in result.passages]
    assert len(ids) == len(set(ids)) <= 2
    assert set(ids) <= {pid for s in result.steps for pid in s.added}
    text = explain(result)
    assert all(f"step {s.step}" in text for s in result.steps)


@pytest.mark.timeout(900)
def test_hippo_eval_reader_iterative_through_a_real_server(real, connection, tmp_path):
    from click.testing import CliRunner

    from hippo_neo4j.cli import cli

    root = qa_dataset(tmp_path / "qa")
    server: LlamaServer = real["server"]
    ns = f"eval-real-{tmp_path.name[-8:]}"
    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
           "OPENAI_BASE_URL": server.base_url, "HIPPO_LLM_MODEL": server.model, "HIPPO_LLM_MAX_TOKENS": "160",
           "HIPPO_LLM_NEGOTIATION_FILE": str(real["root"] / "llm-endpoints.json"),
           "HIPPO_EXTRACTION_CACHE": str(tmp_path / "extractions.sqlite")}
    out_file = tmp_path / "eval.json"
    runner = CliRunner()
    started = time.monotonic()
    try:
        out = runner.invoke(cli, ["eval", str(root), "--namespace", ns, "--mode", "dense", "--limit", "2", "--reader",
                                  "--reader-top-k", "2", "--iterative", "--steps", "1", "--json", str(out_file)],
                            env=env, catch_exceptions=False)
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=env)
    assert out.exit_code == 0, out.output
    data = json.loads(out_file.read_text())
    real["outputs"]["eval_cli"] = {"seconds": round(time.monotonic() - started, 1), "stdout": out.stdout,
                                   "answers": {q["id"]: {v: q[v]["qa"]["answer"] for v in ("dense", "dense+ircot")}
                                               for q in data["questions"]}}
    assert "| EM | F1 |" in out.stdout and "| dense+ircot |" in out.stdout
    assert set(data["summary"]) == {"dense", "dense+ircot"}
    for variant in ("dense", "dense+ircot"):
        scored = [q[variant]["qa"] for q in data["questions"]]
        for q, qa in zip(data["questions"], scored):
            em, f1_ = hand_scores(qa["answer"] or "", q["answers"])
            assert qa["em"] == em and qa["f1"] == pytest.approx(f1_)
        assert data["summary"][variant]["em"] == pytest.approx(sum(a["em"] for a in scored) / 2)
        assert data["qa"][variant]["reader_calls"] == 2
    for q in data["questions"]:
        assert q["dense+ircot"]["llm_calls"] == 1 and len(q["dense+ircot"]["steps"]) == 2
    assert data["diagnostics"]["dense+ircot"]["llm_calls"] == 2
