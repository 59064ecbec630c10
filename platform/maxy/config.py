"""Settings read from the environment and from ``<config dir>/.env``.

The config dir is ``$MAXY_CONFIG_DIR`` (default ``~/.maxy``). The installer writes the
generated Neo4j password and the chosen embedder there, in a file with mode 0600.
Environment variables always win over the file.
"""

from __future__ import annotations

import os
import re
import uuid
from functools import lru_cache
from pathlib import Path
from typing import Annotated
from urllib.parse import urlparse

from pydantic import AliasChoices, Field, field_validator, model_validator
from pydantic import ValidationError as PydanticValidationError
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .errors import ConfigError, SettingsError
from .fsfaults import atomic_write, describe, not_utf8
from .identifiers import NAME_RE, check_agent_slug

DEFAULT_EMBED_MODEL = "bge-small-en-v1.5"
SCOPE_VALUES = ("public", "shared", "admin")
# The roles a task-store server or API key is pinned to (TASK_ROLE, --task-role)
TASK_ROLE_VALUES = ("orchestrator", "executor", "spec_reviewer", "quality_reviewer", "approver")
# A community member's id (MEMBER_ID, --member, an API key's memberId): maxy.community.members
MEMBER_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$"
# The community's model agents, each overridable by MAXY_MODEL_<AGENT> (maxy.community.models)
COMMUNITY_AGENTS = (
    "intent-inferrer",
    "intent-verifier",
    "intent-reconciler",
    "intent-indexer",
    "profile-hyde-generator",
    "lens-inferrer",
    "hyde-generator",
    "opportunity-evaluator",
    "negotiator",
)


def agent_model_variable(agent: str) -> str:
    """The variable overriding one agent's model: ``negotiator`` -> ``MAXY_MODEL_NEGOTIATOR``."""
    return "MAXY_MODEL_" + agent.upper().replace("-", "_")


AGENT_MODEL_VARIABLES = tuple(agent_model_variable(agent) for agent in COMMUNITY_AGENTS)
NEO4J_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
BM25_STATS = ("account", "index")  # whose statistics BM25 ranks by (MAXY_BM25_STATS)
MANAGED_VALUES = ("auto", "true", "false", "1", "0", "yes", "no")
_MEMORY_SIZE = re.compile(r"^[0-9]+[kmgt]?$", re.IGNORECASE)  # as the JVM's -Xmx and neo4j.conf take it
_NEO4J_VERSION = re.compile(r"^[0-9]+(\.[0-9A-Za-z-]+)+$")
_DATABASE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,62}$")
_ONE_TOKEN = re.compile(r"^[^\s\x00-\x1f\x7f]+$")  # no spaces, no control characters
_ONE_LINE = re.compile(r"^[^\x00-\x1f\x7f]+$")  # no control characters (an account name may have spaces)


def expand_path(value: str | Path) -> Path:
    """``value`` with a leading ``~`` or ``~user`` expanded; ValueError (in words, no path) when
    it names a user that does not exist, the home folder cannot be found, or it holds a NUL."""
    if "\x00" in str(value):
        raise ValueError("holds a NUL character, which no path can")
    try:
        return Path(value).expanduser()
    except RuntimeError:
        user = str(value).split("/", 1)[0]
        raise ValueError(f"{user} names no home folder that can be found: give the folder's full path") from None


def _env_path(variable: str, value: str) -> Path:
    try:
        return expand_path(value)
    except ValueError as err:
        raise ConfigError(f"{variable}: {value!r} {err}") from None


def config_dir() -> Path:
    value = os.environ.get("MAXY_CONFIG_DIR")
    if value:
        return _env_path("MAXY_CONFIG_DIR", value)
    return _env_path("HOME", "~") / ".maxy"


