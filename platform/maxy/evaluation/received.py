"""``maxy eval received``: what reaches the agent, measured through the real tool.

Every question is asked the way an admin agent asks it: through a real MCP client session (the
SDK's stdio client) against the server that the default ``maxy mcp config`` entry starts, with
``{"query": question, "limit": k}`` for each k of :data:`LIMITS`. What is measured is what the
agent reads, the tool's text content:

- **reach@k**: the share of questions whose gold text reaches the agent at limit k. A gold text
  reaches it when two of three 8-word windows of it (its start, middle and end) appear in the
  text as whole words, whitespace and case folded; a gold text of 8 words or fewer must appear
  whole. A question
  with several gold texts counts when one of them reaches the agent.
- **hits@k**: how many results the answer holds (its structured content), on average.
- **tokens@k**: the answer's size in tokens (characters / 4), mean and 95th percentile.
- **tools/list**: the tokens of the server's tool list, what the agent pays before its first question.

The data sets are the evaluation folders the other evaluations read (a BEIR folder: its corpus
ingested once, as ``maxy eval beir`` does; LoCoMo: each conversation's facts written as
``maxy eval memory`` writes them, and its messages imported as ``maxy eval conversations``
does), and a folder of documents with a questions file (``{"question", "gold"}`` per line).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import ValidationError
from ..logs import log_line
from .metrics import percentile

LIMITS = (3, 5, 10)
WINDOW = 8
CHARS_PER_TOKEN = 4


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def windows(gold: str) -> list[str]:
    """The start, middle and end 8-word windows of a gold text (the whole of a short one)."""
    words = _folded(gold).split()
    if len(words) <= WINDOW:
        return [" ".join(words)] if words else []
    starts = sorted({0, (len(words) - WINDOW) // 2, len(words) - WINDOW})
    return [" ".join(words[s : s + WINDOW]) for s in starts]


def reaches(gold: str, text: str) -> bool:
    """Whether a gold text reaches the agent in ``text`` (two of its three windows, or all of it)."""
    found = windows(gold)
    if not found:
        return False
    folded = f" {_folded(text)} "
    need = 1 if len(found) == 1 else 2
    return sum(f" {w} " in folded for w in found) >= need  # whole words: "e" is not in "here"


def tokens(text: str) -> int:
    return round(len(text) / CHARS_PER_TOKEN)


@dataclass
class Question:
    text: str
    golds: list[str]


@dataclass
class AccountQuestions:
    """The questions asked in one account, through one tool."""

    account_id: str
    tool: str  # memory-search or conversation-search
    questions: list[Question]


@dataclass
class Tally:
    reached: dict[int, int] = field(default_factory=dict)
    hits: dict[int, list[int]] = field(default_factory=dict)
    sizes: dict[int, list[int]] = field(default_factory=dict)
    asked: int = 0
    tools_list_tokens: int = 0
    tools: int = 0

    def add(self, limit: int, reached: bool, hits: int, size: int) -> None:
        self.reached[limit] = self.reached.get(limit, 0) + int(reached)
        self.hits.setdefault(limit, []).append(hits)
        self.sizes.setdefault(limit, []).append(size)

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"questions": self.asked, "toolsListTokens": self.tools_list_tokens, "tools": self.tools}
        for k in sorted(self.reached):
            sizes = self.sizes[k]
            out[f"reach@{k}"] = round(100 * self.reached[k] / max(self.asked, 1), 1)
            out[f"hits@{k}"] = round(sum(self.hits[k]) / max(len(self.hits[k]), 1), 2)
            out[f"tokens@{k}"] = {"mean": round(sum(sizes) / max(len(sizes), 1)), "p95": round(percentile(sizes, 95))}
        return out


def _hits_of(result: Any) -> int:
    data = result.structured_content or {}
    for key in ("hits", "results", "messages"):
        if isinstance(data.get(key), list):
            return len(data[key])
    return 0


def _text_of(result: Any) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _ask_account(
    entry: dict[str, Any], batch: AccountQuestions, limits: Sequence[int], tally: Tally, tick: Callable[[], None]
) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    env = {**os.environ, **entry["env"], "ACCOUNT_ID": batch.account_id, "LOG_LEVEL": "WARNING"}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            tally.tools = len(listed.tools)
            tally.tools_list_tokens = tokens(
                json.dumps(listed.model_dump(mode="json", by_alias=True, exclude_none=True))
            )
            for q in batch.questions:
                tally.asked += 1
                for k in limits:
                    result = await session.call_tool(batch.tool, {"query": q.text, "limit": k})
                    text = _text_of(result)
                    tally.add(k, any(reaches(g, text) for g in q.golds), _hits_of(result), tokens(text))
                tick()


def ask(
    settings: Settings,
    batches: Sequence[AccountQuestions],
    *,
    limits: Sequence[int] = LIMITS,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Ask every batch through the default server entry, one server per account; the figures."""
    import anyio

    from ..mcp.clientconfig import build_client_config
    from ..mcp.profiles import DEFAULT_PROFILES
    from ..plugins.discovery import discover_plugins

    plugins = discover_plugins(None, [])
    config = build_client_config(plugins, "admin", settings=settings, serve_all=True, profiles=DEFAULT_PROFILES)
    (entry,) = config["mcpServers"].values()
    tally = Tally()
    total = sum(len(b.questions) for b in batches)
    done = 0

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    for batch in batches:
        anyio.run(_ask_account, entry, batch, limits, tally, tick)
    figures = tally.figures()
    log_line("eval:received", **{k.replace("@", "_at_"): v for k, v in figures.items() if not isinstance(v, dict)})
    return figures


