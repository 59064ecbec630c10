"""An agent's knowledge snapshot (``maxy agent knowledge build SLUG``): ``KNOWLEDGE.md`` and
``KNOWLEDGE-SUMMARY.md`` baked from the graph.

What goes in: the nodes tagged for the agent (its slug in their ``agents``), broadened by its
keyword subscriptions (full-text matches and nodes whose ``keywords`` list holds one), both read
through the guards with the agent's own scopes. A subscription reaches past the agent tag, never
past the scope: every node must also carry one of the agent's scopes explicitly, so an admin-scoped
or unscoped node never lands in a public agent's files. Conversations, messages, tasks, profiles,
alerts and other operational labels are left out: the snapshot holds what the agent may say.

The summary is written by Claude when ``ANTHROPIC_API_KEY`` is set and it answers in time
(``MAXY_SUMMARY_MODEL``, ``MAXY_SUMMARY_TIMEOUT_S``, as for ingest summaries), else extracted (each node's title and first sentence). The summary is written after the full file, so
the staleness guard prefers it; a crash between the two leaves the full file newer, which the guard
then uses. Files written by hand (without the generated header) are replaced only when asked.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..config import Settings
from ..db import Database
from ..errors import ConfigError, ValidationError
from ..fsfaults import atomic_write
from ..graph.allowlist import SEARCHABLE_LABELS, bookkeeping_properties
from ..graph.guards import Caller, generic_guard
from ..llm import HAIKU, LLMUnavailable, complete
from ..logs import log_line, short
from ..search.graph_expansion import properties_of, visible
from ..search.subscriptions import subscribed
from .store import AgentConfig, agent_dir, read_agent

KNOWLEDGE_FILE, SUMMARY_FILE = "KNOWLEDGE.md", "KNOWLEDGE-SUMMARY.md"
# Labels that record how the account works rather than what an agent may tell a visitor.
PRIVATE_LABELS = frozenset(
    {
        "Conversation",
        "Message",
        "MemoryEntry",
        "Task",
        "Workflow",
        "Preference",
        "UserProfile",
        "AdminUser",
        "EmailThread",
        "Email",
        "Alert",
        "Briefing",
        "Report",
        "Section",  # a document's structure: its chunks carry the text
    }
)
KNOWLEDGE_LABELS = tuple(label for label in SEARCHABLE_LABELS if label not in PRIVATE_LABELS)
DEFAULT_LIMIT, MAX_LIMIT = 200, 2000
MAX_SUBSCRIPTION_DEPTH = 8 * MAX_LIMIT  # how deep a keyword's hits are read at most
MAX_VALUE_CHARS = 2000  # one property's text
MAX_KNOWLEDGE_CHARS = 120_000  # the whole KNOWLEDGE.md; nodes past it are left out (and counted)
SUMMARY_CHARS = 6000
HEADER = "<!-- maxy:knowledge"
TITLE_KEYS = ("name", "title", "headline", "question", "term", "sectionTitle", "documentTitle")
TEXT_KEYS = ("description", "text", "answer", "summary", "content", "body")
# Who may see a node and where it came from on the operator's disk: not what it says.
HIDDEN_HERE = frozenset({"scope", "agents", "nodeId", "sourcePath"})

_SUMMARY_SYSTEM = (
    "You condense the knowledge file of a public web agent. Keep every concrete fact a visitor may "
    "ask about (names, prices, opening hours, addresses, dates, policies); drop repetition. Answer in "
    "Markdown bullet points grouped under short headings, at most 600 words, and add nothing that "
    "the file does not say."
)


@dataclass(frozen=True)
class KnowledgeItem:
    node_id: str
    labels: tuple[str, ...]
    properties: dict[str, Any]
    via: str  # "tagged" or "keywords"

    @property
    def title(self) -> str:
        for key in TITLE_KEYS:
            value = self.properties.get(key)
            if isinstance(value, str) and value.strip():
                return _one_line(value, 120)
        text = self.properties.get("text")
        return _one_line(text, 80) if isinstance(text, str) and text.strip() else self.labels[0]

    @property
    def body(self) -> list[tuple[str, Any]]:
        """The properties beside the title, bookkeeping and visibility fields left out, sorted."""
        hidden = bookkeeping_properties(self.labels) | HIDDEN_HERE
        title_key = next((k for k in TITLE_KEYS if isinstance(self.properties.get(k), str)), None)
        return sorted(
            (k, v) for k, v in self.properties.items() if k not in hidden and k != title_key and v is not None
        )


@dataclass(frozen=True)
class KnowledgeBuild:
    slug: str
    items: tuple[KnowledgeItem, ...]
    left_out: int  # nodes past the file's size cap
    summary: str  # "claude" or "extractive"
    summary_reason: str | None  # why the summary is extractive when a model was asked
    knowledge_path: Path
    summary_path: Path
    knowledge_chars: int
    summary_chars: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "slug": self.slug,
            "nodes": len(self.items),
            "tagged": sum(1 for i in self.items if i.via == "tagged"),
            "fromKeywords": sum(1 for i in self.items if i.via == "keywords"),
            "leftOut": self.left_out,
            "summary": self.summary,
            "summaryReason": self.summary_reason,
            "knowledgeFile": str(self.knowledge_path),
            "summaryFile": str(self.summary_path),
            "knowledgeChars": self.knowledge_chars,
            "summaryChars": self.summary_chars,
            "nodeIds": [i.node_id for i in self.items],
        }


def check_limit(limit: object) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= MAX_LIMIT:
        raise ValidationError("--limit", f"a whole number of nodes from 1 to {MAX_LIMIT} (got {limit!r})")
    return limit


def gather(db: Database, account_id: str, config: AgentConfig, limit: int = DEFAULT_LIMIT) -> list[KnowledgeItem]:
    """The nodes of the agent's snapshot: tagged ones newest first, then keyword matches best first."""
    limit = check_limit(limit)
    scopes = list(config.allowed_scopes)
    tagged_view = Caller(account_id, config.allowed_scopes, config.slug)
    wide_view = Caller(account_id, config.allowed_scopes, None)  # the subscriptions' reach: the scope
    guard = generic_guard(tagged_view, "n")
    rows = db.read(
        f"""
        MATCH (n:Node) WHERE {guard.clause} AND {_KNOWLEDGE_NODE}
        RETURN n.nodeId AS id ORDER BY n.updatedAt DESC, n.nodeId LIMIT $limit
        """,
        limit=limit,
        **_filter_params(scopes),
        **guard.params,
    )
    items = _load(db, wide_view, scopes, {r["id"]: "tagged" for r in rows})
    if config.knowledge_keywords and len(items) < limit:
        # a subscription reaches past the agent tag: its hits count toward the limit only once
        # they have passed the same scope and label rules (_load)
        items += _subscribed_items(db, wide_view, config, {item.node_id for item in items}, limit - len(items))
    return items


