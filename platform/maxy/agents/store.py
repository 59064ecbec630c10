"""Public agents on disk: one directory per agent under its account,
``DATA_ROOT/accounts/<id>/agents/<slug>/``, holding ``config.json`` and the agent's own texts
(``IDENTITY.md``, ``SOUL.md``, ``KNOWLEDGE.md``, ``KNOWLEDGE-SUMMARY.md``).

``config.json`` holds the display name, ``liveMemory`` (whether the agent may search the graph
while it talks), ``knowledgeKeywords`` (at most five subscriptions) and ``allowedScopes``
(``public``, or ``public`` and ``shared``: never ``admin``). A slug is an agent slug (lower-case
letters, digits, ``-``, ``_``); every path is built from it and checked to resolve inside the
account's agents directory, and a symlink anywhere on the way is refused, so nothing outside the
account directory is ever read or written."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..accounts import accounts_dir, validate_account
from ..errors import ConfigError, ValidationError
from ..fsfaults import atomic_write
from ..identifiers import check_agent_slug
from ..logs import log_line, short

AGENTS_DIR = "agents"
CONFIG_FILE = "config.json"
TEXT_FILES = ("IDENTITY.md", "SOUL.md", "KNOWLEDGE.md", "KNOWLEDGE-SUMMARY.md")
MAX_KEYWORDS = 5
MAX_KEYWORD_CHARS = 64
MAX_NAME_CHARS = 120
AGENT_SCOPES = (("public",), ("public", "shared"))


@dataclass(frozen=True)
class AgentConfig:
    slug: str
    display_name: str
    live_memory: bool = False
    knowledge_keywords: tuple[str, ...] = ()
    allowed_scopes: tuple[str, ...] = ("public",)
    created_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    updated_at: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "displayName": self.display_name,
            "liveMemory": self.live_memory,
            "knowledgeKeywords": list(self.knowledge_keywords),
            "allowedScopes": list(self.allowed_scopes),
            "createdAt": self.created_at,
            "updatedAt": self.updated_at or self.created_at,
        }

    def checked(self) -> AgentConfig:
        """The same config with every field validated and normalised (ValidationError otherwise)."""
        return replace(
            self,
            slug=check_agent_slug(self.slug, field="slug"),
            display_name=check_display_name(self.display_name),
            live_memory=_flag(self.live_memory),
            knowledge_keywords=check_keywords(self.knowledge_keywords),
            allowed_scopes=check_agent_scopes(self.allowed_scopes),
        )


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValidationError("liveMemory", f"true or false (got {value!r})")
    return value


def check_display_name(value: object) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        raise ValidationError("displayName", f"a name of 1 to {MAX_NAME_CHARS} characters (got {value!r})")
    if any(ord(ch) < 32 for ch in value):
        raise ValidationError("displayName", "control characters (line breaks, tabs) are not allowed")
    return value.strip()


def check_keywords(values: object) -> tuple[str, ...]:
    """At most five distinct keywords, each a short line of text (case kept, duplicates dropped)."""
    if isinstance(values, str) or not isinstance(values, list | tuple):
        raise ValidationError("knowledgeKeywords", "a list of keywords")
    kept: list[str] = []
    for value in values:
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_KEYWORD_CHARS:
            raise ValidationError(
                "knowledgeKeywords", f"each keyword 1 to {MAX_KEYWORD_CHARS} characters (got {value!r})"
            )
        if any(ord(ch) < 32 for ch in value):
            raise ValidationError("knowledgeKeywords", f"control characters are not allowed (in {value!r})")
        word = value.strip()
        if word.lower() not in {k.lower() for k in kept}:
            kept.append(word)
    if len(kept) > MAX_KEYWORDS:
        raise ValidationError("knowledgeKeywords", f"at most {MAX_KEYWORDS} subscriptions (got {len(kept)})")
    return tuple(kept)


def check_agent_scopes(values: object) -> tuple[str, ...]:
    scopes = tuple(sorted({str(v).strip() for v in values})) if isinstance(values, list | tuple) else None
    if scopes not in AGENT_SCOPES:
        raise ValidationError(
            "allowedScopes", f"public, or public,shared: a public agent never reads admin (got {values!r})"
        )
    return scopes


def agents_root(data_root: Path, account_id: str) -> Path:
    """The account's agents directory (the account must exist and be valid)."""
    account = validate_account(data_root, account_id)
    return accounts_dir(data_root) / account.account_id / AGENTS_DIR


