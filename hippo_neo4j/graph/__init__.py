"""The graph in Neo4j: the store every component talks through, the indexing pipeline (normalise → write →
link synonyms), facts, namespaces and deletion, and the GDS projections that PPR walks."""
