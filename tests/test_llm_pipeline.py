"""The LLM path end to end on the real server: the real openai client against a local fake endpoint
that replays GPT-3.5's recorded MuSiQue extractions, compared with `hippo import-openie` of the same file."""

from __future__ import annotations

import json
import uuid

from click.testing import CliRunner

from hippo_neo4j.cli import cli

from .fake_openai import FakeOpenAI, MusiqueReplay
from .graph_dump import assert_same_graph, snapshot


def _env(connection, ns, fake=None):
    env = {
        "HIPPO_NEO4J_URI": connection.uri,
        "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value(),
        "HIPPO_NAMESPACE": ns,
    }
    if fake is not None:
        env.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-test-not-a-real-key", HIPPO_LLM_MODEL="gpt-3.5-turbo-1106")
    return env


def test_llm_path_builds_the_same_graph_as_import_openie(llm_env, musique_docs, connection, driver, tmp_path):
    docs = [d for d in musique_docs[:40] if d["extracted_triples"]][:30]
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps([{"title": d["title"], "text": d["text"]} for d in docs]))
    subset = tmp_path / "openie_subset.json"
    subset.write_text(json.dumps({"docs": docs}))
    via_llm, via_file = f"llm-{uuid.uuid4().hex[:6]}", f"file-{uuid.uuid4().hex[:6]}"
    runner = CliRunner()
    try:
        with FakeOpenAI(MusiqueReplay(docs)) as fake:
            out = runner.invoke(cli, ["index", str(corpus), "--extractor", "llm", "--json"], env=_env(connection, via_llm, fake))
            assert out.exit_code == 0, out.output
            report = json.loads(out.stdout)
            assert report["indexed"] == 30 and report["extraction"]["llm"]["calls"] == 60
            assert report["extraction"]["cache"] == {"cached": 0, "new": 30, "failed": 0}
            assert "sk-test-not-a-real-key" not in out.output
            calls = len(fake.requests)

            # re-indexing costs no LLM call (the cache), and writes nothing (same content)
            again = json.loads(runner.invoke(cli, ["index", str(corpus), "--extractor", "llm", "--json"],
                                             env=_env(connection, via_llm, fake)).stdout)
            assert len(fake.requests) == calls and again["unchanged"] == 30

            # a dry run estimates without calling
            dry = runner.invoke(cli, ["index", str(corpus), "--extractor", "llm", "--dry-run", "--json"],
                                env=_env(connection, via_llm, fake))
            assert json.loads(dry.stdout)["cached"] == 30 and len(fake.requests) == calls

        out = runner.invoke(cli, ["import-openie", str(subset), "--json"], env=_env(connection, via_file))
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout)["indexed"] == 30

        llm_graph, file_graph = snapshot(driver, via_llm), snapshot(driver, via_file)
        assert llm_graph["relations"] and llm_graph["synonyms"]
        assert_same_graph(llm_graph, file_graph, synonym_tol=1e-4)
    finally:
        for ns in (via_llm, via_file):
            runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=_env(connection, ns))


def test_ask_answers_from_retrieved_passages_through_the_fake_llm(llm_env, musique_docs, connection, tmp_path):
    docs = [d for d in musique_docs if d["title"] in {"Bubye River", "Victoria Falls"}]
    assert len(docs) == 2
    subset = tmp_path / "openie.json"
    subset.write_text(json.dumps({"docs": docs}))
    ns = f"ask-{uuid.uuid4().hex[:6]}"
    runner = CliRunner()
    replay = MusiqueReplay(docs)

    def responder(request):
        if "numbered passages" in request["messages"][0]["content"]:
            return "The Bubye River is in Zimbabwe, whose best-known waterfall is Victoria Falls.\nAnswer: Victoria Falls"
        return replay(request)

    try:
        assert runner.invoke(cli, ["import-openie", str(subset)], env=_env(connection, ns)).exit_code == 0
        with FakeOpenAI(responder) as fake:
            out = runner.invoke(cli, ["ask", "What is the name of the waterfall in the country where the Bubye River is found?", "--json", "--top-k", "2"],
                                env=_env(connection, ns, fake))
            assert out.exit_code == 0, out.output
            data = json.loads(out.stdout)
            assert data["answer"] == "Victoria Falls"
            assert {p["title"] for p in data["retrieval"]["passages"]} == {d["title"] for d in docs}
            reader_prompt = fake.requests[-1]["messages"][-1]["content"]
            assert "Bubye River" in reader_prompt and "Question: What is the name of the waterfall" in reader_prompt

        no_llm = runner.invoke(cli, ["ask", "What is the name of the waterfall in the country where the Bubye River is found?",
                                     "--entities", "Bubye River"], env=_env(connection, ns))
        assert no_llm.exit_code == 0 and "no reader configured" in no_llm.output
        assert "Bubye River" in no_llm.output
    finally:
        runner.invoke(cli, ["drop-namespace", ns, "--yes"], env=_env(connection, ns))