def load_questions(path: Path) -> list[Question]:
    """``{"question", "gold"}`` (gold: a text, or a list of texts) per line of a questions file."""
    out = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise ValidationError(f"{Path(path).name}:{n}", f"not JSON ({err.msg})") from None
        gold = row.get("gold") if isinstance(row, dict) else None
        golds = [gold] if isinstance(gold, str) else gold
        if not isinstance(row.get("question"), str) or not isinstance(golds, list) or not golds:
            raise ValidationError(f"{Path(path).name}:{n}", 'needs {"question": text, "gold": text or list of texts}')
        out.append(Question(row["question"], [str(g) for g in golds]))
    return out


# ---------------------------------------------------------------------------------------
# the data sets
def scifact_batches(
    settings: Settings, db: Any, embedder: Any, directory: Path, split: str, progress: Any = None
) -> list[AccountQuestions]:
    """A BEIR folder: its corpus ingested once (as ``maxy eval beir`` does); each claim's gold
    texts are the abstracts judged relevant to it."""
    from .beir import ensure_corpus, eval_account, load_beir

    data = load_beir(directory, split)
    account = eval_account(settings, data)
    ensure_corpus(settings, db, embedder, data, account, progress=progress)
    texts = {str(d["_id"]): str(d.get("text") or "") for d in data.corpus}
    questions = [
        Question(data.queries[qid], [texts[doc] for doc, score in judged.items() if score > 0 and texts.get(doc)])
        for qid, judged in sorted(data.qrels.items())
        if qid in data.queries
    ]
    return [AccountQuestions(account.account_id, "memory-search", [q for q in questions if q.golds])]


def locomo_fact_batches(settings: Settings, db: Any, embedder: Any, directory: Path) -> list[AccountQuestions]:
    """LoCoMo's facts written per conversation (as ``maxy eval memory`` writes them); a
    question's gold texts are the facts whose evidence it asks about."""
    from ..graph.write import GraphWriter
    from .memory import fresh_account, write_facts
    from .memory import load as load_facts

    facts, questions = load_facts(directory)
    batches = []
    for conversation, rows in sorted(facts.items()):
        account = fresh_account(settings, db, conversation)
        write_facts(GraphWriter(db, account, embedder, created_by="eval"), rows)
        asked = [
            Question(q["question"], [f["fact"] for f in rows if set(f["evidence"]) & set(q["evidence"])])
            for q in questions
            if str(q.get("conversation")) == conversation
        ]
        batches.append(AccountQuestions(account.account_id, "memory-search", [q for q in asked if q.golds]))
    return batches


def locomo_message_batches(settings: Settings, db: Any, embedder: Any, directory: Path) -> list[AccountQuestions]:
    """LoCoMo's messages imported per conversation (as ``maxy eval conversations`` does); a
    question's gold texts are its evidence turns."""
    from .conversations import conversation_account
    from .conversations import load as load_messages

    by_conv, questions = load_messages(directory)
    batches = []
    for conversation, messages in sorted(by_conv.items()):
        account = conversation_account(settings, db, embedder, conversation, messages)
        turns = {m.message_id: m.content for m in messages}
        asked = [
            Question(q["question"], [turns[e] for e in q["evidence"] if turns.get(e)])
            for q in questions
            if str(q.get("conversation")) == conversation
        ]
        batches.append(AccountQuestions(account.account_id, "conversation-search", [q for q in asked if q.golds]))
    return batches


def folder_batches(
    settings: Settings, db: Any, embedder: Any, folder: Path, questions_file: Path
) -> list[AccountQuestions]:
    """A folder of documents, ingested into an account of its own (emptied first), and a
    questions file (``{"question", "gold"}`` per line) whose gold texts were checked by hand."""
    from ..graph.write import GraphWriter
    from ..ingest.hierarchy import ingest_paths
    from .accounts import empty_account, named_account

    questions = load_questions(questions_file)
    account = named_account(settings, f"received:{Path(folder).resolve().name}")
    empty_account(db, account)
    ingest_paths([folder], GraphWriter(db, account, embedder, created_by="eval"))
    return [AccountQuestions(account.account_id, "memory-search", questions)]
