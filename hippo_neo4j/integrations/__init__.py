"""Adapters into other frameworks: ``graphrag`` (neo4j-graphrag-python's Retriever; extra ``neo4j-graphrag``)."""
