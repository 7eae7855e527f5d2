"""Settings: the connection and the local server (read from the environment, and the CLI, which fills the
same fields), and the algorithm's (:class:`HippoConfig`).

Every secret (the Neo4j password, API keys) comes from here and is never printed: the pydantic
``SecretStr`` type keeps it out of ``repr`` and ``--json`` output.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Callable, Literal, TypeVar, cast

from pydantic import BaseModel, Field, SecretStr

from .errors import ConfigError

Number = TypeVar("Number", int, float)


def _env_path(name: str, default: Path) -> Path:
    value = os.environ.get(name)
    return Path(value).expanduser() if value else default


def _xdg(name: str, fallback: str) -> Path:
    return _env_path(name, Path.home() / fallback)


def default_cache_path() -> Path:
    """``$HIPPO_EXTRACTION_CACHE``, else ``$XDG_CACHE_HOME/hippo-neo4j/extractions.sqlite`` (~/.cache/...)."""
    explicit = os.environ.get("HIPPO_EXTRACTION_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base).expanduser() if base else Path.home() / ".cache"
    return root / "hippo-neo4j" / "extractions.sqlite"


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{name}={value!r} is not a boolean; use true or false.")


def env_number(name: str, default: Number, cast: Callable[[str], Number] = int) -> Number:
    """A number from the environment (``cast``: int or float), or ``default`` when unset."""
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return cast(value)
    except ValueError:
        raise ConfigError(f"{name}={value!r} is not {'an integer' if cast is int else 'a number'}.") from None


# The Neo4j lines the local server can run (hippo_neo4j/runtime/pom.xml pins each one's Neo4j and GDS): the
# first is the default.
NEO4J_LINES = ("2026.01", "5.26")


def line_from_env() -> str:
    """HIPPO_NEO4J_LINE, checked against the lines the local server can run."""
    line = os.environ.get("HIPPO_NEO4J_LINE") or NEO4J_LINES[0]
    if line not in NEO4J_LINES:
        raise ConfigError(f"HIPPO_NEO4J_LINE={line!r} is not a line the local server runs; choose one of "
                          f"{', '.join(NEO4J_LINES)}.")
    return line


def line_dir(base: Path, line: str) -> Path:
    """The instance directory of ``line`` under the default line's ``base``: every line its own store."""
    return base if line == NEO4J_LINES[0] else base.with_name(f"{base.name}-{line}")


class ServerSettings(BaseModel):
    """Where and how the local Neo4j + GDS server runs."""

    line: str = Field(default=NEO4J_LINES[0], description="Neo4j line: 2026.01 (default) or 5.26 (LTS)")
    port: int = Field(default=7687, description="Bolt port on 127.0.0.1")
    http_port: int = Field(default=7474, description="Neo4j Browser / HTTP port on 127.0.0.1; 0 turns HTTP off")
    server_dir: Path = Field(description="instance directory: conf/, data/, logs/, run/")
    cache_dir: Path = Field(description="assembled Neo4j + GDS jars, one directory per version pair")
    config_dir: Path = Field(description="holds the generated password (mode 0600)")
    heap: str = "4g"
    pagecache: str = "2g"
    auth: bool = True
    java_home: Path | None = None
    start_timeout: float = 180.0

    @classmethod
    def from_env(cls) -> "ServerSettings":
        data_home = _xdg("XDG_DATA_HOME", ".local/share") / "hippo-neo4j"
        java_home = os.environ.get("HIPPO_JAVA_HOME")
        line = line_from_env()
        return cls(
            line=line,
            port=env_number("HIPPO_NEO4J_PORT", 7687),
            http_port=env_number("HIPPO_NEO4J_HTTP_PORT", 7474),
            server_dir=line_dir(_env_path("HIPPO_SERVER_DIR", data_home / "server"), line),
            cache_dir=_env_path("HIPPO_CACHE_DIR", _xdg("XDG_CACHE_HOME", ".cache") / "hippo-neo4j"),
            config_dir=_env_path("HIPPO_CONFIG_DIR", _xdg("XDG_CONFIG_HOME", ".config") / "hippo-neo4j"),
            heap=os.environ.get("HIPPO_NEO4J_HEAP", "4g"),
            pagecache=os.environ.get("HIPPO_NEO4J_PAGECACHE", "2g"),
            auth=_env_bool("HIPPO_NEO4J_AUTH", True),
            java_home=Path(java_home) if java_home else None,
            start_timeout=env_number("HIPPO_NEO4J_START_TIMEOUT", 180.0, float),
        )

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    @property
    def browser_url(self) -> str | None:
        return f"http://127.0.0.1:{self.http_port}/browser/" if self.http_port else None

    @property
    def password_file(self) -> Path:
        return self.config_dir / "neo4j-password"

    def password(self, create: bool = False) -> SecretStr | None:
        """The local server's password, generated on first use and kept with mode 0600."""
        path = self.password_file
        if path.exists():
            mode = path.stat().st_mode & 0o777
            if mode & 0o077:
                raise ConfigError(
                    f"{path} is readable by other users (mode {mode:o}); run: chmod 600 {path}"
                )
            return SecretStr(path.read_text(encoding="utf-8").strip())
        if not create:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        value = secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(value + "\n")
        return SecretStr(value)


