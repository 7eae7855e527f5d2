"""Adapters into other frameworks: ``graphrag`` (neo4j-graphrag-python's Retriever; extra ``neo4j-graphrag``),
``langchain`` (a LangChain retriever; extra ``langchain``) and ``llama_index`` (a LlamaIndex retriever; extra
``llama-index``). ``passages`` is what the LangChain and LlamaIndex retrievers make of a result."""
