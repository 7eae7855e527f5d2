"""The extraction layer without Neo4j: the real openai client against a fake OpenAI-compatible server,
the SQLite cache and resume, the offline spaCy extractor, the reader and EM/F1."""

from __future__ import annotations

import json
import logging
import re
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hippo_neo4j.errors import ConfigError, HippoError, LLMError
from hippo_neo4j.extract import ExtractionFailure, make_extractor
from hippo_neo4j.extract.cache import CachedExtractor, ExtractionCache, default_cache_path
from hippo_neo4j.extract.llm import PROMPT_VERSION, LLMExtractor, estimate_cost
from hippo_neo4j.llm.negotiation import EndpointProfile, NegotiationStore
from hippo_neo4j.llm.parsing import ResponseParseError, parse_entities, parse_triples
from hippo_neo4j.llm.settings import PLACEHOLDER_KEY, LLMSettings
from hippo_neo4j.extract.offline import SPACY_MODEL, UNUSED_PIPES, OfflineExtractor
from hippo_neo4j.models import Extraction, PassageIn
from hippo_neo4j.reader import Reader, exact_match, f1, normalize_answer, parse_answer

from .fake_openai import DATASETS, HTML_PAGE, FakeOpenAI, MusiqueReplay, Reply, error_reply

SECRET = "sk-test-Sup3rSecretKeyValue0123456789"


def settings_for(server: FakeOpenAI, **overrides: Any) -> LLMSettings:
    values: dict[str, Any] = {
        "base_url": server.base_url,
        "api_key": SECRET,
        "backoff_initial": 0.01,
        "backoff_max": 0.2,
        "timeout": 60.0,  # only guards against a hang
        "concurrency": 4,
    }
    values.update(overrides)
    return LLMSettings.from_env(**values)


def passages_of(docs: list[dict[str, Any]]) -> list[PassageIn]:
    return [PassageIn(title=d["title"], text=d["text"]) for d in docs]


SAMPLE = PassageIn(title="Thomas Südhof", text="Thomas Südhof works at Stanford University.")


# -- the LLM path against recorded GPT-3.5 answers ------------------------------------------------------------


def test_llm_extractor_replays_recorded_gpt35_extractions(llm_env, fake_openai, musique_docs):
    docs = musique_docs[:30]
    fake_openai.responder = MusiqueReplay(docs)
    extractor = LLMExtractor(settings_for(fake_openai))
    results = extractor.extract(passages_of(docs))

    assert extractor.failures == []
    for result, doc in zip(results, docs):
        assert result is not None
        assert result.named_entities == doc["extracted_entities"]
        assert result.triples == doc["extracted_triples"]  # raw, malformed ones included (indexer counts them)
    assert any(len(t) != 3 for r in results for t in r.triples)  # the sample does hold malformed triples
    # two steps per passage, temperature 0, JSON schema requested, the OpenIE step sees the NER output
    assert len(fake_openai.requests) == 60
    assert all(r["temperature"] == 0 for r in fake_openai.requests)
    assert {r["response_format"]["type"] for r in fake_openai.requests} == {"json_schema"}
    openie = [r for r in fake_openai.requests if r["response_format"]["json_schema"]["name"] == "triples"]
    assert len(openie) == 30
    assert json.dumps({"named_entities": docs[0]["extracted_entities"]}) in openie_request_for(openie, docs[0])
    assert extractor.name == f"llm:gpt-4o-mini:{PROMPT_VERSION}"
    assert extractor.stats.calls == 60 and extractor.stats.prompt_tokens > 0
    assert extractor.stats.completion_tokens > 0 and extractor.stats.cost_usd > 0


def openie_request_for(requests: list[dict[str, Any]], doc: dict[str, Any]) -> str:
    return next(r["messages"][-1]["content"] for r in requests if doc["passage"] in r["messages"][-1]["content"])


def test_query_entities_use_the_ner_prompt(llm_env, fake_openai):
    fake_openai.responder = lambda req: {"named_entities": ["Thomas Südhof", "Stanford"]}
    extractor = LLMExtractor(settings_for(fake_openai))
    assert extractor.query_entities("Where does Thomas Südhof work?") == ["Thomas Südhof", "Stanford"]
    request = fake_openai.requests[-1]
    assert "Where does Thomas Südhof work?" in request["messages"][-1]["content"]
    assert request["response_format"]["json_schema"]["name"] == "named_entities"


# -- tolerant parsing through the real client -----------------------------------------------------------------

TRIPLES = [["Thomas Südhof", "works at", "Stanford University"]]
BAD_ANSWERS = {
    "fenced": "```json\n" + json.dumps({"triples": TRIPLES}) + "\n```",
    "think": "<think>The passage says he works at Stanford. {\"draft\": 1}</think>\n" + json.dumps({"triples": TRIPLES}),
    "top-level array": json.dumps(TRIPLES),
    "prose around": "Here are the triples:\n" + json.dumps({"triples": TRIPLES}) + "\nLet me know!",
    # cut off mid-way: the complete triple survives, the half-written one is dropped
    "truncated": '{"triples": [["Thomas Südhof", "works at", "Stanford University"], ["Thomas Südhof", "won", "Nob',
}


