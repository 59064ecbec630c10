"""Settings read from the environment and from ``<config dir>/.env``.

The config dir is ``$MAXY_CONFIG_DIR`` (default ``~/.maxy``). The installer writes the
generated Neo4j password and the chosen embedder there, in a file with mode 0600.
Environment variables always win over the file.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Annotated
from urllib.parse import urlparse

from pydantic import field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

DEFAULT_EMBED_MODEL = "bge-small-en-v1.5"
SCOPE_VALUES = ("public", "shared", "admin")


def config_dir() -> Path:
    return Path(os.environ.get("MAXY_CONFIG_DIR") or Path.home() / ".maxy").expanduser()


def cache_dir() -> Path:
    """Downloads (Neo4j jars, tokenizer) live here, outside the repository, shared by clones."""
    base = os.environ.get("MAXY_CACHE_DIR") or os.environ.get("XDG_CACHE_HOME")
    if base:
        return Path(base).expanduser() / ("" if os.environ.get("MAXY_CACHE_DIR") else "maxy")
    return Path.home() / ".cache" / "maxy"


def env_file() -> Path:
    return config_dir() / ".env"


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_file=None,  # set per instance in load_settings so MAXY_CONFIG_DIR is honoured
        env_file_encoding="utf-8",
        extra="ignore",
        case_sensitive=True,
    )

    # Neo4j
    NEO4J_URI: str = "bolt://127.0.0.1:7687"
    NEO4J_USER: str = "neo4j"
    NEO4J_PASSWORD: str | None = None
    NEO4J_DATABASE: str | None = None
    # auto: launch the local server only when NEO4J_URI points at this machine
    NEO4J_MANAGED: str = "auto"
    NEO4J_VERSION: str = "2026.08.1"
    NEO4J_HEAP: str = "1g"
    NEO4J_PAGECACHE: str = "512m"

    # Embeddings
    EMBED_MODEL: str = DEFAULT_EMBED_MODEL
    EMBED_DIMENSIONS: int | None = None
    OLLAMA_URL: str = "http://localhost:11434"
    EMBED_TIMEOUT_S: float = 30.0

    # Identity and pinning
    ACCOUNT_ID: str | None = None
    DATA_ROOT: Path | None = None
    ALLOWED_SCOPES: Annotated[list[str] | None, NoDecode] = None
    AGENT_SLUG: str | None = None
    SESSION_ID: str | None = None
    SESSION_NODE_ID: str | None = None
    KNOWLEDGE_KEYWORDS: Annotated[list[str] | None, NoDecode] = None

    # LLM (optional)
    ANTHROPIC_API_KEY: str | None = None

    # Search-pipeline flags (all default off)
    MAXY_GS_EXPANSION: bool = False
    MAXY_GS_ROUTE: bool = False
    MAXY_GS_RRF: bool = False
    MAXY_GS_BOOSTS: bool = False
    MAXY_GS_DEDUP: bool = False
    MAXY_GS_HYDE: bool = False

    @field_validator("ALLOWED_SCOPES", "KNOWLEDGE_KEYWORDS", mode="before")
    @classmethod
    def _split_lists(cls, value: object) -> object:
        return _split_csv(value) or None

    @field_validator("ALLOWED_SCOPES")
    @classmethod
    def _known_scopes(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        unknown = [v for v in value if v not in SCOPE_VALUES]
        if unknown:
            raise ValueError(f"ALLOWED_SCOPES has unknown scope(s) {unknown}; allowed values are {list(SCOPE_VALUES)}")
        return value

    @field_validator("EMBED_DIMENSIONS", mode="before")
    @classmethod
    def _blank_dims(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator("ACCOUNT_ID", "AGENT_SLUG", "SESSION_ID", "SESSION_NODE_ID", "NEO4J_PASSWORD", mode="before")
    @classmethod
    def _blank_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @property
    def data_root(self) -> Path:
        return Path(self.DATA_ROOT or config_dir() / "data").expanduser()

    @property
    def neo4j_home(self) -> Path:
        return config_dir() / "neo4j"

    @property
    def neo4j_host_port(self) -> tuple[str, int]:
        parsed = urlparse(self.NEO4J_URI)
        return parsed.hostname or "127.0.0.1", parsed.port or 7687

    @property
    def neo4j_is_managed(self) -> bool:
        """True when this project launches and owns the Neo4j server."""
        mode = self.NEO4J_MANAGED.strip().lower()
        if mode in ("1", "true", "yes"):
            return True
        if mode in ("0", "false", "no"):
            return False
        parsed = urlparse(self.NEO4J_URI)
        return parsed.hostname in ("127.0.0.1", "localhost", "::1") and parsed.scheme in (
            "bolt",
            "neo4j",
        )


def load_settings(**overrides: object) -> Settings:
    """Fresh settings: environment first, then ``<config dir>/.env``, then defaults."""
    return Settings(_env_file=env_file(), **overrides)  # type: ignore[call-arg,arg-type]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()


def write_env_values(values: dict[str, str]) -> Path:
    """Update ``<config dir>/.env`` in place, keeping other lines; the file is mode 0600."""
    path = env_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    lines: list[str] = path.read_text().splitlines() if path.exists() else []
    remaining = dict(values)
    out: list[str] = []
    for line in lines:
        key = line.split("=", 1)[0].strip() if "=" in line and not line.lstrip().startswith("#") else None
        if key in remaining:
            out.append(f"{key}={remaining.pop(key)}")
        else:
            out.append(line)
    out.extend(f"{k}={v}" for k, v in remaining.items())
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write("\n".join(out) + "\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    get_settings.cache_clear()
    return path
