"""The local Neo4j + GDS server: assembled from Maven Central with the shipped ``pom.xml``, configured and
started by ``hippo neo4j start`` (``server``)."""