@pytest.mark.parametrize("kind", list(BAD_ANSWERS))
def test_tolerant_parsing_of_messy_answers(llm_env, fake_openai, kind):
    answer = BAD_ANSWERS[kind]

    def responder(request: dict[str, Any]) -> Any:
        system = request["messages"][0]["content"]
        if "triples" in system:
            return Reply(content=answer, finish_reason="length" if kind == "truncated" else "stop")
        return "```\n" + json.dumps({"named_entities": ["Thomas Südhof", "Stanford University"]}) + "\n```"

    fake_openai.responder = responder
    extractor = LLMExtractor(settings_for(fake_openai))
    [result] = extractor.extract([SAMPLE])
    assert result == Extraction(named_entities=["Thomas Südhof", "Stanford University"], triples=TRIPLES)
    assert extractor.stats.repaired == (1 if kind == "truncated" else 0)


@pytest.mark.parametrize(
    "answer",
    ["I'm sorry, I cannot extract anything from this passage.", "<think>Let me think about the entities",
     '{"answer": "none"}', ""],
)
def test_unparseable_answer_is_a_recorded_failure_not_an_empty_extraction(llm_env, fake_openai, answer):
    fake_openai.responder = lambda req: Reply(content=answer)
    cache = ExtractionCache(llm_env)
    extractor = CachedExtractor(LLMExtractor(settings_for(fake_openai)), cache)
    assert extractor.extract([SAMPLE]) == [None]
    [failure] = extractor.counts.failures
    assert failure.passage_id == SAMPLE.passage_id and "not parseable" in failure.error
    assert failure.raw == answer
    # stored as a failure with the raw answer, never as a success
    assert cache.get(extractor.name, SAMPLE.hash) is None
    [record] = cache.failures(extractor.name)
    assert (record.hash, record.raw, record.attempts) == (SAMPLE.hash, answer, 1)
    # the next run retries it; once it parses, it is cached and the failure is gone
    fake_openai.responder = lambda req: (
        {"triples": TRIPLES} if "triples" in req["messages"][0]["content"] else {"named_entities": ["Thomas Südhof"]}
    )
    before = len(fake_openai.requests)
    again = CachedExtractor(LLMExtractor(settings_for(fake_openai)), cache)
    assert again.extract([SAMPLE])[0] == Extraction(named_entities=["Thomas Südhof"], triples=TRIPLES)
    assert len(fake_openai.requests) == before + 2
    assert cache.failures() == [] and cache.get(again.name, SAMPLE.hash) is not None


def test_empty_lists_are_a_success(llm_env, fake_openai):
    extractor = LLMExtractor(settings_for(fake_openai))  # default responder: no entities, no triples
    assert extractor.extract([SAMPLE]) == [Extraction(named_entities=[], triples=[])]


def test_parse_helpers():
    assert parse_entities('{"named_entities": ["A", 1990, "A", " ", {"x": 1}, "B "]}') == (["A", "1990", "B"], False)
    with pytest.raises(ResponseParseError):
        parse_triples('{"named_entities": ["A"], "other": ["B"]}')
    with pytest.raises(ResponseParseError):
        parse_triples('{"triples": "none"}')
    assert parse_triples('Partial: {"triples": [["A", "b", "C"]')[0] == [["A", "b", "C"]]


def test_parse_real_small_model_output():
    # SmolLM2-135M through llama.cpp's json_object + schema grammar: a fence and prose inside the last
    # string, with raw newlines. The fence is not where the JSON is; the complete triple is kept.
    answer = (
        '{"triples": [["Alan Turing", "Bletchley Park", "King\'s College"], ["Alan Turing", "2019", "Sunderland '
        "University of Science]]}\n```\nThe original passage is a bit long and hard to read. Here's an example:"
        '\n\n{\n  " ] ] }'
    )
    triples, repaired = parse_triples(answer)
    assert triples[0] == ["Alan Turing", "Bletchley Park", "King's College"] and len(triples) == 2
    assert not repaired and triples[1][2].startswith("Sunderland University of Science]]}\n```")
    # a fence before the JSON still holds it
    assert parse_entities('Sure!\n```json\n{"named_entities": ["A"]}\n```\n{"x": 1}')[0] == ["A"]


# -- retries, fallbacks -----------------------------------------------------------------------------------------


def test_429_and_500_are_retried_with_logging(llm_env, fake_openai, caplog):
    fake_openai.script(
        error_reply(429, "Rate limit reached", "rate_limit_exceeded", headers={"Retry-After": "0"}),
        error_reply(500, "The server had an error", type_="server_error"),
    )
    extractor = LLMExtractor(settings_for(fake_openai))
    with caplog.at_level(logging.WARNING, logger="hippo_neo4j.llm.client"):
        assert extractor.extract([SAMPLE]) == [Extraction()]
    assert len(fake_openai.requests) == 4  # 429, 500, then NER and OpenIE
    assert extractor.stats.retries == 2 and extractor.stats.calls == 2
    retries = [r.getMessage() for r in caplog.records if "retrying" in r.getMessage()]
    assert len(retries) == 2
    assert "HTTP 429" in retries[0] and "attempt 1 of 5" in retries[0]
    assert "retrying in 0.00s" in retries[0]  # Retry-After: 0 honoured (the backoff alone waits >= 0.01s)
    assert "HTTP 500" in retries[1] and fake_openai.base_url in retries[1]


def test_retries_give_up_and_fail_the_passage(llm_env, fake_openai, caplog):
    fake_openai.script(*[error_reply(503, "overloaded", type_="server_error") for _ in range(3)])
    extractor = LLMExtractor(settings_for(fake_openai, max_attempts=3))
    with caplog.at_level(logging.WARNING):
        assert extractor.extract([SAMPLE]) == [None]
    assert "HTTP 503" in extractor.failures[0].error and "after 3 attempts" in extractor.failures[0].error
    assert len(fake_openai.requests) == 3


