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
from .serving import entities_of, indexed_namespace, musique_passages


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


def llama_index_retriever(**kwargs):
    from hippo_neo4j.integrations.llama_index import HippoLlamaIndexRetriever

    return HippoLlamaIndexRetriever(**kwargs)


@pytest.mark.parametrize("mode", ["dense", "entity-ppr"])
def test_llama_index_retriever_returns_the_query_passages(connection, driver, corpus, mode):
    from llama_index.core.schema import MetadataMode, NodeWithScore, TextNode

    from hippo_neo4j import HippoRAG
    from hippo_neo4j.integrations.langchain import HippoLangChainRetriever

    ns, docs = corpus
    memory = HippoRAG(connection, namespace=ns, driver=driver, extractor=None)  # entity-ppr: spaCy query NER
    query = docs[7].text[:200]
    # a client's first graph query scores the passages' cosines on the server (float32), the next ones with the
    # vectors it then holds: the walk's seeds differ by about 1e-8, so the comparison starts after that one
    memory.query(query, mode=mode, top_k=4)
    found = llama_index_retriever(memory=memory, mode=mode, top_k=4).retrieve(query)
    expected = memory.query(query, mode=mode, top_k=4)
    assert all(isinstance(n, NodeWithScore) and isinstance(n.node, TextNode) for n in found)
    # GDS sums PPR mass in parallel: a walk's scores agree between two runs to about 1e-7, not to the last bit
    assert [n.node.node_id for n in found] == [p.id for p in expected.passages]
    assert [n.score for n in found] == pytest.approx([p.score for p in expected.passages], rel=1e-6)
    assert len(found) == 4 and found[0].node.node_id == docs[7].id
    for n, p in zip(found, expected.passages):
        meta = n.node.metadata
        assert (meta["id"], meta["title"], meta["mode"]) == (p.id, p.title, expected.mode)
        assert meta["score"] == n.score
        assert meta["via"] == [c.phrase for c in p.contributors[:3]] and meta["filled"] == p.filled
        assert meta["cypher"].startswith("//")
        assert n.node.text == f"{p.title}\n{p.text}"
        # an LLM or an embedder is given the passage alone, not the metadata (the Cypher statement above all)
        assert n.node.get_content(metadata_mode=MetadataMode.LLM) == n.node.text
        assert n.node.get_content(metadata_mode=MetadataMode.EMBED) == n.node.text
    if mode == "entity-ppr":
        assert any(n.node.metadata["via"] for n in found)
    # the LangChain retriever's Documents: the same content and metadata, from the one conversion
    langchain = HippoLangChainRetriever(memory=memory, mode=mode, top_k=4).invoke(query)
    assert [(d.page_content, {**d.metadata, "score": None}) for d in langchain] == \
        [(n.node.text, {**n.node.metadata, "score": None}) for n in found]
    assert [d.metadata["score"] for d in langchain] == pytest.approx([n.score for n in found], rel=1e-6)


def test_llama_index_retriever_top_k_async_and_its_own_client(connection, driver, corpus):
    import asyncio

    from hippo_neo4j import HippoRAG
    from hippo_neo4j.errors import ConfigError

    ns, docs = corpus
    memory = HippoRAG(connection, namespace=ns, driver=driver, extractor=NoExtractor())
    query = docs[4].text[:200]
    retriever = llama_index_retriever(memory=memory, mode="bm25", top_k=2)
    found = retriever.retrieve(query)
    assert len(found) == 2 and found[0].node.node_id == docs[4].id
    assert len(llama_index_retriever(memory=memory, mode="dense", top_k=6).retrieve(query)) == 6

    async def concurrently():
        return await asyncio.gather(*(retriever.aretrieve(query) for _ in range(3)))

    for nodes in asyncio.run(concurrently()):
        assert [(n.node.node_id, n.score, n.node.text, n.node.metadata) for n in nodes] == \
            [(n.node.node_id, n.score, n.node.text, n.node.metadata) for n in found]

    own = llama_index_retriever(connection=connection, namespace=ns, extractor=NoExtractor(), mode="dense", top_k=3)
    try:
        assert own.memory.namespace == ns
        assert [n.node.node_id for n in own.retrieve(query)] == [p.id for p in memory.query(query, mode="dense", top_k=3).passages]
    finally:
        own.close()
    with pytest.raises(ConfigError):
        llama_index_retriever(memory=memory, mode="no-such-mode")
    with pytest.raises(ConfigError):
        llama_index_retriever(memory=memory, namespace="other")