def _subscribed_items(
    db: Database, view: Caller, config: AgentConfig, seen: set[str], wanted: int
) -> list[KnowledgeItem]:
    """Up to ``wanted`` subscription hits that pass the rules, best first: each list is read
    deeper (twice as deep each round) while hits that fail the rules crowd out the rest."""
    k = wanted
    while True:
        hits = subscribed(db, view, config.knowledge_keywords, KNOWLEDGE_LABELS, k)
        matched = {h.node_id: "keywords" for h in hits if h.node_id not in seen}
        found = _load(db, view, list(config.allowed_scopes), matched)
        if len(found) >= wanted or len(hits) < k or k >= MAX_SUBSCRIPTION_DEPTH:
            return found[:wanted]
        k *= 2


# What a node needs to enter a snapshot: one of the agent's scopes written on it, one knowledge
# label, and no label of the account's working records (a :Task:Project stays out).
_KNOWLEDGE_NODE = (
    "n.scope IN $kScopes AND any(l IN labels(n) WHERE l IN $kLabels) AND none(l IN labels(n) WHERE l IN $kPrivate)"
)


def _filter_params(scopes: list[str]) -> dict[str, Any]:
    return {"kScopes": scopes, "kLabels": list(KNOWLEDGE_LABELS), "kPrivate": sorted(PRIVATE_LABELS)}