def test_json_schema_rejected_falls_back_to_llama_schema_extension(llm_env, musique_docs, caplog):
    docs = musique_docs[:3]
    with FakeOpenAI(MusiqueReplay(docs), reject_formats={"json_schema"}) as server:
        extractor = LLMExtractor(settings_for(server, concurrency=1))
        with caplog.at_level(logging.WARNING):
            results = extractor.extract(passages_of(docs))
        assert [r.triples for r in results] == [d["extracted_triples"] for d in docs]
        assert extractor.chat.format_mode == "json_object+schema"
        formats = [(r.get("response_format") or {}).get("type") for r in server.requests]
        # the first call tried the schema once; every later call went straight to JSON mode + schema
        assert formats == ["json_schema"] + ["json_object"] * 6
        assert all("schema" in r["response_format"] for r in server.requests[1:])
        assert any("falling back to json_object+schema" in r.getMessage() for r in caplog.records)


def test_json_mode_rejected_too_falls_back_to_plain(llm_env, musique_docs):
    docs = musique_docs[:2]
    with FakeOpenAI(MusiqueReplay(docs), reject_formats={"json_schema", "json_object"}) as server:
        extractor = LLMExtractor(settings_for(server, concurrency=1))
        results = extractor.extract(passages_of(docs))
        assert [r.named_entities for r in results] == [d["extracted_entities"] for d in docs]
        assert extractor.chat.format_mode == "none"
        assert "response_format" not in server.requests[-1]
        assert len(server.requests) == 3 + 4  # three refusals on the first call, then two calls a passage


def test_llama_cpp_500_on_json_schema_falls_back_at_once_and_is_remembered(llm_env, musique_docs, caplog):
    """llama-cpp-python answers json_schema with HTTP 500: a refusal, not an outage (no retry, no backoff)."""
    docs = musique_docs[:3]
    passages = passages_of(docs)
    with FakeOpenAI(MusiqueReplay(docs), llama_cpp=True) as server:
        # a backoff that would show: five attempts of 1 s each would take far longer than this test may
        settings = settings_for(server, concurrency=2, backoff_initial=1.0, backoff_max=1.0)
        extractor = LLMExtractor(settings)
        with caplog.at_level(logging.WARNING):
            results = extractor.extract(passages)
        assert [r.triples for r in results] == [d["extracted_triples"] for d in docs]
        assert extractor.failures == [] and extractor.stats.retries == 0
        assert not any("retrying" in r.getMessage() for r in caplog.records)
        rejected = [r for r in server.requests if r["response_format"]["type"] == "json_schema"]
        assert 1 <= len(rejected) <= 2  # the first call of each of the two workers at most
        assert len(server.requests) == len(rejected) + 6
        sent = [r["response_format"] for r in server.requests if r["response_format"]["type"] == "json_object"]
        assert len(sent) == 6 and all(f["schema"]["additionalProperties"] is False for f in sent)
        record = json.loads((llm_env.parent / "llm-endpoints.json").read_text())["endpoints"]
        [(key, profile)] = record.items()
        assert key == f"{server.base_url} gpt-4o-mini"
        assert profile["response_format"] == "json_object+schema" and profile["verified"] is True
        assert "Input should be" in profile["rejected"]["json_schema"]
        assert SECRET not in json.dumps(record)

        # a new client (the next CLI run) starts from what was learnt: no json_schema request at all
        before = len(server.requests)
        again = LLMExtractor(settings_for(server))
        assert again.query_entities("Who founded the Journal of Mathematical Physics?") == []
        assert again.chat.remembered and again.chat.format_mode == "json_object+schema"
        assert [r["response_format"]["type"] for r in server.requests[before:]] == ["json_object"]

        # with remembering off, it negotiates again
        fresh = LLMExtractor(settings_for(server, negotiation_file="off"))
        fresh.query_entities("Who founded it?")
        assert not fresh.chat.remembered
        assert [r["response_format"]["type"] for r in server.requests[before + 1:]] == ["json_schema", "json_object"]


def test_remembered_negotiation_expires_and_survives_a_corrupt_file(llm_env, fake_openai):
    path = llm_env.parent / "llm-endpoints.json"
    store = NegotiationStore(path)
    stale = EndpointProfile(response_format="none", updated_at=1.0)  # 1970: older than the TTL
    store.put(fake_openai.base_url, "gpt-4o-mini", stale)
    extractor = LLMExtractor(settings_for(fake_openai))
    extractor.query_entities("Where is Stanford?")
    assert fake_openai.requests[-1]["response_format"]["type"] == "json_schema"
    assert store.get(fake_openai.base_url, "gpt-4o-mini").verified
    path.write_text("{not json")
    assert LLMExtractor(settings_for(fake_openai)).query_entities("Where is Stanford?") == []
    assert fake_openai.requests[-1]["response_format"]["type"] == "json_schema"


def test_a_500_that_is_not_about_the_format_is_still_retried(llm_env, fake_openai):
    fake_openai.script(error_reply(500, "CUDA out of memory", type_="server_error"),
                       error_reply(503, "loading model", type_="server_error"))
    extractor = LLMExtractor(settings_for(fake_openai))
    assert extractor.extract([SAMPLE]) == [Extraction()]
    assert extractor.stats.retries == 2 and extractor.chat.format_mode == "json_schema"
    assert [r["response_format"]["type"] for r in fake_openai.requests] == ["json_schema"] * 4