def cache_dir() -> Path:
    """Downloads (Neo4j jars, tokenizer) live here, outside the repository, shared by clones."""
    if os.environ.get("MAXY_CACHE_DIR"):
        return _env_path("MAXY_CACHE_DIR", os.environ["MAXY_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return _env_path("XDG_CACHE_HOME", os.environ["XDG_CACHE_HOME"]) / "maxy"
    return _env_path("HOME", "~") / ".cache" / "maxy"


def env_file() -> Path:
    return config_dir() / ".env"


def _is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


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
    # unset: chosen from the machine's available memory at each start (maxy/neo4j/memory.py)
    NEO4J_HEAP: str | None = None
    NEO4J_PAGECACHE: str | None = None
    # Bounded waits: a refused or unreachable server fails within the connect timeout, a query or
    # transaction (and a hung server) within the query timeout; 0 lets queries run unbounded
    NEO4J_CONNECT_TIMEOUT_S: Annotated[float, Field(gt=0)] = 1.5
    NEO4J_QUERY_TIMEOUT_S: Annotated[float, Field(ge=0)] = 30.0

    # Embeddings
    EMBED_MODEL: str = DEFAULT_EMBED_MODEL
    EMBED_DIMENSIONS: int | None = None
    OLLAMA_URL: str = "http://localhost:11434"
    EMBED_TIMEOUT_S: float = 30.0
    # After this many failed embedding calls in a row the embedder stops calling Ollama for the
    # cool-down (searches are BM25-only, writes store without a vector meanwhile)
    EMBED_BREAKER_FAILURES: Annotated[int, Field(ge=1)] = 3
    EMBED_BREAKER_COOLDOWN_S: Annotated[float, Field(ge=0)] = 60.0

    # Identity and pinning
    ACCOUNT_ID: str | None = None
    DATA_ROOT: Path | None = None
    ALLOWED_SCOPES: Annotated[list[str] | None, NoDecode] = None
    AGENT_SLUG: str | None = None
    SESSION_ID: str | None = None
    SESSION_NODE_ID: str | None = None
    KNOWLEDGE_KEYWORDS: Annotated[list[str] | None, NoDecode] = None
    # The task-store role this server acts as; unset: task tools read but never write
    TASK_ROLE: str | None = None
    # The community member this server acts for; unset: the account's admin (every member)
    MEMBER_ID: str | None = None
    # The task store's retry backoff: the first retry waits the base, each next one twice as long,
    # never more than the cap (unset: the retry policy's own, 30 s and 600 s)
    MAXY_TASK_BACKOFF_BASE_S: Annotated[float | None, Field(ge=0)] = None
    MAXY_TASK_BACKOFF_CAP_S: Annotated[float | None, Field(ge=0)] = None

    # Plugins this install runs without (comma-separated names): not served by `all`, and their
    # tools are stripped from specialists instead of refusing the start
    EXCLUDED_PLUGINS: Annotated[list[str] | None, NoDecode] = None

    # LLM (optional)
    ANTHROPIC_API_KEY: str | None = None
    ANTHROPIC_BASE_URL: str | None = None  # another Messages API endpoint
    MAXY_SUMMARY_MODEL: str | None = None  # the model of ingest summaries (default: summarize.DEFAULT_MODEL)
    MAXY_SUMMARY_TIMEOUT_S: Annotated[float, Field(gt=0)] = 20.0
    # Seconds the inbound gateway waits for its model; past it the message passes unscreened by it
    MAXY_GATEWAY_TIMEOUT_S: Annotated[float, Field(gt=0)] = 3.0
    # The memory agent's model, and seconds one of its calls may take before it degrades
    MAXY_AGENT_MODEL: str = "claude-haiku-4-5"
    MAXY_AGENT_TIMEOUT_S: Annotated[float, Field(gt=0)] = 20.0
    # The community's models (maxy.community.models): one for every agent, one per agent, and the
    # seconds a call may take before the agent degrades (unset: each agent's own)
    MAXY_COMMUNITY_MODEL: str | None = None
    MAXY_COMMUNITY_TIMEOUT_S: Annotated[float | None, Field(gt=0)] = None
    MAXY_MODEL_INTENT_INFERRER: str | None = None
    MAXY_MODEL_INTENT_VERIFIER: str | None = None
    MAXY_MODEL_INTENT_RECONCILER: str | None = None
    MAXY_MODEL_INTENT_INDEXER: str | None = None
    MAXY_MODEL_PROFILE_HYDE_GENERATOR: str | None = None
    MAXY_MODEL_LENS_INFERRER: str | None = None
    MAXY_MODEL_HYDE_GENERATOR: str | None = None
    MAXY_MODEL_OPPORTUNITY_EVALUATOR: str | None = None
    MAXY_MODEL_NEGOTIATOR: str | None = None
    # Seconds discover_opportunities spends negotiating its matches within the call; past it the
    # rest are left to the negotiation sweep (maxy serve's, or maxy negotiations sweep)
    MAXY_DISCOVERY_NEGOTIATE_S: Annotated[float, Field(ge=0)] = 60.0
    # Seconds between rounds of `maxy serve`'s negotiation sweep; of several replicas on one
    # database, one runs each round (a lease in Neo4j)
    MAXY_SWEEP_INTERVAL_S: Annotated[float, Field(gt=0)] = 60.0

    # Chunk bounds of ingested documents, in characters (unset: the chunker's defaults)
    MAXY_CHUNK_MIN_CHARS: Annotated[int | None, Field(gt=0)] = None
    MAXY_CHUNK_TARGET_CHARS: Annotated[int | None, Field(gt=0)] = None
    MAXY_CHUNK_MAX_CHARS: Annotated[int | None, Field(gt=0)] = None
    # Nodes per transaction of `maxy ingest`; a document of more is written in bounded transactions
    MAXY_INGEST_BATCH_NODES: Annotated[int, Field(ge=1)] = 256

    # `maxy serve` answers each /mcp request without an MCP session, so any of several replicas
    # behind a load balancer answers any request (maxy serve --stateless sets it too)
    MAXY_MCP_STATELESS: bool = False

    # The level of the [component] key=value lines on stderr; unset: WARNING for commands,
    # INFO for the MCP servers (--verbose / --quiet override it). MAXY_LOG_LEVEL is its older name.
    LOG_LEVEL: str | None = Field(default=None, validation_alias=AliasChoices("LOG_LEVEL", "MAXY_LOG_LEVEL"))

    # Audit trail: admin ToolCalls older than this many days are pruned automatically; 0 keeps them
    AUDIT_RETENTION_DAYS: Annotated[int, Field(ge=0)] = 30

    # Search-pipeline flags (all default off)
    MAXY_GS_EXPANSION: bool = False
    MAXY_GS_ROUTE: bool = False
    MAXY_GS_RRF: bool = False
    MAXY_GS_BOOSTS: bool = False
    MAXY_GS_DEDUP: bool = False
    MAXY_GS_HYDE: bool = False
    # Whose statistics BM25 ranks by: "account" (an account's own when it is a minority of the
    # index) or "index" (Lucene's, shared by every account)
    MAXY_BM25_STATS: str = "account"

    @field_validator("ALLOWED_SCOPES", "KNOWLEDGE_KEYWORDS", "EXCLUDED_PLUGINS", mode="before")
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
            raise ValueError(f"unknown scope(s) {', '.join(map(repr, unknown))}")
        return value

    @field_validator("EXCLUDED_PLUGINS")
    @classmethod
    def _plugin_names(cls, value: list[str] | None) -> list[str] | None:
        bad = [v for v in value or () if not NAME_RE.fullmatch(v)]
        if bad:
            raise ValueError(f"{bad[0]!r} is not a plugin name")
        return list(dict.fromkeys(value)) if value else None

    @field_validator("EMBED_DIMENSIONS", mode="before")
    @classmethod
    def _blank_dims(cls, value: object) -> object:
        return None if value == "" else value

    @field_validator(
        "ACCOUNT_ID",
        "AGENT_SLUG",
        "SESSION_ID",
        "SESSION_NODE_ID",
        "TASK_ROLE",
        "MEMBER_ID",
        "MAXY_TASK_BACKOFF_BASE_S",
        "MAXY_TASK_BACKOFF_CAP_S",
        "NEO4J_PASSWORD",
        "NEO4J_DATABASE",
        "NEO4J_HEAP",
        "NEO4J_PAGECACHE",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "MAXY_SUMMARY_MODEL",
        "MAXY_COMMUNITY_MODEL",
        *AGENT_MODEL_VARIABLES,
        "MAXY_COMMUNITY_TIMEOUT_S",
        "MAXY_CHUNK_MIN_CHARS",
        "MAXY_CHUNK_TARGET_CHARS",
        "MAXY_CHUNK_MAX_CHARS",
        "LOG_LEVEL",
        mode="before",
    )
    @classmethod
    def _blank_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("NEO4J_URI")
    @classmethod
    def _neo4j_uri(cls, value: str) -> str:
        return check_neo4j_uri(value)

    @field_validator(
        "NEO4J_USER",
        "EMBED_MODEL",
        "MAXY_SUMMARY_MODEL",
        "MAXY_AGENT_MODEL",
        "MAXY_COMMUNITY_MODEL",
        *AGENT_MODEL_VARIABLES,
    )
    @classmethod
    def _one_token(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.strip():
            raise ValueError("is empty")
        if not _ONE_TOKEN.match(value):
            raise ValueError(f"{value!r} has spaces or control characters")
        return value

    @field_validator("ACCOUNT_ID")
    @classmethod
    def _account(cls, value: str | None) -> str | None:
        if value is not None and not _ONE_LINE.match(value.strip()):
            raise ValueError(f"{value!r} has control characters inside")
        return value.strip() if value is not None else None

    @model_validator(mode="after")
    def _account_by_name(self) -> Settings:
        # ACCOUNT_ID may name an account; everything downstream sees its id. A name that matches
        # no account, or several, is kept as given: validation at start reports it in one line.
        if self.ACCOUNT_ID and not _is_uuid(self.ACCOUNT_ID):
            from .accounts import canonical_account_id

            self.ACCOUNT_ID = canonical_account_id(self.data_root, self.ACCOUNT_ID) or self.ACCOUNT_ID
        return self

    @field_validator("SESSION_ID", "SESSION_NODE_ID", "ANTHROPIC_API_KEY")
    @classmethod
    def _token_or_none(cls, value: str | None) -> str | None:
        if value is not None and not _ONE_TOKEN.match(value.strip()):
            raise ValueError(f"{value!r} has spaces or control characters inside")
        return value.strip() if value is not None else None

    @field_validator("NEO4J_PASSWORD")
    @classmethod
    def _password(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("has a control character (a pasted newline?)")
        return value

    @field_validator("NEO4J_DATABASE")
    @classmethod
    def _database_name(cls, value: str | None) -> str | None:
        if value is not None and not _DATABASE_NAME.match(value):
            raise ValueError(f"{value!r} is not a database name (a letter, then letters, digits, '.', '-' or '_')")
        return value

    @field_validator("NEO4J_MANAGED")
    @classmethod
    def _managed(cls, value: str) -> str:
        if value.strip().lower() not in MANAGED_VALUES:
            raise ValueError(f"{value!r} is not auto, true or false")
        return value

    @field_validator("NEO4J_VERSION")
    @classmethod
    def _version(cls, value: str) -> str:
        if not _NEO4J_VERSION.match(value):
            raise ValueError(f"{value!r} is not a Neo4j version")
        return value

    @field_validator("NEO4J_HEAP", "NEO4J_PAGECACHE")
    @classmethod
    def _memory_size(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not _MEMORY_SIZE.match(value.strip()):
            raise ValueError(f"{value!r} is not a memory size")
        if not value.strip().rstrip("kmgtKMGT").strip("0"):
            raise ValueError(f"{value!r} is zero")
        return value.strip()

    @field_validator("EMBED_DIMENSIONS", "EMBED_TIMEOUT_S")
    @classmethod
    def _positive(cls, value: float | None) -> float | None:
        if value is not None and not value > 0:
            raise ValueError(f"{value!r} is not above 0")
        return value

    @field_validator("OLLAMA_URL", "ANTHROPIC_BASE_URL")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parsed = urlparse(value.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"{value!r} is not an http:// or https:// address")
        return value.strip()

    @field_validator("AGENT_SLUG")
    @classmethod
    def _slug(cls, value: str | None) -> str | None:
        from .errors import ValidationError

        if value is None:
            return None
        try:
            return check_agent_slug(value.strip())
        except ValidationError as exc:
            raise ValueError(exc.reason) from None

    @field_validator("TASK_ROLE")
    @classmethod
    def _task_role(cls, value: str | None) -> str | None:
        if value is not None and value.strip() not in TASK_ROLE_VALUES:
            raise ValueError(f"{value!r} is not a task role")
        return value.strip() if value is not None else None

    @field_validator("MEMBER_ID")
    @classmethod
    def _member_id(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(MEMBER_ID_PATTERN, value.strip()):
            raise ValueError(f"{value!r} is not a member id")
        return value.strip() if value is not None else None

    @field_validator("KNOWLEDGE_KEYWORDS")
    @classmethod
    def _keywords(cls, value: list[str] | None) -> list[str] | None:
        for word in value or ():
            if any(ord(ch) < 32 or ord(ch) == 127 for ch in word):
                raise ValueError(f"{word!r} has a control character")
        return value

    @field_validator("DATA_ROOT")
    @classmethod
    def _folder(cls, value: Path | None) -> Path | None:
        if value is None:
            return None
        folder = expand_path(value)
        if folder.exists() and not folder.is_dir():
            raise ValueError(f"{str(value)!r} is a file, not a folder")
        return value

    @field_validator("MAXY_BM25_STATS")
    @classmethod
    def _bm25_stats(cls, value: str) -> str:
        if value.strip().lower() not in BM25_STATS:
            raise ValueError(f"{value!r} is not account or index")
        return value.strip().lower()

    @field_validator("LOG_LEVEL")
    @classmethod
    def _log_level(cls, value: str | None) -> str | None:
        if value is not None and value.strip().upper() not in LOG_LEVELS:
            raise ValueError(f"{value!r} is not a log level")
        return value.strip().upper() if value is not None else None

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
    """Fresh settings: environment first, then ``<config dir>/.env``, then defaults.

    A malformed value raises :class:`SettingsError`: one line naming the variable, its value,
    what is wrong and how to set it."""
    try:
        return Settings(_env_file=env_file(), **overrides)  # type: ignore[call-arg,arg-type]
    except PydanticValidationError as err:
        raise settings_error(err) from None
    except UnicodeDecodeError as err:
        raise ConfigError(not_utf8(err, env_file())) from None
    except OSError as err:
        raise ConfigError(describe(err, env_file(), action="read", setting="MAXY_CONFIG_DIR")) from None


# How to set each variable right, said after what is wrong with it.
FIXES: dict[str, str] = {
    "NEO4J_URI": f"use scheme://host[:port] with a scheme of {', '.join(NEO4J_SCHEMES)}, e.g. bolt://127.0.0.1:7687",
    "NEO4J_USER": "set it to the Neo4j user name, e.g. neo4j",
    "NEO4J_PASSWORD": "set it to the password alone, on one line",
    "NEO4J_DATABASE": "set it to a database the server lists in SHOW DATABASES, or unset it for the default",
    "NEO4J_MANAGED": "set it to auto (launch the server when NEO4J_URI is local), true or false",
    "NEO4J_VERSION": "set it to a released Neo4j version, e.g. 2026.08.1",
    "NEO4J_HEAP": "set it to a size such as 1g or 512m, or unset it to size it from the available memory",
    "NEO4J_PAGECACHE": "set it to a size such as 512m or 2g, or unset it to size it from the available memory",
    "EMBED_MODEL": "set it to bge-small-en-v1.5, all-MiniLM-L6-v2 or an Ollama model name",
    "EMBED_DIMENSIONS": "set it to the model's vector length, e.g. 384",
    "OLLAMA_URL": "set it to the Ollama server's address, e.g. http://localhost:11434",
    "ACCOUNT_ID": "set it to a name or an id from `maxy account list`",
    "DATA_ROOT": "set it to a folder (it is created when missing), e.g. ~/.maxy/data",
    "ALLOWED_SCOPES": f"set it to a comma-separated list of {', '.join(SCOPE_VALUES)}, or unset it",
    "AGENT_SLUG": "set it to an agent slug such as support-bot, or unset it",
    "SESSION_ID": "set it to the session's id alone, or unset it",
    "SESSION_NODE_ID": "set it to a conversation's sessionId or nodeId, or unset it",
    "KNOWLEDGE_KEYWORDS": "set it to comma-separated words, e.g. billing,refunds",
    "TASK_ROLE": f"set it to one of {', '.join(TASK_ROLE_VALUES)}, or unset it (task tools then only read)",
    "MAXY_TASK_BACKOFF_BASE_S": "set it to seconds, e.g. 30, or unset it",
    "MAXY_TASK_BACKOFF_CAP_S": "set it to seconds, e.g. 600, or unset it",
    "EXCLUDED_PLUGINS": "set it to comma-separated plugin names as `maxy mcp plugins` shows them, e.g. work, or unset it",
    "ANTHROPIC_API_KEY": "set it to the key alone, on one line, or unset it",
    "ANTHROPIC_BASE_URL": "set it to the Messages API's address, e.g. https://api.anthropic.com, or unset it",
    "MAXY_SUMMARY_MODEL": "set it to a Claude model name, e.g. claude-haiku-4-5, or unset it",
    "MAXY_AGENT_MODEL": "set it to a Claude model name, e.g. claude-haiku-4-5, or unset it for that default",
    "MEMBER_ID": "set it to a member id (a letter or digit, then letters, digits, '.', '_', '@' or '-'; at most 64), or unset it",
    "MAXY_COMMUNITY_MODEL": "set it to a Claude model name, e.g. claude-haiku-4-5, or unset it",
    **{name: "set it to a Claude model name, e.g. claude-haiku-4-5, or unset it" for name in AGENT_MODEL_VARIABLES},
    "MAXY_COMMUNITY_TIMEOUT_S": "set it to seconds above 0, e.g. 20, or unset it for each agent's own",
    "MAXY_DISCOVERY_NEGOTIATE_S": "set it to seconds, e.g. 60 (0 leaves every negotiation to the sweep)",
    "MAXY_SWEEP_INTERVAL_S": "set it to seconds above 0, e.g. 60",
    "MAXY_CHUNK_MIN_CHARS": "set it to a number of characters, e.g. 300, or unset it",
    "MAXY_CHUNK_TARGET_CHARS": "set it to a number of characters, e.g. 1200, or unset it",
    "MAXY_CHUNK_MAX_CHARS": "set it to a number of characters, e.g. 1500, or unset it",
    "MAXY_INGEST_BATCH_NODES": "set it to a number of nodes, e.g. 256, or unset it",
    "LOG_LEVEL": f"set it to one of {', '.join(LOG_LEVELS)}, or unset it",
    "MAXY_BM25_STATS": "set it to account (each account's own statistics, the default) or index",
}

# What pydantic's own errors mean, in the words of a setting's value; a bound reads as its fix.
_TYPE_REASONS = {
    "int_parsing": "is not a whole number",
    "int_from_float": "is not a whole number",
    "float_parsing": "is not a number",
    "bool_parsing": "is not true or false",
    "finite_number": "is not a finite number",
}
_BOUNDS = {"gt": "above {}", "ge": "at least {}", "lt": "below {}", "le": "at most {}"}


def check_neo4j_uri(value: str) -> str:
    """The URI as the driver takes it, or ValueError saying what is wrong with its shape."""
    text = value.strip()
    if "://" not in text:
        raise ValueError(f"{value!r} is not a URI")
    try:
        parsed = urlparse(text)
        port = parsed.port
    except ValueError:
        raise ValueError(f"{value!r} has a port that is not a number from 1 to 65535") from None
    if parsed.scheme not in NEO4J_SCHEMES:
        raise ValueError(f"scheme {parsed.scheme!r} of {value!r} is not a Neo4j scheme")
    if not parsed.hostname:
        raise ValueError(f"{value!r} has no host")
    if port == 0:
        raise ValueError(f"{value!r} has a port that is not a number from 1 to 65535")
    if parsed.path not in ("", "/"):
        raise ValueError(f"{value!r} has a path ({parsed.path}); the database goes in NEO4J_DATABASE")
    if parsed.query and not parsed.scheme.startswith("neo4j"):
        raise ValueError(f"{value!r} has routing parameters, which only neo4j:// URIs take")
    return text


def settings_error(err: PydanticValidationError) -> SettingsError:
    """The first bad setting of ``err`` as one line: name, value, reason, fix (and the file it is in)."""
    errors = err.errors()
    first = errors[0]
    name = str(first["loc"][0]) if first["loc"] else "settings"
    value = first.get("input")
    shown = f"{value!r} " if isinstance(value, str) else ""
    bound = next((k for k in _BOUNDS if k in (first.get("ctx") or {})), None)
    if first["type"] == "value_error":
        reason = str(first["msg"]).removeprefix("Value error, ")
    elif bound:
        reason = f"{shown}is out of range"
    else:
        reason = shown + _TYPE_REASONS.get(first["type"], str(first["msg"]).lower())
    if bound:
        fix = "set it to a number " + _BOUNDS[bound].format(f"{first['ctx'][bound]:g}")
    elif name.startswith("MAXY_GS_") or name == "MAXY_MCP_STATELESS":
        fix = "set it to true or false"
    else:
        fix = FIXES.get(name, "") or _default_fix(name)
    where = f" (set in {env_file()})" if name not in os.environ and _in_env_file(name) else ""
    more = f" ({len(errors) - 1} more setting(s) are wrong too)" if len(errors) > 1 else ""
    return SettingsError(name, f"{name}: {reason}{'; ' + fix if fix else ''}{where}{more}")


def _in_env_file(name: str) -> bool:
    try:
        lines = env_file().read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    return any(line.split("=", 1)[0].strip() == name for line in lines if "=" in line)


def _default_fix(name: str) -> str:
    field = Settings.model_fields.get(name)
    default = None if field is None else field.default
    return "" if default is None else f"set it like its default, {name}={default}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings()


def write_env_values(values: dict[str, str]) -> Path:
    """Update ``<config dir>/.env`` in place, keeping other lines; the file is mode 0600."""
    path = env_file()
    try:
        lines: list[str] = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    except UnicodeDecodeError as err:
        raise ConfigError(not_utf8(err, path)) from None
    except OSError as err:
        raise ConfigError(describe(err, path, action="read", setting="MAXY_CONFIG_DIR")) from None
    remaining = dict(values)
    out: list[str] = []
    for line in lines:
        key = line.split("=", 1)[0].strip() if "=" in line and not line.lstrip().startswith("#") else None
        if key in remaining:
            out.append(f"{key}={remaining.pop(key)}")
        else:
            out.append(line)
    out.extend(f"{k}={v}" for k, v in remaining.items())
    atomic_write(path, "\n".join(out) + "\n", mode=0o600, setting="MAXY_CONFIG_DIR")
    get_settings.cache_clear()
    return path
