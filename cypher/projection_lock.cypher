// The projection lock of one namespace and kind, taken by the transaction that projects it (see
// graph/projection.py): a write lock on this node serialises projections across processes and is released
// when the transaction ends, however it ends. Parameters: $ns, $kind.
MERGE (l:HippoProjectionLock {ns: $ns, kind: $kind})
SET l.at = timestamp()