def test_lists_and_token_budgets_are_bounded(llm_env, fake_openai):
    extractor = LLMExtractor(settings_for(fake_openai))
    long = PassageIn(title="Long", text=" ".join(["word"] * 200))
    extractor.extract([SAMPLE, long])
    by_text = {}
    for r in fake_openai.requests:
        schema = r["response_format"]["json_schema"]["schema"]
        key = "long" if "word word" in r["messages"][-1]["content"] else "short"
        by_text.setdefault(key, []).append((schema, r["max_tokens"]))
    for key, calls in by_text.items():
        (ner, ner_tokens), (ie, ie_tokens) = sorted(calls, key=lambda c: "triples" in c[0]["properties"])
        entities = ner["properties"]["named_entities"]["maxItems"]
        triples = ie["properties"]["triples"]
        assert triples["items"]["minItems"] == triples["items"]["maxItems"] == 3
        # the budget leaves room for every allowed item
        assert ner_tokens >= 8 * entities and ie_tokens >= 20 * triples["maxItems"]
    short_items = {c[0]["properties"].get("triples", c[0]["properties"].get("named_entities"))["maxItems"] for c in by_text["short"]}
    long_items = {c[0]["properties"].get("triples", c[0]["properties"].get("named_entities"))["maxItems"] for c in by_text["long"]}
    assert max(short_items) < min(long_items) and max(long_items) <= 128

    # a fixed budget from the settings wins
    fixed = LLMExtractor(settings_for(fake_openai, max_tokens=77))
    fixed.query_entities("Where?")
    assert fake_openai.requests[-1]["max_tokens"] == 77


def test_max_tokens_refused_then_max_completion_tokens(llm_env, fake_openai, caplog):
    fake_openai.reject_params = {"max_tokens"}
    extractor = LLMExtractor(settings_for(fake_openai))
    with caplog.at_level(logging.WARNING):
        assert extractor.extract([SAMPLE]) == [Extraction()]
    assert "max_tokens" in fake_openai.requests[0] and "max_tokens" not in fake_openai.requests[1]
    assert fake_openai.requests[1]["max_completion_tokens"] > 0 and len(fake_openai.requests) == 3
    assert extractor.chat.profile.token_param == "max_completion_tokens" and extractor.stats.retries == 0
    # a server that takes neither gets no budget at all
    fake_openai.reject_params = {"max_tokens", "max_completion_tokens"}
    nothing = LLMExtractor(settings_for(fake_openai, negotiation_file="off"))
    assert nothing.extract([SAMPLE]) == [Extraction()]
    assert not {"max_tokens", "max_completion_tokens"} & set(fake_openai.requests[-1])


def test_a_too_large_budget_is_not_taken_for_an_unsupported_parameter(llm_env, fake_openai):
    # vLLM's words when prompt + max_tokens exceed the context: a bad value for this call, nothing to learn
    fake_openai.script(error_reply(400, "'max_tokens' or 'max_completion_tokens' is too large: 4000. This model's "
                                        "maximum context length is 2048 tokens and your request has 900 input tokens"))
    extractor = LLMExtractor(settings_for(fake_openai))
    assert extractor.extract([SAMPLE]) == [None]
    assert "is too large" in extractor.failures[0].error and len(fake_openai.requests) == 1
    assert extractor.chat.profile.token_param == "max_tokens"


def test_truncated_answer_with_nothing_usable_is_asked_once_more_then_recorded(llm_env, fake_openai):
    cut = '{"named_entities": ["Thomas S'

    fake_openai.responder = lambda req: Reply(content=cut, finish_reason="length")
    cache = ExtractionCache(llm_env)
    extractor = CachedExtractor(LLMExtractor(settings_for(fake_openai)), cache)
    assert extractor.extract([SAMPLE]) == [None]
    budgets = [r["max_tokens"] for r in fake_openai.requests]
    assert len(budgets) == 2 and budgets[1] == 4 * budgets[0]  # once more, with four times the budget
    [failure] = cache.failures(extractor.name)
    assert failure.raw == cut and "cut off at max_tokens" in failure.error
    assert extractor.inner.stats.truncated == 2

    # cut off after complete items: those are kept, no second call
    fake_openai.requests.clear()
    fake_openai.responder = lambda req: Reply(
        content='{"triples": [["Thomas Südhof", "works at", "Stanford University"], ["Thomas'
        if "triples" in req["messages"][0]["content"] else '{"named_entities": ["Thomas Südhof", "Stanford Univ',
        finish_reason="length")
    again = LLMExtractor(settings_for(fake_openai))
    [result] = again.extract([SAMPLE])
    assert result == Extraction(named_entities=["Thomas Südhof"], triples=TRIPLES)
    assert len(fake_openai.requests) == 2 and again.stats.repaired == 2


# -- interruption and resume ------------------------------------------------------------------------------------


