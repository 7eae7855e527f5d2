"""Every namespace is bound to its encoder: recorded when first indexed, enforced on index and query, legacy
namespaces recognised as all-MiniLM-L6-v2, and `hippo reembed` equal to a fresh index with the new encoder."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from hippo_neo4j.cli import cli
from hippo_neo4j.corpus import load_openie
from hippo_neo4j.encode import Encoder, shared_encoder
from hippo_neo4j.errors import ConfigError

from .conftest import DATASETS
from .graph_dump import assert_same_graph, rows, snapshot
from .test_core import PATH_CORPUS, P

QUESTION = "Which Stanford professor works on Alzheimer's?"


def _vectors(driver, ns: str) -> dict[tuple[str, str], np.ndarray]:
    found = rows(
        driver,
        "MATCH (n) WHERE (n:Passage OR n:Phrase OR n:Fact) AND n.ns = $ns AND n.embedding IS NOT NULL "
        "RETURN labels(n)[0] AS kind, coalesce(n.id, n.text) AS key, n.embedding AS e",
        ns=ns,
    )
    return {(r["kind"], r["key"]): np.asarray(r["e"]) for r in found}


def test_a_namespace_is_bound_to_its_encoder_and_refuses_another(memory_factory):
    minilm = shared_encoder("all-MiniLM-L6-v2")
    memory = memory_factory(encoder=minilm)
    assert memory.encoder_binding() is None
    memory.index(PATH_CORPUS)
    bound = memory.encoder_binding()
    assert bound == {"name": "all-MiniLM-L6-v2", "dimension": 384, "fingerprint": minilm.fingerprint, "legacy": False}

    other = memory_factory(memory.namespace, encoder=shared_encoder("bge-small-en-v1.5"))
    for attempt in (lambda: other.query(QUESTION, mode="dense"), lambda: other.index(PATH_CORPUS[:1]),
                    lambda: other.query(QUESTION, mode="hipporag1", entities=["Stanford"])):
        with pytest.raises(ConfigError) as err:
            attempt()
        message = str(err.value)
        assert "'all-MiniLM-L6-v2'" in message and "'bge-small-en-v1.5'" in message
        assert "HIPPO_ENCODER=all-MiniLM-L6-v2" in message and f"hippo reembed --namespace {memory.namespace}" in message
    # the same model on the sentence-transformers backend shares the namespace (vectors agree to 0.99999)
    same_model = memory_factory(memory.namespace, encoder=shared_encoder("st:all-MiniLM-L6-v2"))
    assert [p.id for p in same_model.query(QUESTION, mode="dense", top_k=3).passages] == \
        [p.id for p in memory.query(QUESTION, mode="dense", top_k=3).passages]


def test_a_namespace_indexed_before_encoders_were_recorded_is_all_minilm(memory_factory, driver):
    memory = memory_factory(encoder=shared_encoder("all-MiniLM-L6-v2"))
    memory.index(PATH_CORPUS)
    driver.execute_query(  # what an older version left: no encoder on the namespace node
        "MATCH (n:HippoNamespace {name: $ns}) REMOVE n.encoder, n.encoderDimension, n.encoderFingerprint",
        ns=memory.namespace,
    )
    legacy = memory_factory(memory.namespace, encoder=shared_encoder("all-MiniLM-L6-v2"))
    assert legacy.encoder_binding()["legacy"] and legacy.encoder_binding()["name"] == "all-MiniLM-L6-v2"
    assert legacy.query(QUESTION, mode="dense", top_k=2).passages
    with pytest.raises(ConfigError, match="indexed before encoders were recorded"):
        memory_factory(memory.namespace, encoder=shared_encoder("bge-small-en-v1.5")).query(QUESTION, mode="dense")
    legacy.index([P("new", "A passage written after the upgrade.", ("passage", "written after", "upgrade"))])
    # the next write records the encoder
    assert not legacy.encoder_binding()["legacy"]


@pytest.fixture(scope="module")
def corpus():
    """60 musique passages with their GPT-3.5 extraction, and the path-finding corpus."""
    return load_openie(DATASETS / "musique_train" / "openie_gpt-3.5-turbo-1106.json")[:60] + PATH_CORPUS


def test_reembed_equals_a_fresh_index_with_the_new_encoder(memory_factory, connection, driver, corpus):
    old = memory_factory(encoder=shared_encoder("all-MiniLM-L6-v2"))
    old.index(corpus)
    before = snapshot(driver, old.namespace)
    fresh = memory_factory(encoder=shared_encoder("bge-small-en-v1.5"))
    fresh.index(corpus)

    env = {"HIPPO_NEO4J_URI": connection.uri, "HIPPO_NEO4J_PASSWORD": connection.password.get_secret_value()}
    out = CliRunner().invoke(cli, ["reembed", "--namespace", old.namespace, "--encoder", "bge-small-en-v1.5", "--json"],
                             env=env, catch_exceptions=False)
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["before"]["name"] == "all-MiniLM-L6-v2" and report["encoder"] == "bge-small-en-v1.5"
    assert report["passages"] == len(corpus) and report["phrases"] == len(before["phrases"])

    after, want = snapshot(driver, old.namespace), snapshot(driver, fresh.namespace)
    assert_same_graph(after, want, synonym_tol=5e-3)
    assert len(after["synonyms"]) > len(before["synonyms"]) > 0  # bge's cosines run higher: more synonym edges
    got, expected = _vectors(driver, old.namespace), _vectors(driver, fresh.namespace)
    assert got.keys() == expected.keys()
    assert min(float(got[k] @ expected[k]) for k in got) > 0.9999
    reembedded = memory_factory(old.namespace, encoder=shared_encoder("bge-small-en-v1.5"))
    assert reembedded.encoder_binding()["name"] == "bge-small-en-v1.5"
    assert [p.id for p in reembedded.query(QUESTION, mode="hipporag2", top_k=3).passages] == \
        [p.id for p in fresh.query(QUESTION, mode="hipporag2", top_k=3).passages]


class EightDimensions(Encoder):
    """A real (if useless) encoder of another dimension: the first letters' codes."""

    name = "eight-d"

    @property
    def dimension(self) -> int:
        return 8

    @property
    def fingerprint(self) -> str:
        return "0" * 64

    def _embed(self, texts):
        return np.array([[ord(c) for c in (t + "........")[:8]] for t in texts], dtype=np.float32)


