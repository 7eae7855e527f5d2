// hippo-neo4j schema. Applied idempotently when a client connects (every statement is IF NOT EXISTS).
// $dim (the encoder's embedding dimension) is substituted by the client as an integer literal, since
// index options cannot be query parameters. Vector indexes span all namespaces; searches read the
// nearest nodes and keep those of their namespace, widening the search until enough remain. Quantization
// is off: it shifts reported cosines by up to ~0.02, enough to move a synonym across tau.
CREATE CONSTRAINT hippo_passage_id IF NOT EXISTS FOR (p:Passage) REQUIRE (p.ns, p.id) IS UNIQUE;
CREATE CONSTRAINT hippo_phrase_text IF NOT EXISTS FOR (p:Phrase) REQUIRE (p.ns, p.text) IS UNIQUE;
CREATE CONSTRAINT hippo_fact_id IF NOT EXISTS FOR (f:Fact) REQUIRE (f.ns, f.id) IS UNIQUE;
CREATE CONSTRAINT hippo_namespace_name IF NOT EXISTS FOR (n:HippoNamespace) REQUIRE n.name IS UNIQUE;
CREATE CONSTRAINT hippo_projection_lock IF NOT EXISTS FOR (l:HippoProjectionLock) REQUIRE (l.ns, l.kind) IS UNIQUE;
CREATE INDEX hippo_passage_ns IF NOT EXISTS FOR (p:Passage) ON (p.ns);
CREATE INDEX hippo_phrase_ns IF NOT EXISTS FOR (p:Phrase) ON (p.ns);
CREATE INDEX hippo_fact_subject IF NOT EXISTS FOR (f:Fact) ON (f.ns, f.subject);
CREATE VECTOR INDEX hippo_phrase_embedding IF NOT EXISTS FOR (p:Phrase) ON (p.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX hippo_passage_embedding IF NOT EXISTS FOR (p:Passage) ON (p.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX hippo_fact_embedding IF NOT EXISTS FOR (f:Fact) ON (f.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE FULLTEXT INDEX hippo_passage_text IF NOT EXISTS FOR (p:Passage) ON EACH [p.title, p.text];
