"""The onnxruntime + tokenizers backend: a BERT-style ``.onnx`` graph, pooled (CLS or mean) and normalised.

A local model folder holds one ``*.onnx`` graph (or ``onnx/*.onnx``) and ``tokenizer.json`` (or one
``*tokenizer.json``). Its pooling and maximum length come from ``encoder.json`` (``{"pooling": "cls"|"mean",
"max_length": N, "query_prefix": "..."}``) when present, else from sentence-transformers' files beside it
(``1_Pooling/config.json``, ``sentence_bert_config.json``), else mean pooling over at most 512 word pieces.

Environment: ``HIPPO_ENCODER_THREADS`` (default: the cores this process may use), ``HIPPO_ENCODER_BATCH_SIZE``
(texts per onnxruntime run, at most) and ``HIPPO_ENCODER_MAX_TOKENS`` (padded word pieces per run, about).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ..errors import ConfigError
from .base import Encoder, KnownModel
from .fetch import MANIFEST, ONNX_FILE, TOKENIZER_FILE, fetch_model, file_sha256, read_manifest, settings_digest

if TYPE_CHECKING:
    import onnxruntime
    import tokenizers

DEFAULT_BATCH_SIZE = 64  # texts per run at most ...
DEFAULT_MAX_TOKENS = 1024  # ... and padded word pieces per run: long passages go a few at a time
_TOKENIZE_CHUNK = 4096  # texts tokenised at once: bounds memory on large inputs
POOLINGS = ("cls", "mean")


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not an integer.") from None
    if number < 1:
        raise ConfigError(f"{name}={value!r} must be at least 1.")
    return number


def available_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


class OnnxEncoder(Encoder):
    """Embeddings from an ONNX graph on onnxruntime (CPU), tokenised by the ``tokenizers`` library."""

    def __init__(
        self,
        name: str,
        *,
        directory: Path | None = None,
        onnx_path: Path | None = None,
        tokenizer_path: Path | None = None,
        pooling: str = "mean",
        max_length: int = 512,
        query_prefix: str = "",
        dimension: int | None = None,
        known: KnownModel | None = None,
        batch_size: int | None = None,
        max_tokens: int | None = None,
        threads: int | None = None,
    ) -> None:
        if pooling not in POOLINGS:
            raise ConfigError(f"Encoder {name!r}: pooling {pooling!r} is not one of {', '.join(POOLINGS)}.")
        self.name = name
        self.pooling = pooling
        self.max_length = int(max_length)
        self.query_prefix = query_prefix
        self.batch_size = batch_size or _env_int("HIPPO_ENCODER_BATCH_SIZE", DEFAULT_BATCH_SIZE)
        self.max_tokens = max_tokens or _env_int("HIPPO_ENCODER_MAX_TOKENS", DEFAULT_MAX_TOKENS)
        self.threads = threads or _env_int("HIPPO_ENCODER_THREADS", available_cores())
        self._directory = directory
        self._onnx_path = onnx_path
        self._tokenizer_path = tokenizer_path
        self._dimension = dimension
        self._known = known
        self._session: onnxruntime.InferenceSession | None = None
        self._tokenizer: tokenizers.Tokenizer | None = None
        self._pad_id = 0
        self._inputs: list[str] = []
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    # -- construction ------------------------------------------------------------------------------------------

    def token_counter(self) -> tuple[Callable[[str], int], int]:
        """The model's tokenizer without truncation, and its window less the two special tokens a passage gets."""
        from ..documents import token_counter

        self.load()
        assert self._tokenizer is not None  # set by load()
        return token_counter(self._tokenizer), self.max_length - 2

    @classmethod
    def known(cls, name: str, model: KnownModel, **kwargs: Any) -> OnnxEncoder:
        """A model from the registry: fetched into the cache on first use."""
        encoder = cls(
            name, pooling=model.pooling, max_length=model.max_length, query_prefix=model.query_prefix,
            dimension=model.dimension, known=model, **kwargs,
        )
        encoder.synonym_threshold = model.synonym_threshold
        return encoder

    @classmethod
    def from_directory(cls, directory: Path, **kwargs: Any) -> OnnxEncoder:
        """A local folder holding ``*.onnx`` and a tokenizer JSON (see the module docstring)."""
        directory = Path(directory).expanduser().resolve()
        if not directory.is_dir():
            raise ConfigError(f"Encoder folder {str(directory)!r} does not exist.")
        onnx_path = _pick(directory, ["model.onnx", "*.onnx", "onnx/model.onnx", "onnx/*.onnx"], "an .onnx graph")
        tokenizer_path = _pick(directory, ["tokenizer.json", "*tokenizer.json"], "a tokenizer.json")
        settings = _folder_settings(directory)
        return cls(
            settings.pop("name", None) or directory.name, onnx_path=onnx_path, tokenizer_path=tokenizer_path,
            **settings, **kwargs,
        )

    # -- loading ----------------------------------------------------------------------------------------------

    def _paths(self) -> tuple[Path, Path]:
        if self._onnx_path is None or self._tokenizer_path is None:
            assert self._known is not None
            settings = {"pooling": self.pooling, "max_length": self.max_length, "query_prefix": self.query_prefix}
            self._directory = fetch_model(self.name, self._known.artifact, settings)
            self._onnx_path = self._directory / ONNX_FILE
            self._tokenizer_path = self._directory / TOKENIZER_FILE
        return self._onnx_path, self._tokenizer_path

    def load(self) -> OnnxEncoder:
        """Fetch (a known model, once) and load the graph and the tokenizer; later calls return at once."""
        with self._lock:
            if self._session is not None:
                return self
            onnx_path, tokenizer_path = self._paths()
            import onnxruntime as ort
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(str(tokenizer_path))
            padding = tokenizer.padding
            self._pad_id = int(padding["pad_id"]) if padding else (tokenizer.token_to_id("[PAD]") or 0)
            tokenizer.no_padding()  # the graph takes any length: pad each batch to its longest text only
            tokenizer.enable_truncation(self.max_length)

            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.log_severity_level = 3
            # idle threads sleep instead of spinning: the cores are shared with the database and the caller
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            try:
                session = ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
            except Exception as error:  # onnxruntime raises its own exception types
                raise ConfigError(f"Encoder {self.name!r}: onnxruntime cannot load {str(onnx_path)!r}: {error}") from None
            self._inputs = [i.name for i in session.get_inputs()]
            unknown = set(self._inputs) - {"input_ids", "attention_mask", "token_type_ids"}
            if unknown or "input_ids" not in self._inputs:
                raise ConfigError(
                    f"Encoder {self.name!r}: {str(onnx_path)!r} wants inputs {self._inputs}; a BERT-style graph "
                    "taking input_ids (and attention_mask, token_type_ids) is needed."
                )
            shape = session.get_outputs()[0].shape
            if self._dimension is None:
                last = shape[-1]
                if not isinstance(last, int):
                    raise ConfigError(f"Encoder {self.name!r}: the graph's output width is not fixed ({shape}).")
                self._dimension = last
            self._tokenizer, self._session = tokenizer, session
            return self

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self.load()
        assert self._dimension is not None
        return self._dimension

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            onnx_path, tokenizer_path = self._paths()
            manifest = read_manifest(onnx_path.parent) if onnx_path.name == ONNX_FILE else None
            files = (manifest or {}).get("files", {})
            if files.get(onnx_path.name) and files.get(tokenizer_path.name):
                weights, vocab = files[onnx_path.name]["sha256"], files[tokenizer_path.name]["sha256"]
            else:  # a folder of the user's: hashed once, remembered by size and modification time
                weights, vocab = file_sha256(onnx_path), file_sha256(tokenizer_path)
            self._fingerprint = settings_digest({
                "backend": "onnx", "weights": weights, "tokenizer": vocab, "pooling": self.pooling,
                "max_length": self.max_length, "query_prefix": self.query_prefix,
            })
        return self._fingerprint

    # -- encoding ---------------------------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.load()
        assert self._tokenizer is not None and self._session is not None
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), _TOKENIZE_CHUNK):
            chunk = texts[start:start + _TOKENIZE_CHUNK]
            encodings = self._tokenizer.encode_batch(chunk, add_special_tokens=True)
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
            order = np.argsort(lengths, kind="stable")  # similar lengths together: little padding
            for rows in self._batches(lengths[order]):
                picked = order[rows]
                out[start + picked] = self._run([encodings[i] for i in picked], int(lengths[picked].max()))
        return out

    def _batches(self, sorted_lengths: np.ndarray) -> list[slice]:
        """Consecutive runs of at most ``batch_size`` texts and about ``max_tokens`` padded word pieces each."""
        batches, begin = [], 0
        for end in range(1, len(sorted_lengths) + 1):
            count = end - begin
            if count > 1 and (count > self.batch_size or count * int(sorted_lengths[end - 1]) > self.max_tokens):
                batches.append(slice(begin, end - 1))
                begin = end - 1
        if begin < len(sorted_lengths):
            batches.append(slice(begin, len(sorted_lengths)))
        return batches

    def _run(self, encodings: list[Any], width: int) -> np.ndarray:
        count = len(encodings)
        ids = np.full((count, width), self._pad_id, dtype=np.int64)
        mask = np.zeros((count, width), dtype=np.int64)
        types = np.zeros((count, width), dtype=np.int64)
        for row, encoding in enumerate(encodings):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        assert self._session is not None
        hidden = self._session.run(None, {name: feed[name] for name in self._inputs})[0]
        if hidden.ndim == 2:  # the graph pools by itself
            return hidden
        if self.pooling == "cls":
            return hidden[:, 0, :]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def _pick(directory: Path, patterns: list[str], what: str) -> Path:
    for pattern in patterns:
        found = sorted(directory.glob(pattern))
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            names = ", ".join(str(p.relative_to(directory)) for p in found)
            raise ConfigError(
                f"Encoder folder {str(directory)!r} holds several candidates for {what} ({names}); keep one, "
                "or name the graph model.onnx and the tokenizer tokenizer.json."
            )
    raise ConfigError(f"Encoder folder {str(directory)!r} holds no {what}.")


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise ConfigError(f"{str(path)!r} is not readable JSON: {error}") from None
    return value if isinstance(value, dict) else {}


def _folder_settings(directory: Path) -> dict[str, Any]:
    """Pooling, maximum length and query prefix of a local model folder."""
    own = _read_json(directory / MANIFEST)
    settings: dict[str, Any] = {"pooling": "mean", "max_length": 512, "query_prefix": ""}
    pooling = _read_json(directory / "1_Pooling" / "config.json")
    if pooling.get("pooling_mode_cls_token"):
        settings["pooling"] = "cls"
    limit = _read_json(directory / "sentence_bert_config.json").get("max_seq_length")
    if limit is None:
        limit = _read_json(directory / "tokenizer_config.json").get("model_max_length")
    if isinstance(limit, int) and 0 < limit <= 100_000:
        settings["max_length"] = limit
    prompts = _read_json(directory / "config_sentence_transformers.json").get("prompts") or {}
    if isinstance(prompts, dict) and isinstance(prompts.get("query"), str):
        settings["query_prefix"] = prompts["query"]
    for key in ("name", "pooling", "max_length", "query_prefix"):
        if key in own:
            settings[key] = own[key]
    return settings
