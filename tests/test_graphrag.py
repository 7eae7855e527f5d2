"""neo4j-graphrag-python's ``GraphRAG`` answering from :class:`HippoRetriever`, end to end: the real server,
its ``OpenAILLM`` pointed at the fake OpenAI server (to read the prompt it sent) and at the real llama.cpp
server (a real answer)."""

from __future__ import annotations

import pytest
from neo4j_graphrag.generation import GraphRAG
from neo4j_graphrag.llm import OpenAILLM
from neo4j_graphrag.types import RetrieverResult

from hippo_neo4j.errors import ConfigError
from hippo_neo4j.integrations.graphrag import HippoRetriever

from .conftest import NoExtractor
from .llama_server import LlamaServer, llama_server  # noqa: F401 - the session fixture
from .serving import entities_of, indexed_namespace


@pytest.fixture(scope="module")
def corpus(connection, driver):
    yield from indexed_namespace(connection, driver, "graphrag")


def test_retriever_search_returns_hipporag_passages(driver, corpus):
    ns, docs = corpus
    retriever = HippoRetriever(driver, namespace=ns, mode="hipporag1", top_k=4, extractor=NoExtractor())
    doc = docs[11]
    result = retriever.search(query_text=doc.text[:200], entities=entities_of(doc))
    assert isinstance(result, RetrieverResult) and len(result.items) == 4
    assert result.metadata["mode"] == "hipporag1" and result.metadata["namespace"] == ns
    assert result.metadata["explanation"]["linked"] and result.metadata["cypher"].startswith("//")
    ids = [item.metadata["id"] for item in result.items]
    expected = retriever.memory.query(doc.text[:200], mode="hipporag1", top_k=4, entities=entities_of(doc))
    assert ids == [p.id for p in expected.passages]
    assert result.items[0].content.startswith(expected.passages[0].title)
    assert len(retriever.search(query_text=doc.text[:200], top_k=2, mode="dense").items) == 2
    with pytest.raises(ConfigError):
        HippoRetriever(driver, namespace=ns, mode="no-such-mode")


def test_graphrag_prompt_carries_the_retrieved_passages(driver, corpus, fake_openai):
    ns, docs = corpus
    doc = docs[2]
    fake_openai.responder = lambda request: "The answer, from the context."
    rag = GraphRAG(retriever=HippoRetriever(driver, namespace=ns, mode="dense", top_k=3),
                   llm=OpenAILLM(model_name="fake-model", base_url=fake_openai.base_url, api_key="placeholder"))
    answer = rag.search(query_text=doc.text[:150], retriever_config={"top_k": 3}, return_context=True)
    assert answer.answer == "The answer, from the context."
    assert [i.metadata["id"] for i in answer.retriever_result.items][0] == doc.id
    prompt = "\n".join(str(m.get("content")) for m in fake_openai.requests[-1]["messages"])
    for item in answer.retriever_result.items:
        assert item.metadata["id"] and item.content.split("\n", 1)[1][:80] in prompt


def test_graphrag_answers_with_a_real_llm(driver, corpus, llama_server: LlamaServer):
    ns, docs = corpus
    doc = docs[0]
    rag = GraphRAG(retriever=HippoRetriever(driver, namespace=ns, mode="hipporag2", top_k=2),
                   llm=OpenAILLM(model_name=llama_server.model, base_url=llama_server.base_url, api_key="placeholder",
                                 model_params={"max_tokens": 48, "temperature": 0}))
    answer = rag.search(query_text=f"What is {doc.title}?", return_context=True)
    assert isinstance(answer.answer, str) and answer.answer.strip()
    assert doc.id in [i.metadata["id"] for i in answer.retriever_result.items]


def test_langchain_retriever_returns_the_same_passages(connection, driver, corpus):
    from hippo_neo4j import HippoRAG
    from hippo_neo4j.integrations.langchain import HippoLangChainRetriever

    ns, docs = corpus
    memory = HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor())
    retriever = HippoLangChainRetriever(memory=memory, mode="dense", top_k=3)
    found = retriever.invoke(docs[4].text[:200])
    expected = memory.query(docs[4].text[:200], mode="dense", top_k=3)
    assert [d.metadata["id"] for d in found] == [p.id for p in expected.passages]
    assert found[0].metadata["id"] == docs[4].id and found[0].page_content.startswith(docs[4].title)
    assert found[0].metadata["cypher"].startswith("//")