def test_server_dying_mid_run_then_cached_rerun_resumes(llm_env, musique_docs):
    docs = musique_docs[30:60]
    passages = passages_of(docs)
    cache = ExtractionCache(llm_env)
    with FakeOpenAI(MusiqueReplay(docs)) as first:
        first.die_after(25)
        extractor = CachedExtractor(LLMExtractor(settings_for(first, concurrency=3, max_attempts=3)), cache)
        with pytest.raises(LLMError, match="Cannot reach") as err:
            extractor.extract(passages)
        assert first.base_url in str(err.value)
    done = cache.count(extractor.name)
    assert 0 < done < len(docs)
    assert extractor.counts.new == done and extractor.counts.failures == []
    before = set(cache.get_many(extractor.name, [p.hash for p in passages]))

    with FakeOpenAI(MusiqueReplay(docs)) as second:
        rerun = CachedExtractor(LLMExtractor(settings_for(second)), cache)
        results = rerun.extract(passages)
        assert rerun.counts.cached == done and rerun.counts.new == len(docs) - done
        # only the passages not done before were sent, two calls each
        assert len(second.requests) == 2 * (len(docs) - done)
        for passage, doc, result in zip(passages, docs, results):
            assert result is not None and result.triples == doc["extracted_triples"]
            assert second.chat_requests_for(doc["passage"]) == (0 if passage.hash in before else 2)
    assert cache.count(rerun.name) == len(docs)

    # a third run costs nothing
    with FakeOpenAI(MusiqueReplay(docs)) as third:
        again = CachedExtractor(LLMExtractor(settings_for(third)), cache)
        assert [r.triples for r in again.extract(passages)] == [d["extracted_triples"] for d in docs]
        assert third.requests == [] and again.counts.cached == len(docs)


# -- bad endpoints: one clear line each, URL and model named, key never shown ------------------------------------


def _closed_port_url() -> str:
    server = FakeOpenAI().start()
    url = server.base_url
    server.stop()
    return url


@pytest.mark.parametrize("case", ["down", "html", "no /v1", "wrong model", "refused key"])
def test_bad_endpoint_messages(llm_env, case):
    model = "gpt-4o-mini"
    server = FakeOpenAI(models={"llama3.1:8b"} if case == "wrong model" else None,
                        api_keys={"sk-the-right-one"} if case == "refused key" else None)
    with server:
        url = server.base_url
        if case == "down":
            url = _closed_port_url()
        elif case == "no /v1":
            url = url.removesuffix("/v1")
        elif case == "html":
            server.responder = lambda req: Reply(body=HTML_PAGE, content_type="text/html")
        settings = LLMSettings.from_env(base_url=url, api_key=SECRET, model=model, max_attempts=2,
                                        backoff_initial=0.01)
        with pytest.raises(LLMError) as err:
            LLMExtractor(settings).extract([SAMPLE])
    message = str(err.value)
    assert "\n" not in message and url in message and model in message
    assert SECRET not in message and "Sup3rSecret" not in message
    expected = {
        "down": "Cannot reach",
        "html": "answered with an HTML page",
        "no /v1": "has no chat-completions API (HTTP 404",
        "wrong model": "no such model",
        "refused key": "refused the API key (HTTP 401)",
    }[case]
    assert expected in message
    assert isinstance(err.value, HippoError)


def test_missing_key_and_settings_from_env(llm_env, monkeypatch):
    with pytest.raises(LLMError, match="No API key"):
        LLMExtractor(LLMSettings()).extract([SAMPLE])
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HIPPO_LLM_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("HIPPO_LLM_CONCURRENCY", "3")
    settings = LLMSettings.from_env()
    assert settings.api_key is not None and settings.api_key.get_secret_value() == PLACEHOLDER_KEY
    assert (settings.model, settings.concurrency, settings.url) == ("qwen2.5:7b", 3, "http://127.0.0.1:9/v1")
    assert SECRET not in repr(LLMSettings.from_env(api_key=SECRET))
    monkeypatch.setenv("HIPPO_LLM_CONCURRENCY", "many")
    with pytest.raises(ConfigError):
        LLMSettings.from_env()


def test_dry_run_estimate_calls_nothing(llm_env, fake_openai, musique_docs):
    passages = passages_of(musique_docs[:100])
    extractor = LLMExtractor(settings_for(fake_openai))
    estimate = extractor.dry_run_estimate(passages)
    assert fake_openai.requests == []
    assert (estimate.passages, estimate.calls) == (100, 200)
    chars = sum(len(p.full_text) for p in passages)
    assert chars / 4 * 2 < estimate.prompt_tokens < chars / 4 * 2 + 100 * 2000
    assert estimate.cost_usd == pytest.approx((estimate.prompt_tokens * 0.15 + estimate.completion_tokens * 0.60) / 1e6)
    longer = estimate_cost([PassageIn(text=p.text * 2) for p in passages], extractor.settings)
    assert longer.prompt_tokens > estimate.prompt_tokens and longer.completion_tokens > estimate.completion_tokens
    # the estimate is in the right range: compare with what the replay actually measured
    fake_openai.responder = MusiqueReplay(musique_docs[:100])
    extractor.extract(passages[:20])
    real = extractor.stats
    small = extractor.dry_run_estimate(passages[:20])
    assert 0.5 < small.completion_tokens / real.completion_tokens < 2.0


# -- the cache ----------------------------------------------------------------------------------------------------


class CountingExtractor:
    """A fake extractor that records what it was asked and fails passages whose text contains 'FAIL'."""

    name = "counting:v1"

    def __init__(self) -> None:
        self.asked: list[str] = []

    def extract(self, passages):
        self.asked.extend(p.text for p in passages)
        return [None if "FAIL" in p.text else Extraction(named_entities=[p.text.upper()]) for p in passages]

    def query_entities(self, text: str) -> list[str]:
        return [text]