def test_llama_index_retriever_takes_llama_index_metadata_filters(memory_factory):
    from llama_index.core.vector_stores.types import MetadataFilter, MetadataFilters

    memory = memory_factory()
    docs = musique_passages(12)
    for i, doc in enumerate(docs):
        doc.metadata = {"user": f"u{i % 3}", "year": 2000 + i,
                        "tag": ["even" if i % 2 == 0 else "odd"] + (["third"] if i % 3 == 0 else [])}
    memory.index(docs)
    query = docs[9].text[:200]

    def ids(filters, top_k=5):
        return [n.node.node_id for n in llama_index_retriever(memory=memory, mode="dense", top_k=top_k,
                                                              filters=filters).retrieve(query)]

    # contains (a list holds the value) and in, as the same filter in hippo-neo4j's own form
    theirs = MetadataFilters(filters=[MetadataFilter(key="tag", value="odd", operator="contains"),
                                      MetadataFilter(key="user", value=["u0", "u1"], operator="in")])
    found = ids(theirs)
    assert found == ids({"tag": "odd", "user": {"in": ["u0", "u1"]}})
    assert sorted(found) == sorted(docs[i].id for i in (1, 3, 7, 9)) and found[0] == docs[9].id
    # ranges, all (every value in the list) and a nested group, joined by and: only passage 6 passes
    theirs = MetadataFilters(filters=[
        MetadataFilter(key="user", value="u0"), MetadataFilter(key="year", value=2003, operator=">="),
        MetadataFilters(filters=[MetadataFilter(key="tag", value=["even", "third"], operator="all")])])
    assert ids(theirs) == [docs[6].id]
    # what hippo-neo4j cannot honour is refused when the retriever is made, naming it
    with pytest.raises(ConfigError, match="'!='"):
        llama_index_retriever(memory=memory, filters=MetadataFilters(
            filters=[MetadataFilter(key="user", value="u0", operator="!=")]))
    with pytest.raises(ConfigError, match="'or'"):
        llama_index_retriever(memory=memory, filters=MetadataFilters(
            filters=[MetadataFilter(key="user", value="u0"), MetadataFilter(key="user", value="u1")], condition="or"))


def test_llama_index_retriever_on_an_empty_namespace_returns_nothing_like_langchain(memory_factory):
    import asyncio

    from hippo_neo4j.integrations.langchain import HippoLangChainRetriever

    memory = memory_factory()
    assert HippoLangChainRetriever(memory=memory, mode="dense").invoke("anything at all") == []
    retriever = llama_index_retriever(memory=memory, mode="dense")
    assert retriever.retrieve("anything at all") == []
    assert asyncio.run(retriever.aretrieve("anything at all")) == []


def test_llama_index_retriever_without_the_extra_names_it(monkeypatch):
    import importlib
    import sys

    monkeypatch.delitem(sys.modules, "hippo_neo4j.integrations.llama_index", raising=False)
    monkeypatch.setitem(sys.modules, "llama_index.core.retrievers", None)  # as if llama-index-core were missing
    with pytest.raises(ImportError, match=r"pip install 'hippo-neo4j\[llama-index\]'"):
        importlib.import_module("hippo_neo4j.integrations.llama_index")


def test_every_retriever_takes_filters_and_gives_each_passage_its_metadata(memory_factory, driver):
    from hippo_neo4j.integrations.langchain import HippoLangChainRetriever

    memory = memory_factory()
    docs = musique_passages(12)
    for i, doc in enumerate(docs):
        doc.metadata = {"user": f"u{i % 3}", "year": 2000 + i}
    memory.index(docs)
    allowed = {d.id for d in docs if d.metadata["user"] == "u2" and d.metadata["year"] > 2003}
    filters = {"user": "u2", "year": {">": 2003}}
    query = docs[5].text[:200]
    found = {
        "langchain": [d.metadata for d in HippoLangChainRetriever(memory=memory, mode="dense", top_k=5,
                                                                   filters=filters).invoke(query)],
        "llama_index": [n.node.metadata for n in llama_index_retriever(memory=memory, mode="dense", top_k=5,
                                                                         filters=filters).retrieve(query)],
        "graphrag": [i.metadata for i in HippoRetriever(driver, namespace=memory.namespace, mode="dense", memory=memory,
                                                        filters=filters).search(query_text=query, top_k=5).items],
    }
    for name, items in found.items():
        assert {m["id"] for m in items} == allowed, name
        assert all(m["metadata"] == next(d.metadata for d in docs if d.id == m["id"]) for m in items), name
    # a search's own filters replace the retriever's
    other = HippoRetriever(driver, namespace=memory.namespace, mode="dense", memory=memory, filters=filters)
    assert {i.metadata["id"] for i in other.search(query_text=query, top_k=5, filters={"user": "u0"}).items} == \
        {d.id for d in docs if d.metadata["user"] == "u0"}
    with pytest.raises(ConfigError, match="filter 'user': unknown operator"):
        llama_index_retriever(memory=memory, filters={"user": {"~": "u1"}})