class ConnectionSettings(BaseModel):
    """How the client reaches Neo4j: the local server by default, or any server the user names."""

    uri: str
    user: str = "neo4j"
    password: SecretStr | None = None
    database: str = "neo4j"
    namespace: str = "default"

    @classmethod
    def from_env(cls, server: ServerSettings | None = None, **overrides: object) -> "ConnectionSettings":
        server = server or ServerSettings.from_env()
        values: dict[str, object] = {
            "uri": os.environ.get("HIPPO_NEO4J_URI") or server.uri,
            "user": os.environ.get("HIPPO_NEO4J_USER") or "neo4j",
            "database": os.environ.get("HIPPO_NEO4J_DATABASE") or "neo4j",
            "namespace": os.environ.get("HIPPO_NAMESPACE") or "default",
        }
        password = overrides.pop("password", None) or os.environ.get("HIPPO_NEO4J_PASSWORD")
        values.update({k: v for k, v in overrides.items() if v is not None})
        if password:
            values["password"] = SecretStr(cast(str, password))
        elif values["uri"] == server.uri and server.auth:
            # The local server this project manages: its generated password.
            values["password"] = server.password()
        return cls.model_validate(values)

    @property
    def auth(self) -> tuple[str, str] | None:
        if self.password is None:
            return None
        return (self.user, self.password.get_secret_value())


class HippoConfig(BaseModel):
    """The algorithm's settings; defaults are the HippoRAG paper's."""

    synonym_threshold: float | None = Field(
        None, description="tau: cosine at or above which phrases get a SYNONYM edge; None: the encoder's calibrated tau"
    )
    synonym_top_k: int = Field(100, le=100, description="vector-index candidates per new phrase")
    damping: float = Field(0.5, gt=0, lt=1, description="PPR probability of following an edge")
    batch_size: int = Field(default_factory=lambda: env_number("HIPPO_BATCH_SIZE", 256), ge=1)
    max_passage_chars: int = Field(
        default_factory=lambda: env_number("HIPPO_MAX_PASSAGE_CHARS", 100_000),
        description="longer passages are rejected (listed in IndexReport.rejected): split them into passages",
    )
    ppr_max_iterations: int = 50  # damping 0.5 halves the error each step: 0.5**50 is far below tolerance
    # GDS stops when no score moves by more than this (hipporag2 scales it by its seed total: the same
    # relative precision); docs/design.md says why 1e-8 and `hippo eval --ppr-tolerance` measures another.
    ppr_tolerance: float = 1e-8
    # One thread: on phrase graphs of 10^4-10^5 nodes GDS's parallel PPR spends more on coordination than it
    # saves. Raise it for graphs of millions of nodes.
    ppr_concurrency: int = Field(1, ge=1, le=4)
    prepare_graph: bool = Field(
        True, description="after indexing, project the graph the default mode walks: now, and indexing waits for it, "
                          "when the namespace has no projection of it yet (so the first query does not wait for one), "
                          "else in the background; False: the first query that walks it projects it")
    # Phrases whose PPR mass is at most this are left out of the passage sums: fewer MENTIONED_IN expansions
    # in the aggregation, and a passage score moves by at most 1e-7 per such mention.
    ppr_min_mass: float = Field(1e-7, ge=0)
    top_phrases: int = 10
    # hipporag2 (HippoRAG 2's defaults)
    fact_top_k: int = Field(5, ge=1, le=100, description="facts retrieved for the query (before the filter)")
    # 3, not the paper's 5: the cut is taken after dividing by |P_i|, so a fifth seed is mostly a rare phrase of
    # a weaker, often wrong fact, and the walk divides by |P_i| once more (docs/design.md, "hipporag2 keeps 3
    # phrase seeds")
    link_top_phrases: int = Field(3, ge=1, description="phrase seeds kept: the largest")
    passage_node_weight: float = Field(0.05, ge=0, description="passage seed = this x min-max normalised dense score")
    passage_seed_top_n: int | None = Field(
        None, ge=1, description="seed only the top-N dense passages (min-max over them); None seeds every passage"
    )
    passage_nodes: bool = Field(True, description="ablation when False: PPR over phrases only, hipporag1's aggregation")
    linking: Literal["fact", "entity"] = Field(
        "fact", description="ablation 'entity': phrase seeds from query entities (similarity / |P_i|) instead of facts"
    )
    # entity-ppr (the LLM-free mode)
    entity_share: float = Field(
        0.5, ge=0, le=1, description="entity-ppr: share of the reset mass on the query's entities (the rest on passages)"
    )
    entity_relevance: bool = Field(
        False, description="entity-ppr: weigh each linked phrase's seed by how like the query its passages are "
                          "(1/|P_i| x the mean of its passages' positive cosine z-scores)"
    )
    entity_agreement: bool = Field(
        True, description="entity-ppr: a passage that dense and the entity walk both rank high is placed by that "
                          "agreement (the chance of both ranks); False: the walk's and dense's ranks alone (entity-ppr-walk)"
    )
    entity_hop: bool = Field(
        True, description="entity-ppr: the second hop, a three-step walk from the agreed passages, places where they "
                          "lead when the walk or dense confirms it; False: none (entity-ppr-first-hop)"
    )
    # hybrid
    hybrid_lambda: float = Field(0.5, ge=0, le=1, description="weight of the hipporag1 score in the fusion")
    hybrid_depth: int = Field(50, ge=1, description="passages each side contributes to the fusion")