def test_cached_extractor_only_extracts_missing_passages(tmp_path):
    cache = ExtractionCache(tmp_path / "c.sqlite")
    inner = CountingExtractor()
    cached = CachedExtractor(inner, cache, chunk_size=2)
    batch = [PassageIn(text=t) for t in ["alpha", "beta", "alpha", "FAIL gamma", "delta"]]
    first = cached.extract(batch)
    assert [r.named_entities[0] if r else None for r in first] == ["ALPHA", "BETA", "ALPHA", None, "DELTA"]
    assert inner.asked == ["alpha", "beta", "FAIL gamma", "delta"]  # the duplicate is extracted once
    assert (cached.counts.cached, cached.counts.new, cached.counts.failed) == (0, 3, 1)
    assert cached.counts.failures[0].passage_id == batch[3].passage_id

    inner.asked.clear()
    cached.reset_counts()
    second = cached.extract(batch + [PassageIn(text="epsilon")])
    assert inner.asked == ["FAIL gamma", "epsilon"]  # the failure is retried, the rest comes from the cache
    assert second[:3] == first[:3] and second[3] is None
    assert (cached.counts.cached, cached.counts.new, cached.counts.failed) == (4, 1, 1)
    assert cache.failures("counting:v1")[0].attempts == 2

    # another extractor name (model / prompt version) never sees these entries
    assert cache.get("counting:v2", batch[0].hash) is None
    assert cache.get("counting:v1", batch[0].hash) == Extraction(named_entities=["ALPHA"])


