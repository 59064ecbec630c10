"""``maxy conversation import FILE.jsonl``: Conversation and Message nodes through the write path.

One line per message: ``{"conversation", "session", "id", "speaker", "role", "content",
"timestamp", "image_caption"?}``. Each session becomes a Conversation (sessionId = the
session value) and each line a Message linked to it (HAS_MESSAGE) and to the turn before
it (NEXT). Node ids derive from (account, session, message id), so a re-import updates in
place instead of duplicating. A message's ``content`` is the transcript line,
``"<speaker>: <text>"`` plus ``[image: <caption>]`` when one was shared: the one field BM25
scores then holds who said it and what was shown.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..fsfaults import describe, not_utf8
from ..graph.confine import id_root
from ..graph.validity import to_instant
from ..graph.write import Edge, GraphWriter, NodeSpec
from ..logs import log_line, short
from ..textcheck import check_clean

REQUIRED = ("conversation", "session", "id", "speaker", "content")
# Neighbouring turns folded into a message's summary (embedded, and BM25-searchable).
CONTEXT_BEFORE = 2
CONTEXT_AFTER = 1
CONTEXT_TURNS = (CONTEXT_BEFORE, CONTEXT_AFTER)


@dataclass(frozen=True)
class ImportedMessage:
    conversation: str
    session: str
    message_id: str
    speaker: str
    role: str
    content: str
    timestamp: str | None
    image_caption: str | None


def read_messages(path: Path) -> list[ImportedMessage]:
    path = Path(path)
    if not path.is_file():
        raise ValidationError("FILE", f"{path} does not exist")
    try:
        lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines: U+2028 may sit in a string
    except UnicodeDecodeError as err:
        raise ValidationError("FILE", not_utf8(err, path)) from None
    except OSError as err:
        raise ValidationError("FILE", describe(err, path, action="read")) from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValidationError(f"{path.name}:{n}", f"not JSON ({err.msg})") from None
        check_clean(row, f"{path.name}:{n}")
        out.append(parse_message(row, f"{path.name}:{n}"))
    return out


def parse_message(row: Any, where: str) -> ImportedMessage:
    if not isinstance(row, dict):
        raise ValidationError(where, "each line must be a JSON object")
    missing = [k for k in REQUIRED if not isinstance(row.get(k), str) or (k != "content" and not row[k].strip())]
    if missing:
        raise ValidationError(where, f"missing or empty field(s): {', '.join(missing)}")
    caption = row.get("image_caption")
    # Stored as UTC text, as an appended turn's is, so the time filters compare like with like;
    # a value that is no date is refused here rather than stored as text no filter reads.
    timestamp = to_instant(row["timestamp"], f"{where}: timestamp") if row.get("timestamp") not in (None, "") else None
    return ImportedMessage(
        row["conversation"].strip(),
        row["session"].strip(),
        row["id"].strip(),
        row["speaker"].strip(),
        str(row.get("role") or "user"),
        row["content"],
        timestamp,
        caption.strip() if isinstance(caption, str) and caption.strip() else None,
    )


def transcript_text(speaker: str | None, text: str, image_caption: str | None = None) -> str:
    """A message's stored ``content``: ``"<speaker>: <text>"`` (the text alone without a speaker)."""
    line = f"{speaker}: {text.strip()}" if speaker else text.strip()
    if image_caption:
        line += f" [image: {image_caption}]"
    return line


def transcript_line(m: ImportedMessage) -> str:
    return transcript_text(m.speaker, m.content, m.image_caption)


def context_summary(lines: Sequence[str], i: int) -> str | None:
    """The embedded text of turn ``i`` of a session's transcript lines: the turn with its
    neighbours, so a reply like "Yes, last Tuesday!" is found by what it answers (stored as the
    Message's summary); None for a turn without neighbours."""
    window = lines[max(0, i - CONTEXT_BEFORE) : i + CONTEXT_AFTER + 1]
    return "\n".join(window) if len(window) > 1 else None


def _node_id(account_id: str, *parts: str) -> str:
    digest = hashlib.sha1("\x1f".join((account_id, *parts)).encode()).hexdigest()[:24]
    return f"msg-{digest}"


def message_node_id(root: str, session: str, message_id: str) -> str:
    """A message's nodeId per (id root, session, message id): the same turn lands on the same node."""
    return _node_id(root, "message", session, message_id)


def imported_conversation_id(root: str, session: str) -> str:
    return _node_id(root, "conversation", session)


def build_specs(account_id: str, messages: Sequence[ImportedMessage]) -> list[NodeSpec]:
    """Conversation nodes first, then their messages in order (edges point backwards only).
    ``account_id`` is the id root: the account, plus the writer's view when pinned."""
    sessions: dict[str, list[ImportedMessage]] = {}
    for m in messages:
        sessions.setdefault(m.session, []).append(m)
    specs: list[NodeSpec] = []
    for session, turns in sessions.items():
        conv_id = imported_conversation_id(account_id, session)
        first = turns[0]
        specs.append(
            NodeSpec(
                ["Conversation"],
                {
                    "sessionId": session,
                    "conversationKey": first.conversation,
                    "title": f"{first.conversation} {session.rsplit('/', 1)[-1]}",
                    "startedAt": first.timestamp,
                    "messageCount": len(turns),
                    "participants": sorted({t.speaker for t in turns}),
                },
                node_id=conv_id,
            )
        )
        lines = [transcript_line(t) for t in turns]
        prev_id: str | None = None
        for i, m in enumerate(turns):
            node_id = message_node_id(account_id, session, m.message_id)
            edges = [Edge("HAS_MESSAGE", conv_id, "in")]
            if prev_id is not None:
                edges.append(Edge("NEXT", prev_id, "in"))
            props: dict[str, Any] = {
                "messageId": m.message_id,
                "sessionId": session,
                "conversationKey": m.conversation,
                "speaker": m.speaker,
                "role": m.role,
                "content": lines[i],
                "timestamp": m.timestamp,
                "position": i,
            }
            if m.image_caption:
                props["imageCaption"] = m.image_caption
            summary = context_summary(lines, i)
            if summary is not None:
                props["summary"] = summary
            specs.append(NodeSpec(["Message"], props, edges=edges, node_id=node_id))
            prev_id = node_id
    return specs


def import_messages(
    writer: GraphWriter,
    messages: Iterable[ImportedMessage],
    *,
    progress: Callable[[int], None] | None = None,
) -> dict[str, int]:
    started = time.perf_counter()
    messages = list(messages)
    specs = build_specs(id_root(writer.caller), messages)  # a pinned writer's ids carry its view
    results = writer.write_many(specs, progress=progress)
    summary = {
        "conversations": sum(1 for s in specs if "Conversation" in s.labels),
        "messages": sum(1 for s in specs if "Message" in s.labels),
        "created": sum(r.created for r in results),
        "embedded": sum(r.embedded for r in results),
        "ms": round((time.perf_counter() - started) * 1000),
    }
    log_line("conversation-import", accountId=short(writer.account.account_id), **summary)
    return summary