def _load(db: Database, view: Caller, scopes: list[str], via: dict[str, str]) -> list[KnowledgeItem]:
    if not via:
        return []
    guard = generic_guard(view, "n")
    rows = db.read(
        f"""
        UNWIND $ids AS id
        MATCH (n:Node {{nodeId: id}}) WHERE {guard.clause} AND {_KNOWLEDGE_NODE}
        RETURN n.nodeId AS id, [l IN labels(n) WHERE l <> 'Node'] AS labels, {properties_of("n")} AS props
        """,
        ids=list(via),
        **_filter_params(scopes),
        **guard.params,
    )
    loaded = {r["id"]: r for r in rows}
    return [
        KnowledgeItem(node_id, tuple(sorted(loaded[node_id]["labels"])), visible(loaded[node_id]["props"]), how)
        for node_id, how in via.items()
        if node_id in loaded
    ]


def render_knowledge(
    config: AgentConfig, items: Sequence[KnowledgeItem], built: str
) -> tuple[str, list[KnowledgeItem]]:
    """KNOWLEDGE.md's text and the nodes it holds (the size cap may leave the last ones out)."""
    title = f"# What {config.display_name} knows\n"
    if not items:
        title += (
            "\nNothing is tagged for this agent yet: tag public nodes with its slug, or give it keywords "
            f"(`maxy agent update {config.slug} --keyword ...`), then build again.\n"
        )
    size, kept, sections = len(title), [], []
    for label, group in _grouped(items):
        section = [f"\n## {label}\n"]
        for item in group:
            block = _node_block(item)
            if size + len(block) > MAX_KNOWLEDGE_CHARS:
                continue
            section.append(block)
            kept.append(item)
            size += len(block)
        if len(section) > 1:
            sections.extend(section)
    return _header(config, built, len(kept)) + title + "".join(sections), kept


def extractive_summary(config: AgentConfig, items: Sequence[KnowledgeItem]) -> str:
    """Each node's title and first sentence, grouped by label, within SUMMARY_CHARS."""
    lines: list[str] = []
    size = 0
    for label, group in _grouped(items):
        heading = f"\n## {label}\n"
        entries = []
        for item in group:
            first = _first_sentence(item)
            entry = f"- **{item.title}**" + (f": {first}" if first else "") + "\n"
            if size + len(heading) + len(entry) > SUMMARY_CHARS:
                break
            entries.append(entry)
            size += len(entry)
        if entries:
            lines.append(heading)
            lines.extend(entries)
            size += len(heading)
    return "".join(lines) if lines else "Nothing is known yet.\n"


def build_knowledge(
    settings: Settings,
    db: Database,
    account_id: str,
    slug: str,
    *,
    limit: int = DEFAULT_LIMIT,
    force: bool = False,
) -> KnowledgeBuild:
    """Regenerate the agent's KNOWLEDGE.md and KNOWLEDGE-SUMMARY.md from the graph."""
    started = time.monotonic()
    limit = check_limit(limit)
    config = read_agent(settings.data_root, account_id, slug)
    folder = agent_dir(settings.data_root, account_id, slug)
    full_path, summary_path = folder / KNOWLEDGE_FILE, folder / SUMMARY_FILE
    for path in (full_path, summary_path):
        _check_replaceable(path, slug, force)
    items = gather(db, account_id, config, limit)
    built = datetime.now(UTC).isoformat(timespec="seconds")
    knowledge, kept = render_knowledge(config, items, built)
    left_out = len(items) - len(kept)
    summary_text, how, reason = _summarise(settings, config, kept, knowledge)
    summary = _header(config, built, len(kept), summary=how) + summary_text
    atomic_write(full_path, knowledge, mode=0o600, setting="DATA_ROOT")
    atomic_write(summary_path, summary, mode=0o600, setting="DATA_ROOT")  # after: the guard prefers it
    result = KnowledgeBuild(
        config.slug, tuple(kept), left_out, how, reason, full_path, summary_path, len(knowledge), len(summary)
    )
    extra: dict[str, Any] = {"reason": reason} if reason else {}
    log_line(
        "agents",
        "knowledge-build",
        accountId=short(account_id),
        slug=config.slug,
        nodes=len(kept),
        tagged=result.as_dict()["tagged"],
        fromKeywords=result.as_dict()["fromKeywords"],
        leftOut=left_out,
        summary=how,
        chars=len(knowledge),
        ms=round((time.monotonic() - started) * 1000),
        **extra,
    )
    return result


