// The indexes of one namespace, applied idempotently when a client connects: its phrase, passage and fact
// vector indexes and its passage full-text index, each over the namespace's own labels (HippoPhrase_<key>,
// HippoPassage_<key>, HippoFact_<key>; <key> is the namespace name's digest, see graph/store.py), so a
// search reads only its namespace, and no other namespace's size or writes change its results.
// Labels, index names and $dim (the embedding dimension) are substituted by the client, since DDL takes no
// parameters for them; they are made of hexadecimal digits and a fixed prefix only. Quantization is off: it
// shifts reported cosines by up to ~0.02, enough to move a synonym across tau.
CREATE VECTOR INDEX $phraseIndex IF NOT EXISTS FOR (p:$phraseLabel) ON (p.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX $passageIndex IF NOT EXISTS FOR (p:$passageLabel) ON (p.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE VECTOR INDEX $factIndex IF NOT EXISTS FOR (f:$factLabel) ON (f.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: $dim, `vector.similarity_function`: 'cosine',
                         `vector.quantization.enabled`: false}};
CREATE FULLTEXT INDEX $textIndex IF NOT EXISTS FOR (p:$passageLabel) ON EACH [p.title, p.text];
