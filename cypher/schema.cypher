// hippo-neo4j schema of the database: applied idempotently when a client connects (every statement is IF NOT
// EXISTS). Each namespace's vector and full-text indexes are in namespace_schema.cypher.
CREATE CONSTRAINT hippo_passage_id IF NOT EXISTS FOR (p:Passage) REQUIRE (p.ns, p.id) IS UNIQUE;
CREATE CONSTRAINT hippo_phrase_text IF NOT EXISTS FOR (p:Phrase) REQUIRE (p.ns, p.text) IS UNIQUE;
CREATE CONSTRAINT hippo_fact_id IF NOT EXISTS FOR (f:Fact) REQUIRE (f.ns, f.id) IS UNIQUE;
CREATE CONSTRAINT hippo_namespace_name IF NOT EXISTS FOR (n:HippoNamespace) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT hippo_document_id IF NOT EXISTS FOR (d:Document) REQUIRE (d.ns, d.id) IS UNIQUE;
CREATE CONSTRAINT hippo_facet IF NOT EXISTS FOR (f:HippoFacet) REQUIRE (f.ns, f.key, f.value) IS UNIQUE;
CREATE CONSTRAINT hippo_projection_lock IF NOT EXISTS FOR (l:HippoProjectionLock) REQUIRE (l.ns, l.kind) IS UNIQUE;
CREATE INDEX hippo_passage_ns IF NOT EXISTS FOR (p:Passage) ON (p.ns);
CREATE INDEX hippo_phrase_ns IF NOT EXISTS FOR (p:Phrase) ON (p.ns);
// a phrase by its key without accents, where that differs from its text (cypher/phrase_matches.cypher)
CREATE INDEX hippo_phrase_fold IF NOT EXISTS FOR (p:Phrase) ON (p.ns, p.fold);
CREATE INDEX hippo_fact_subject IF NOT EXISTS FOR (f:Fact) ON (f.ns, f.subject);
// The indexes every namespace had in common before each got its own (namespace_schema.cypher): dropped, so
// writes no longer maintain them.
DROP INDEX hippo_phrase_embedding IF EXISTS;
DROP INDEX hippo_passage_embedding IF EXISTS;
DROP INDEX hippo_fact_embedding IF EXISTS;
DROP INDEX hippo_passage_text IF EXISTS;
