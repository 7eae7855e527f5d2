"""Adapters into other frameworks: ``graphrag`` (neo4j-graphrag-python's Retriever; extra ``neo4j-graphrag``) and
``langchain`` (a LangChain retriever; extra ``langchain``)."""
