"""Retrieval: one :class:`Retriever` per mode, and the registry of named presets that ``hippo query --mode``,
``hippo eval --mode`` and :meth:`HippoRAG.query` share. A mode is a retriever and the config fields it
overrides; adding one is a module here and a line below.

    from hippo_neo4j.retrieve import MODES
    MODES["hipporag2-no-passage-nodes"].overrides   # {'passage_nodes': False}
"""

from __future__ import annotations

from .base import Preset, Query, Registry, RetrievalContext, Retriever, deprecated_filter
from .bm25 import BM25Retriever
from .dense import DenseRetriever
from .entity_ppr import EntityPPRRetriever
from .hipporag1 import HippoRAG1Retriever
from .hipporag2 import HippoRAG2Retriever
from .hybrid import HybridRetriever
from .linking import RecognitionFilterLike

MODES = Registry()
MODES.register("entity-ppr", EntityPPRRetriever, "no LLM needed: passages by the chance that dense and a walk from the question's phrases agree on them, that a walk from those leads to them, or that one PPR from the phrases and the passages like the query ranks them so high")
MODES.register("hipporag2", HippoRAG2Retriever, "HippoRAG 2: query-to-fact linking, passage nodes in the walk")
MODES.register("hipporag1", HippoRAG1Retriever, "HippoRAG: query entities linked to phrases, PPR over phrases")
MODES.register("hybrid", HybridRetriever, "0.5 x hipporag1 + 0.5 x dense (min-max scores)")
MODES.register("hybrid-0.3", HybridRetriever, "hybrid with λ 0.3", hybrid_lambda=0.3)
MODES.register("hybrid-0.5", HybridRetriever, "hybrid with λ 0.5", hybrid_lambda=0.5)
MODES.register("hybrid-0.7", HybridRetriever, "hybrid with λ 0.7", hybrid_lambda=0.7)
MODES.register("dense", DenseRetriever, "passages by cosine to the query embedding")
MODES.register("bm25", BM25Retriever, "passages by BM25 over the full-text index")
MODES.register("hipporag2-no-passage-nodes", HippoRAG2Retriever, "ablation: phrase-only walk", passage_nodes=False)
MODES.register("hipporag2-entity-linking", HippoRAG2Retriever, "ablation: query-to-phrase linking", linking="entity")
MODES.register("entity-ppr-first-hop", EntityPPRRetriever, "ablation: the agreement and the walk, no second hop", entity_hop=False)
MODES.register("entity-ppr-walk", EntityPPRRetriever, "ablation: the walk's and dense's ranks alone (no entity walk, no second hop)", entity_agreement=False)
MODES.register("entity-ppr-relevance", EntityPPRRetriever, "variant: entity seeds also weighted by how like the query their passages are",
               entity_relevance=True)
MODES.register("hipporag2-top5", HippoRAG2Retriever, "hipporag2 with the paper's 5 phrase seeds", link_top_phrases=5)


def default_mode() -> str:
    """The mode of ``hippo query`` and :meth:`HippoRAG.query` when none is named: ``entity-ppr``. It needs no
    LLM, and on musique_train and 2wikimultihopqa it ranks at least as well as dense retrieval and as its own walk
    alone at every cutoff, with both extraction settings (docs/results.md, Recall)."""
    return "entity-ppr"


# The modes `hippo eval` runs when none is named: every preset but plain 'hybrid' (its λ variants cover it).
EVAL_DEFAULT: tuple[str, ...] = tuple(m for m in MODES if m != "hybrid")

__all__ = [
    "BM25Retriever", "DenseRetriever", "EVAL_DEFAULT", "EntityPPRRetriever", "HippoRAG1Retriever", "HippoRAG2Retriever", "HybridRetriever",
    "MODES", "Preset", "default_mode", "deprecated_filter", "Query", "RecognitionFilterLike", "Registry",
    "RetrievalContext", "Retriever",
]