def agent_dir(data_root: Path, account_id: str, slug: str) -> Path:
    """The agent's directory, checked to lie inside the account's agents directory with no
    symlink on the way (a slug is validated first, so this holds by construction as well)."""
    slug = check_agent_slug(slug, field="slug")
    root = agents_root(data_root, account_id)
    path = root / slug
    for step in (root, path):
        if step.is_symlink():
            raise ConfigError(f"{step} is a symbolic link: agents live in real folders; remove the link")
    if path.exists() and path.resolve().parent != root.resolve():
        raise ConfigError(f"{path} resolves outside {root}: remove it")
    return path


def _read_config(path: Path) -> AgentConfig:
    file = path / CONFIG_FILE
    if file.is_symlink():
        raise ConfigError(f"{file} is a symbolic link: replace it with the file itself")
    try:
        raw = json.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file} is missing: run `maxy agent update {path.name}` to write it again") from None
    except (OSError, ValueError) as err:
        raise ConfigError(f"{file} cannot be read ({err}): fix it, or delete the agent and create it again") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{file} holds no JSON object: fix it, or delete the agent and create it again")
    try:
        return AgentConfig(
            slug=path.name,
            display_name=raw.get("displayName", path.name),
            live_memory=raw.get("liveMemory", False),
            knowledge_keywords=tuple(raw.get("knowledgeKeywords") or ()),
            allowed_scopes=tuple(raw.get("allowedScopes") or ("public",)),
            created_at=str(raw.get("createdAt", "")),
            updated_at=str(raw.get("updatedAt", "")),
        ).checked()
    except ValidationError as err:
        raise ConfigError(f"{file}: {err}; fix it with `maxy agent update {path.name}`") from None


def _write_config(path: Path, config: AgentConfig) -> None:
    atomic_write(path / CONFIG_FILE, json.dumps(config.as_dict(), indent=2) + "\n", mode=0o600, setting="DATA_ROOT")


def create_agent(data_root: Path, account_id: str, config: AgentConfig) -> AgentConfig:
    """A new agent's directory with its config and empty texts; refused when the slug is taken."""
    config = config.checked()
    path = agent_dir(data_root, account_id, config.slug)
    if path.exists():
        raise ValidationError("slug", f"agent {config.slug!r} exists: `maxy agent update {config.slug}` changes it")
    path.mkdir(parents=True, mode=0o700)
    _write_config(path, config)
    for name in TEXT_FILES[:2]:
        atomic_write(path / name, "", mode=0o600, setting="DATA_ROOT")
    log_line("agents", "create", accountId=short(account_id), slug=config.slug, liveMemory=config.live_memory)
    return config


def no_such_agent(slug: str) -> ValidationError:
    """The refusal for an agent that is not there (or not in the asker's view: the same words)."""
    return ValidationError("slug", f"no agent {slug!r} in this account: `maxy agent list` shows them")


def read_agent(data_root: Path, account_id: str, slug: str) -> AgentConfig:
    path = agent_dir(data_root, account_id, slug)
    if not path.is_dir():
        raise no_such_agent(slug)
    return _read_config(path)


def list_agents(data_root: Path, account_id: str) -> list[AgentConfig]:
    root = agents_root(data_root, account_id)
    if not root.is_dir():
        return []
    found = []
    for entry in sorted(root.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            try:
                found.append(read_agent(data_root, account_id, entry.name))
            except (ValidationError, ConfigError) as err:  # a stray folder or a broken config: named, skipped
                log_line("agents", "skip", path=str(entry), reason=str(err)[:200])
    return found


def update_agent(data_root: Path, account_id: str, slug: str, **changes: Any) -> AgentConfig:
    """The agent with ``changes`` (display_name, live_memory, knowledge_keywords, allowed_scopes)."""
    current = read_agent(data_root, account_id, slug)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    updated = replace(current, **changes, updated_at=now).checked()
    _write_config(agent_dir(data_root, account_id, slug), updated)
    log_line("agents", "update", accountId=short(account_id), slug=slug, changed=sorted(changes))
    return updated


def delete_agent(data_root: Path, account_id: str, slug: str) -> None:
    path = agent_dir(data_root, account_id, slug)
    if not path.is_dir():
        raise ValidationError("slug", f"no agent {slug!r} in this account: `maxy agent list` shows them")
    shutil.rmtree(path)
    log_line("agents", "delete", accountId=short(account_id), slug=slug)
