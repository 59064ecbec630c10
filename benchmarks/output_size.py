"""Search output size: characters per result of memory-search's text, before and after the
compact rendering (bookkeeping left out, one hit per ingested document), same run, same hits.

    .venv/bin/python benchmarks/output_size.py --dir path/to/scifact [--locomo path/to/locomo] [--queries 50] [--json]

Three query sets, each through ``maxy.memory.recall.recall`` (the memory-search path, settings'
search configuration, limit 10, one hop) once per query; its uncollapsed hit list is rendered
three ways:

* old: the rendering before this change (``legacy_render`` below: a verbatim copy of
  ``maxy.search.format.render`` at commit b000aa6, every property, every level of a document);
* new, no collapse: today's ``render`` on the same list (bookkeeping left out only);
* new: ``collapse_documents`` (what ``recall`` applies by default) then ``render``: what
  memory-search returns now.

Sets: the demo (README.md and docs/ of this checkout, ingested into the account
``bench:output-size:demo`` as `maxy demo` does, and its three questions); SciFact
dev (the first ``--queries`` claims with judgements, against the account ``maxy eval beir``
built for that corpus, ingested first when missing); and, with ``--locomo``, LoCoMo memory
questions against the ``memory:<conversation>`` accounts ``maxy eval memory`` left behind.

The content check: every ``content`` / ``text`` of the new output's hits (a document hit's
passage included) must appear whole in the new text; any cut or missing one fails the run
(exit 1). Also printed: how many of the old output's content texts the new one still shows
whole (collapsing drops a document's other chunks on purpose).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _scifact import add_dir_argument, require_dir
from maxy.accounts import list_accounts, validate_account
from maxy.config import Settings, load_settings
from maxy.db import Database
from maxy.demo import DEMO_PATHS as DEMO_FILES
from maxy.demo import DEMO_QUESTIONS
from maxy.embeddings import get_embedder
from maxy.evaluation.accounts import named_account
from maxy.evaluation.beir import ensure_corpus, eval_account, load_beir
from maxy.graph.guards import Caller
from maxy.graph.schema import apply_schema
from maxy.graph.write import GraphWriter
from maxy.ingest.hierarchy import ingest_paths
from maxy.memory.recall import recall
from maxy.search import SearchRequest
from maxy.search.collapse import DocumentHit, collapse_documents
from maxy.search.format import PROPERTY_INDENT, render
from maxy.search.hits import Hit, Related

ROOT = Path(__file__).resolve().parents[1]
DEMO_PATHS = tuple(ROOT / p for p in DEMO_FILES)
LIMIT = 10
CONTENT_KEYS = ("content", "text")


# ---------------------------------------------------------------------------------------
# The rendering before the compact one: maxy.search.format at b000aa6, verbatim.
OUTPUT_BUDGET = 80_000
DIVIDER = "\n---\n"
RELATED_VALUE_CHARS = 300
LONG_VALUE_CHARS = 4_000


def _legacy_value(value: Any, limit: int | None = None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"… [{len(text) - limit} more chars]"
    return text


def _legacy_related_line(rel: Related) -> str:
    props = ", ".join(f"{k}: {_legacy_value(v, RELATED_VALUE_CHARS)}" for k, v in sorted(rel.properties.items()))
    labels = ", ".join(rel.labels)
    if rel.direction == "outgoing":
        return f"    --[{rel.rel_type}]--> [{labels}] {{{props}}}"
    return f"    <--[{rel.rel_type}]-- [{labels}] {{{props}}}"


def _legacy_render_hit(hit: Hit, *, with_related: bool = True, value_limit: int | None = None) -> str:
    lines = [f"[{', '.join(hit.labels)}] (id: {hit.node_id}) (score: {hit.score:.3f})"]
    for key in sorted(hit.properties):
        text = _legacy_value(hit.properties[key], value_limit).replace("\n", "\n    ")
        lines.append(f"  {key}: {text}")
    if with_related and hit.related:
        lines.append("  Related:")
        lines.extend(_legacy_related_line(r) for r in hit.related)
    return "\n".join(lines)


def legacy_render(hits: Sequence[Hit], budget: int = OUTPUT_BUDGET) -> str:
    if not hits:
        return "No results."
    with_related = [True] * len(hits)
    blocks = [_legacy_render_hit(h) for h in hits]

    def size() -> int:
        return sum(len(b) for b in blocks) + len(DIVIDER) * (len(blocks) - 1)

    for i in range(len(hits) - 1, -1, -1):
        if size() <= budget:
            break
        if hits[i].related:
            with_related[i] = False
            blocks[i] = _legacy_render_hit(hits[i], with_related=False)
    if size() > budget:
        blocks = [
            _legacy_render_hit(h, with_related=w, value_limit=LONG_VALUE_CHARS)
            for h, w in zip(hits, with_related, strict=True)
        ]
    omitted = 0
    while size() > budget and len(blocks) > 1:
        blocks.pop()
        omitted += 1
    text = DIVIDER.join(blocks)
    if len(text) > budget:
        text = text[: budget - 40]
    if omitted:
        text += f"\n--- [{omitted} more result(s) left out to fit the {budget}-character budget]"
    return text


# ---------------------------------------------------------------------------------------
def content_texts(hit: Hit) -> list[tuple[str, str]]:
    keys = CONTENT_KEYS
    if isinstance(hit, DocumentHit) and "Chunk" not in hit.labels:
        keys = (*CONTENT_KEYS, "summary")  # a document or section found without a chunk: its summary
    return [(k, v) for k in keys if isinstance(v := hit.properties.get(k), str) and v.strip()]


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


class Tally:
    def __init__(self, name: str):
        self.name = name
        self.queries = 0
        self.results = {"old": 0, "new_no_collapse": 0, "new": 0}
        self.chars = {"old": 0, "new_no_collapse": 0, "new": 0}
        self.checked = self.lost = 0
        self.old_texts = self.old_texts_kept = 0
        self.example_lost: list[str] = []

    def add(self, hits: list[Hit]) -> None:
        collapsed = collapse_documents(hits)
        old, plain, new = legacy_render(hits), render(hits), render(collapsed)
        self.queries += 1
        for key, n, text in (
            ("old", len(hits), old),
            ("new_no_collapse", len(hits), plain),
            ("new", len(collapsed), new),
        ):
            self.results[key] += n
            self.chars[key] += len(text)
        for h in collapsed:
            for key, value in content_texts(h):
                self.checked += 1
                if f"  {key}: " + value.replace("\n", PROPERTY_INDENT) not in new:
                    self.lost += 1
                    self.example_lost.append(f"{h.node_id}.{key}")
        flat_new = _flat(new)
        for h in hits:
            for _key, value in [(k, v) for k in CONTENT_KEYS if isinstance(v := h.properties.get(k), str) and v]:
                self.old_texts += 1
                self.old_texts_kept += _flat(value) in flat_new

    def figures(self) -> dict[str, Any]:
        per_result = {k: self.chars[k] / max(self.results[k], 1) for k in self.chars}
        per_query = {k: self.chars[k] / max(self.queries, 1) for k in self.chars}
        return {
            "set": self.name,
            "queries": self.queries,
            "results": self.results,
            "chars_per_query": {k: round(v) for k, v in per_query.items()},
            "chars_per_result": {k: round(v) for k, v in per_result.items()},
            "per_result_cut_pct": round(100 * (1 - per_result["new"] / per_result["old"]), 1)
            if self.chars["old"]
            else 0,
            "per_query_cut_pct": round(100 * (1 - per_query["new"] / per_query["old"]), 1) if self.chars["old"] else 0,
            "content_checked": self.checked,
            "content_lost": self.lost,
            "content_lost_examples": self.example_lost[:5],
            "old_texts_shown_whole": f"{self.old_texts_kept}/{self.old_texts}",
        }


def search(db: Database, embedder: Any, settings: Settings, account_id: str, query: str) -> list[Hit]:
    request = SearchRequest(query, limit=LIMIT, expand_hops=1)
    return recall(db, Caller(account_id), embedder, settings, request, collapse=False).hits


def demo_set(db: Database, embedder: Any, settings: Settings) -> Tally:
    account = named_account(settings, "bench:output-size:demo")
    ingest_paths(DEMO_PATHS, GraphWriter(db, account, embedder, created_by="ingest"))  # unchanged files are skipped
    tally = Tally("demo")
    for q in DEMO_QUESTIONS:
        tally.add(search(db, embedder, settings, account.account_id, q))
    return tally


def scifact_set(db: Database, embedder: Any, settings: Settings, directory: Path, n: int) -> Tally:
    data = load_beir(directory, "dev")
    account = eval_account(settings, data)
    info = ensure_corpus(settings, db, embedder, data, account)
    if not info["reused"]:
        print(f"  ingested the SciFact corpus ({info['documents']} documents)", file=sys.stderr)
    tally = Tally("scifact-dev")
    for qid in [q for q in data.qrels if q in data.queries][:n]:
        tally.add(search(db, embedder, settings, account.account_id, data.queries[qid]))
    return tally


def locomo_set(db: Database, embedder: Any, settings: Settings, directory: Path, n: int) -> Tally | None:
    accounts = {a.name: a.account_id for a in list_accounts(settings.data_root)}
    tally = Tally("locomo-memory")
    for line in (directory / "questions.jsonl").open(encoding="utf-8"):
        if tally.queries == n:
            break
        q = json.loads(line)
        account_id = accounts.get(f"memory:{q.get('conversation')}")
        if account_id is None:
            continue
        validate_account(settings.data_root, account_id)
        tally.add(search(db, embedder, settings, account_id, q["question"]))
    if not tally.queries:
        print("  no memory:<conversation> accounts: run `maxy eval memory` first", file=sys.stderr)
        return None
    return tally


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_dir_argument(parser)
    parser.add_argument("--locomo", type=Path, default=None, help="a LoCoMo folder (questions.jsonl), optional")
    parser.add_argument("--queries", type=int, default=50, help="SciFact and LoCoMo queries per set")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    scifact = require_dir(parser, args.dir, "corpus.jsonl", "queries.jsonl", "qrels/dev.tsv")
    if args.locomo is not None and not (args.locomo / "questions.jsonl").is_file():
        parser.exit(2, f"{parser.prog}: --locomo {args.locomo} has no questions.jsonl\n")

    settings = load_settings()
    embedder = get_embedder(settings)
    with Database(settings) as db:
        apply_schema(db, embedder.dimensions, embedder=embedder)
        tallies = [demo_set(db, embedder, settings), scifact_set(db, embedder, settings, scifact, args.queries)]
        if args.locomo is not None:
            extra = locomo_set(db, embedder, settings, args.locomo, args.queries)
            if extra is not None:
                tallies.append(extra)
    report = [t.figures() for t in tallies]
    lost = sum(r["content_lost"] for r in report)
    if args.json:
        print(json.dumps({"limit": LIMIT, "expand_hops": 1, "sets": report, "content_lost": lost}, indent=2))
    else:
        print(f"memory-search text, limit {LIMIT}, one hop: characters per result (per query)")
        print(f"{'set':<15}{'queries':>8}  {'results old/new':>15}  {'old':>13}  {'no collapse':>13}  {'new':>13}  cut")
        for r in report:
            res, cpr, cpq = r["results"], r["chars_per_result"], r["chars_per_query"]
            cells = [f"{cpr[k]:>5} ({cpq[k]:>5})" for k in ("old", "new_no_collapse", "new")]
            print(
                f"{r['set']:<15}{r['queries']:>8}  {str(res['old']) + ' / ' + str(res['new']):>15}  "
                f"{cells[0]:>13}  {cells[1]:>13}  {cells[2]:>13}  "
                f"{r['per_result_cut_pct']}% per result, {r['per_query_cut_pct']}% per query"
            )
        for r in report:
            print(
                f"{r['set']}: content texts of the new hits shown whole {r['content_checked'] - r['content_lost']}"
                f"/{r['content_checked']}; old output's content texts still shown whole {r['old_texts_shown_whole']}"
            )
    if lost:
        print(f"content lost: {lost} text(s) cut or missing", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