def _summarise(
    settings: Settings, config: AgentConfig, items: Sequence[KnowledgeItem], knowledge: str
) -> tuple[str, str, str | None]:
    """(text, "claude" | "extractive", why not Claude when it was asked)."""
    if not settings.ANTHROPIC_API_KEY or not items:
        return extractive_summary(config, items), "extractive", None
    try:
        text = complete(
            settings,
            f"<knowledge>\n{knowledge[:60_000]}\n</knowledge>",
            system=_SUMMARY_SYSTEM,
            max_tokens=1500,
            timeout=settings.MAXY_SUMMARY_TIMEOUT_S,
            model=settings.MAXY_SUMMARY_MODEL or HAIKU,
        )
    except LLMUnavailable as err:
        return extractive_summary(config, items), "extractive", str(err)[:120]
    return text.strip()[: SUMMARY_CHARS * 2] + "\n", "claude", None


def _check_replaceable(path: Path, slug: str, force: bool) -> None:
    for name in (path, path.with_name(path.name + ".tmp")):
        if name.is_symlink():
            raise ConfigError(f"{name} is a symbolic link: agents' files are real files; remove the link")
    if force or not path.is_file():
        return
    head = path.read_text(encoding="utf-8", errors="replace")[:200]
    if head.strip() and not head.startswith(HEADER):
        raise ValidationError(
            "--force",
            f"{path.name} of agent {slug!r} was written by hand: keep a copy, then build again with --force to replace it",
        )


def _header(config: AgentConfig, built: str, nodes: int, summary: str | None = None) -> str:
    how = f" summary={summary}" if summary else ""
    return (
        f"{HEADER} agent={config.slug} built={built} nodes={nodes}{how}: "
        f"rebuilt by `maxy agent knowledge build {config.slug}`, which replaces edits made here -->\n"
    )


def _grouped(items: Sequence[KnowledgeItem]) -> list[tuple[str, list[KnowledgeItem]]]:
    groups: dict[str, list[KnowledgeItem]] = {}
    for item in items:
        groups.setdefault(item.labels[0], []).append(item)
    return [(label, sorted(groups[label], key=lambda i: (i.title.lower(), i.node_id))) for label in sorted(groups)]


def _node_block(item: KnowledgeItem) -> str:
    lines = [f"\n### {item.title}\n"]
    facts, texts = [], []
    for key, value in item.body:
        shown = _value(value)
        if not shown:
            continue
        if isinstance(value, str) and (len(value) > 120 or "\n" in value):
            texts.append(f"\n{shown}\n")
        else:
            facts.append(f"- {key}: {shown}\n")
    lines.extend(texts)
    if facts:
        lines.append("\n")
        lines.extend(facts)
    return "".join(lines)


def _value(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value if _value(v))
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value).strip()
    return text if len(text) <= MAX_VALUE_CHARS else text[:MAX_VALUE_CHARS].rstrip() + " …"


def _first_sentence(item: KnowledgeItem) -> str:
    """The first sentence of its main text (description, text, answer ...), else of its first text."""
    texts = [(k, v) for k, v in item.body if isinstance(v, str) and v.strip() and k != "keywords"]
    texts.sort(key=lambda kv: (kv[0] not in TEXT_KEYS, TEXT_KEYS.index(kv[0]) if kv[0] in TEXT_KEYS else 0))
    if not texts:
        return ""
    sentence = re.split(r"(?<=[.!?])\s", texts[0][1].strip(), maxsplit=1)[0]
    return _one_line(sentence, 200)


def _one_line(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"
