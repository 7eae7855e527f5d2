"""hippo-neo4j: HippoRAG long-term memory for LLM applications, native to Neo4j and GDS."""

__version__ = "0.1.0"