def test_reembed_into_another_dimension_gives_the_namespace_indexes_of_that_dimension(memory_factory):
    memory = memory_factory()
    memory.index(PATH_CORPUS)
    neighbour = memory_factory()
    neighbour.index(PATH_CORPUS)
    kept = [(p.id, p.score) for p in neighbour.query(QUESTION, mode="dense").passages]
    eight = EightDimensions()
    memory.reembed(eight)
    assert memory.encoder_binding()["name"] == "eight-d" and memory.store.index_dimension() == 8
    # dense through the new index: the passages of the five best exact cosines to the 8-d query vector
    query = eight.encode_queries([QUESTION])[0]
    vectors = eight.encode([d["text"] for d in PATH_CORPUS])
    cosines = vectors @ query / np.linalg.norm(vectors, axis=1) / np.linalg.norm(query)
    found = memory.query(QUESTION, mode="dense", top_k=5).passages
    assert np.allclose([p.score for p in found], sorted(cosines, reverse=True)[:5], atol=1e-5)
    # a client with the namespace's old encoder is told to use the new one
    with pytest.raises(ConfigError, match="holds 8-d vectors but encoder"):
        memory_factory(memory.namespace)
    # the other namespace keeps its 384-d indexes and its answers
    assert neighbour.store.index_dimension() == 384
    assert [(p.id, p.score) for p in neighbour.query(QUESTION, mode="dense").passages] == kept