def test_cache_survives_reopen_and_concurrent_writers(tmp_path):
    path = tmp_path / "deep" / "c.sqlite"
    cache = ExtractionCache(path)

    def writer(n: int) -> None:
        for i in range(50):
            cache.put("x", f"{n}-{i}", Extraction(named_entities=[f"e{n}-{i}"]))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    second = ExtractionCache(path)  # a second connection (another process would see the same)
    writer_two = threading.Thread(target=lambda: second.put("x", "other", Extraction()))
    writer_two.start()
    writer_two.join()
    cache.close()
    second.close()
    reopened = ExtractionCache(path)
    assert reopened.count("x") == 401
    assert reopened.get("x", "7-49") == Extraction(named_entities=["e7-49"])
    assert sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_default_cache_path(monkeypatch, tmp_path):
    monkeypatch.delenv("HIPPO_EXTRACTION_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "hippo-neo4j" / "extractions.sqlite"
    monkeypatch.setenv("HIPPO_EXTRACTION_CACHE", str(tmp_path / "mine.sqlite"))
    assert default_cache_path() == tmp_path / "mine.sqlite"


def test_make_extractor(llm_env, monkeypatch):
    auto = make_extractor("auto")
    assert isinstance(auto, CachedExtractor) and isinstance(auto.inner, OfflineExtractor)
    assert auto.cache.path == llm_env
    assert isinstance(make_extractor("offline", cache=False), OfflineExtractor)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    llm = make_extractor("auto")
    assert isinstance(llm, CachedExtractor) and isinstance(llm.inner, LLMExtractor)
    assert llm.name.startswith("llm:gpt-4o-mini:")
    with pytest.raises(ConfigError):
        make_extractor("gpt")


# -- the offline extractor ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def offline() -> OfflineExtractor:
    return OfflineExtractor()


@pytest.mark.parametrize(
    "sentence, expected",
    [
        ("Thomas Südhof works at Stanford University.", [("Thomas Südhof", "works at", "Stanford University")]),
        ("The Eiffel Tower is located in Paris.", [("Eiffel Tower", "is located in", "Paris")]),
        ("Kyoto is the capital of Kyoto Prefecture.", [("Kyoto", "is capital of", "Kyoto Prefecture")]),
        (
            "Marie Curie and Pierre Curie discovered polonium and radium.",
            [("Marie Curie", "discovered", "polonium"), ("Pierre Curie", "discovered", "polonium"),
             ("Marie Curie", "discovered", "radium"), ("Pierre Curie", "discovered", "radium")],
        ),
        (
            "The film was directed by John Smith, who also wrote the screenplay.",
            [("film", "was directed by", "John Smith"), ("John Smith", "wrote", "screenplay")],
        ),
        (
            "Alan Turing was born in London and studied at King's College.",
            [("Alan Turing", "was born in", "London"), ("Alan Turing", "studied at", "King's College")],
        ),
        (
            "The company was founded by Steve Jobs and Steve Wozniak in 1976.",
            [("company", "was founded by", "Steve Jobs"), ("company", "was founded by", "Steve Wozniak"),
             ("company", "was founded in", "1976")],
        ),
    ],
)
def test_offline_triples(offline, sentence, expected):
    triples = {tuple(t) for t in offline.extract_text(sentence).triples}
    assert set(expected) <= triples, triples


def test_offline_drops_pronouns_and_determiners(offline):
    result = offline.extract_text("She was born in Paris. The Journal of Mathematical Physics is published by the American Institute of Physics.")
    assert all(t[0].lower() not in {"she", "he", "it"} for t in result.triples)
    assert ["Journal of Mathematical Physics", "is published by", "American Institute of Physics"] in result.triples
    assert "Journal of Mathematical Physics" in result.named_entities
    assert "American Institute of Physics" in result.named_entities
    assert not any(e.lower().startswith(("the ", "a ")) or e.lower() in {"she", "it"} for e in result.named_entities)
    assert "the American Institute" not in result.named_entities and "American Institute" not in result.named_entities


def test_offline_invents_nothing_on_real_passages(offline):
    corpus = Path(DATASETS) / "2wikimultihopqa" / "corpus.json"
    if not corpus.exists():
        pytest.skip("2WikiMultihopQA corpus not found")
    docs = json.loads(corpus.read_text(encoding="utf-8"))[:60]
    passages = [PassageIn(title=d["title"], text=d["text"]) for d in docs]
    results = offline.extract(passages)
    squash = lambda s: re.sub(r"\s+", " ", s)  # noqa: E731
    total = 0
    for passage, result in zip(passages, results):
        text = squash(passage.full_text)
        assert result is not None
        for subject, _predicate, obj in result.triples:
            assert subject in text and obj in text, (subject, obj)
            total += 1
        assert all(squash(e) in text for e in result.named_entities)
    assert total > 100  # it does find facts: a few per passage
    assert offline.name == "offline:en_core_web_sm-3.8.0:v2"


def test_offline_query_entities(offline):
    # names only: a generic noun chunk ("university") would seed PPR as strongly as the name
    assert offline.query_entities("Which university does Thomas Südhof work at?") == ["Thomas Südhof"]
    assert offline.query_entities("Who directed Inception?") == ["Inception"]
    # chunks that hold a proper noun count as names, even where NER misses them
    assert "Alzheimer's disease" in offline.query_entities("Which Stanford professor studies Alzheimer's disease?")
    # with no name at all, every noun chunk (question words dropped)
    generic = offline.query_entities("What is the capital of the country where the river flows?")
    assert generic == ["capital", "country", "river"]


def test_offline_query_entities_give_each_name_a_choice_offers(offline):
    question = "Which film has the director born earlier, The Korean Wedding Chest or True To The Navy?"
    doc = offline.nlp(question)
    # the recogniser reads the two titles as one name, which links to one of them only
    assert [e.text for e in doc.ents] == ["The Korean Wedding Chest or True To The Navy"]
    assert offline.query_entities(question) == ["Korean Wedding Chest", "True To The Navy"]
    # a trailing "or" kept by the recogniser goes; a title-cased "Or" or "And" is part of a name
    other = "Which film has the director born later, Romance On The Run or The Palace Of Angels?"
    assert offline.query_entities(other)[0] == "Romance On The Run"
    assert "Fat Man And Little Boy" in offline.query_entities(
        "Which film has the director who is older, Amira & Sam or Fat Man And Little Boy?")
    # a passage's names stay as the recogniser reads them (its extraction, and so the graph, are unchanged)
    assert "Korean Wedding Chest or True To The Navy" in offline.doc_entities(doc)


def test_offline_query_entities_read_a_run_of_title_cased_words_as_a_name(offline):
    question = "Which film has the director born first, Sins Of Madeleine or Captain Apache?"
    # the recogniser misses the first title (and cuts it into chunks); the run of title-cased words holds it
    assert "Sins Of Madeleine" not in [e.text for e in offline.nlp(question).ents]
    assert offline.query_entities(question)[-2:] == ["Captain Apache", "Sins Of Madeleine"]
    assert "Two Brides And A Baby" in offline.query_entities(
        "Which film came out earlier, Two Brides And A Baby or Dinner At The Ritz?")
    # a run inside a name already found adds nothing ("Kim Jong" of "Kim Jong-chul"), nor does a question's
    # first word ("Which Stanford ...") or a run of one word
    assert offline.query_entities("Who is the wife of Kim Jong-chul?") == ["Kim Jong-chul"]
    assert offline.query_entities("Which Stanford professor studies the brain?") == ["Stanford", "Stanford professor"]


@pytest.fixture(scope="module")
def full_pipeline() -> OfflineExtractor:
    """The offline extractor over spaCy's whole pipeline, every pipe loaded and run (the lemmatizer too)."""
    import spacy

    extractor = OfflineExtractor()
    extractor._nlp = spacy.load(SPACY_MODEL)
    return extractor


def test_offline_pipeline_leaves_out_only_unread_pipes(offline, full_pipeline):
    assert set(full_pipeline.nlp.component_names) - set(offline.nlp.component_names) == set(UNUSED_PIPES)
    assert "lemmatizer" in full_pipeline.nlp.pipe_names and "lemmatizer" not in offline.nlp.pipe_names


def dataset_questions() -> list[str]:
    """The questions of musique_train and 2wiki (140), or a skip."""
    questions = [
        item["question"]
        for name in ("musique_train", "2wikimultihopqa")
        if (Path(DATASETS) / name / "questions.json").exists()
        for item in json.loads((Path(DATASETS) / name / "questions.json").read_text(encoding="utf-8"))
    ]
    if not questions:
        pytest.skip("musique_train and 2wikimultihopqa questions not found")
    return questions


def test_offline_query_entities_equal_the_full_pipeline(offline, full_pipeline):
    questions = dataset_questions()
    differ = [(q, offline.query_entities(q), full_pipeline.query_entities(q)) for q in questions]
    differ = [d for d in differ if d[1] != d[2]]
    assert not differ, f"{len(differ)} of {len(questions)} questions: {differ[:3]}"


def test_offline_passage_extraction_equals_the_full_pipeline(offline, full_pipeline):
    corpus = Path(DATASETS) / "musique_train" / "corpus.json"
    if not corpus.exists():
        pytest.skip("musique_train corpus not found")
    docs = json.loads(corpus.read_text(encoding="utf-8"))[::6]  # 315 passages spread over the corpus
    passages = [PassageIn(title=d["title"], text=d["text"]) for d in docs]
    assert offline.extract(passages) == full_pipeline.extract(passages)


# what `hippo` does (cli.main): spaCy without its command line, thinc without torch; then the other backend
COMMAND_LINE_PROCESS = """
import json, sys
from hippo_neo4j.extract import offline
offline.THINC_IMPORTS_TORCH = False
extractor = offline.OfflineExtractor()
entities = [extractor.query_entities(q) for q in json.load(sys.stdin)]
loaded = {name: name in sys.modules for name in ("spacy.cli", "typer", "weasel", "torch")}
import spacy, thinc.compat
from hippo_neo4j.encode import load_encoder
vector = load_encoder("st:all-MiniLM-L6-v2").encode_queries(["Who directed Inception?"])[0].tolist()
json.dump({"entities": entities, "loaded": loaded, "thinc_torch": thinc.compat.has_torch, "vector": vector,
           "download": spacy.cli.download.__module__, "spacy_cli": "spacy.cli" in sys.modules}, sys.stdout)
"""


def test_command_line_spacy_gives_the_full_pipelines_entities_and_leaves_torch_to_the_other_backend(full_pipeline):
    """The query entities of the 140 questions from a process that loads spaCy as ``hippo`` does (without its
    command line, thinc without torch) equal those of spaCy's own ``spacy.load`` of the whole pipeline in this
    process (thinc with torch where installed); torch is then imported by sentence-transformers as usual, with
    the same vector, and ``spacy.cli`` at its first use."""
    import numpy as np

    from hippo_neo4j.encode import load_encoder

    questions = dataset_questions()
    done = subprocess.run([sys.executable, "-c", COMMAND_LINE_PROCESS], input=json.dumps(questions),
                          capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    differ = [(q, a, full_pipeline.query_entities(q)) for q, a in zip(questions, found["entities"])]
    differ = [d for d in differ if d[1] != d[2]]
    assert not differ, f"{len(differ)} of {len(questions)} questions: {differ[:3]}"
    assert found["loaded"] == {"spacy.cli": False, "typer": False, "weasel": False, "torch": False}
    assert found["thinc_torch"] is False
    assert found["download"] == "spacy.cli.download" and found["spacy_cli"]
    expected = load_encoder("st:all-MiniLM-L6-v2").encode_queries(["Who directed Inception?"])[0]
    assert np.array_equal(np.asarray(found["vector"], dtype=np.float32), expected)


# -- the reader and EM / F1 ---------------------------------------------------------------------------------------


def test_reader_answers_through_the_fake_server(llm_env, fake_openai):
    fake_openai.responder = lambda req: (
        "Passage 1 says Thomas Südhof works at Stanford University.\n"
        "So the professor is at Stanford.\n**Answer:** Stanford University."
    )
    reader = Reader(settings_for(fake_openai))
    result = reader.answer("Where does Thomas Südhof work?", [SAMPLE, "Stanford is in California."])
    assert result.answer == "Stanford University" and result.parsed
    assert result.reasoning.startswith("Passage 1 says")
    request = fake_openai.requests[-1]
    assert "response_format" not in request and request["temperature"] == 0
    prompt = request["messages"][-1]["content"]
    assert "[1] Thomas Südhof\nThomas Südhof works at Stanford University." in prompt
    assert "[2] Stanford is in California." in prompt and "Question: Where does Thomas Südhof work?" in prompt


def test_parse_answer_variants():
    assert parse_answer("Reasoning.\nAnswer: 1879").answer == "1879"
    assert parse_answer("<think>Answer: wrong</think>step 1\nANSWER : Ulm, Germany.").answer == "Ulm, Germany"
    assert parse_answer("Answer: first\nmore thought\nAnswer: second").answer == "second"
    assert parse_answer("Answer: Washington D.C.").answer == "Washington D.C."
    unparsed = parse_answer("I think it is Paris")
    assert (unparsed.answer, unparsed.parsed) == ("I think it is Paris", False)


def test_exact_match_and_f1():
    assert normalize_answer("  The  Eiffel-Tower! ") == "eiffeltower"
    assert exact_match("The Eiffel Tower.", ["eiffel tower"]) == 1.0
    assert exact_match("Eiffel Tower, Paris", "Eiffel Tower") == 0.0
    assert exact_match("USA", ["United States", "USA"]) == 1.0  # max over aliases
    assert f1("Paris France", "Paris") == pytest.approx(2 / 3)
    assert f1("an apple pie", ["pie", "apple pie"]) == 1.0
    assert f1("London", ["Paris"]) == 0.0
    assert f1("the", "a") == 1.0  # both normalise to nothing
    assert f1("", ["Paris"]) == 0.0


def test_llm_failures_carry_raw_and_failure_type(llm_env, fake_openai):
    fake_openai.script(Reply(content='{"named_entities": ["A"]}'), Reply(content="no json here"))
    extractor = LLMExtractor(settings_for(fake_openai, concurrency=1))
    assert extractor.extract([SAMPLE]) == [None]
    [failure] = extractor.failures
    assert isinstance(failure, ExtractionFailure)
    assert failure.error.startswith("OpenIE answer not parseable") and failure.raw == "no json here"
