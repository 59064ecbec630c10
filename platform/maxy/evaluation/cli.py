"""``maxy eval ...``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from ..console import emit_json, err, friendly, out
from .folds import DEFAULT_FOLDS
from .ready import schema_ready
from .received_cli import commands as received_commands


def _answers(asked: list, calibration: Any) -> Any:
    """The answer calibration fitted on ``asked``; too few questions is one line naming the data."""
    from ..errors import ValidationError
    from .reliability import fit_answers

    try:
        return fit_answers(asked, calibration)
    except ValueError as why:  # no relevant hit, or nothing else: how often a hit is relevant is unknown
        raise ValidationError("SCIFACT LOCOMO", f"{why}: the development sets are too small") from None


def _half_line(report: dict[str, Any]) -> str:
    """One held-out half: clears, noise refused and the R@10 the cut costs, per split."""
    parts = []
    for split, figures in report["splits"].items():
        loss = 100 * (figures["recall@10"] - figures["recall@10_cut"])
        noise = 100 * report["noise"][split]["no_relevant_results"]
        parts.append(
            f"{split} clears {100 * figures['first_relevant_clears']:.1f}% noise {noise:.1f}% R@10 -{loss:.2f}"
        )
    return "; ".join(parts)


@contextmanager
def stage_bar(first: str) -> Iterator[Any]:
    """A transient progress bar on stderr, and its ``(stage, done, total)`` callback."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..console import err

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(first, total=None)
        yield lambda what, done, total: bar.update(task, description=what, completed=done, total=total)


def print_recall(result: dict, ks: tuple[int, ...]) -> None:
    from ..console import out

    header = "  ".join(f"R@{k}" for k in ks)
    out.print(f"{result['questions']} questions   {header}")
    rows = [("overall", result["overall"])] + list(result["by_category"].items())
    for name, r in rows:
        vals = "  ".join(f"{100 * r[f'recall@{k}']:5.1f}" for k in ks)
        out.print(f"  {name:12} {vals}")
    out.print(f"  latency p50 {result['p50_ms']:.1f} ms  p95 {result['p95_ms']:.1f} ms")


def print_folds(report: dict[str, Any], percent: bool) -> None:
    """Each figure's mean over the folds, its range and standard deviation, then the folds' own values
    (and, for conversations, the same across whole conversations)."""
    from ..console import out

    def show(value: float) -> str:
        return f"{100 * value:.1f}" if percent else f"{value:.4f}"

    def table(part: dict[str, Any], title: str, each: str = "fold") -> None:
        out.print(f"{title}: {part['folds']} ({part['by']})   mean   min..max   sd")
        for key, f in part["figures"].items():
            out.print(f"  {key:11} {show(f['mean']):>7}   {show(f['min'])}..{show(f['max'])}   {show(f['sd'])}")
        for key in part["figures"]:
            values = ", ".join(f"{label} {show(g[key])}" for label, g in part["per_fold"].items())
            out.print(f"  {key} by {each}: {values}")

    table(report, "folds")
    if "conversations" in report:
        sizes = ", ".join(f"{label} {g['questions']}" for label, g in report["per_fold"].items())
        out.print(f"  questions by fold: {sizes}")
        table(report["conversations"], "across conversations", "conversation")


def print_relevance(report: dict) -> None:
    from ..console import out

    out.print(f"relevance of {report['model']}, cut {report['cut']:.2f}")
    out.print("  split      queries  first relevant clears   nDCG@10 (cut)    R@10 (cut)")
    for split, f in report["splits"].items():
        ndcg = f"{f['ndcg@10']:.4f} ({f['ndcg@10_cut']:.4f})" if "ndcg@10" in f else " " * 15
        out.print(
            f"  {split:9} {f['queries']:8}  {100 * f['first_relevant_clears']:6.1f}% of {f['answered']:4}"
            f"       {ndcg}  {100 * f['recall@10']:5.1f} ({100 * f['recall@10_cut']:5.1f})"
        )
    out.print("  noise asked of   queries  no relevant results   by kind")
    for split, f in report["noise"].items():
        kinds = ", ".join(f"{k} {100 * v:.1f}%" for k, v in f["by_kind"].items())
        out.print(f"  {split:15} {f['queries']:8}  {100 * f['no_relevant_results']:6.1f}%               {kinds}")


def print_reliability(report: dict, how: str) -> None:
    """The reliability table of the relevance answers show: per bin, the hits, the mean shown,
    the share relevant; the expected calibration error over all and per split."""
    from ..console import out

    per_split = ", ".join(f"{k} {v['ece']:.3f}" for k, v in report.items() if k not in ("all", "folds"))
    out.print(
        f"relevance shown in answers ({how}): ECE {report['all']['ece']:.3f} over {report['all']['hits']} hits ({per_split})"
    )
    if "folds" in report:
        out.print("  ECE per fold: " + ", ".join(f"{e:.3f}" for e in report["folds"]))
    out.print("  bin        hits   shown  relevant")
    for row in report["all"]["rows"]:
        out.print(f"  {row['bin']}  {row['hits']:7}   {row['shown']:.3f}  {row['relevant']:.3f}")


def print_calibration(report: dict) -> None:
    """What ``maxy eval calibrate`` fitted and measured."""
    from ..console import out

    out.print(f"model {report['model']}: cut {report['cut']:.2f}, bias {report['bias']:.3f}")
    for name, weight in zip(report["features"], report["weights"], strict=True):
        out.print(f"  {name:18} {weight:8.3f}")
    print_relevance(report["measured"])
    print_reliability(report["reliability"], "held out, 5 folds")
    for draw, held_out in enumerate(report.get("halves", []), start=1):
        out.print(f"held-out half {draw}: {_half_line(held_out)}")


# The commands, defined last: their options name the helpers above.
eval_app = typer.Typer(no_args_is_help=True, help="Measure retrieval quality on benchmark data.")


@eval_app.command("beir")
@friendly
def beir(
    directory: Path = typer.Argument(..., help="A BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv"),
    split: str = typer.Option("test", "--split", help="The qrels file to use."),
    fusion: str = typer.Option("weighted", "--fusion", help="weighted | rrf | vector | bm25"),
    folds: int = typer.Option(
        DEFAULT_FOLDS, "--folds", min=2, max=50, help="Also report every figure's mean and spread over this many folds."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Ingest the corpus (once) and report nDCG@10, Recall@100, MRR@10 and latency."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from ..config import load_settings
    from ..search import BASELINE, SearchConfig
    from ..search.config import FUSIONS
    from .beir import ensure_corpus, eval_account, load_beir, run_queries

    if fusion not in FUSIONS:
        raise typer.BadParameter(f"one of {', '.join(FUSIONS)}", param_hint="--fusion")
    settings = load_settings()
    config = SearchConfig.from_settings(settings, base=BASELINE.with_(fusion=fusion))
    data = load_beir(directory, split)
    with schema_ready(settings) as (embedder, db):
        account = eval_account(settings, data)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
        with Progress(*columns, console=err, transient=True) as progress:
            task = progress.add_task("ingest", total=len(data.corpus))
            ingest = ensure_corpus(
                settings,
                db,
                embedder,
                data,
                account,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
            qtask = progress.add_task("queries", total=len(data.qrels))
            figures = run_queries(
                db,
                embedder,
                data,
                account,
                config=config,
                folds=folds,
                progress=lambda done, total: progress.update(qtask, completed=done, total=total),
            )
    if json_out:
        emit_json(figures)
        return
    err.print(
        f"corpus {data.name}: {ingest['documents']} documents "
        f"({'reused' if ingest['reused'] else 'ingested in ' + str(round(ingest['ms'] / 1000)) + ' s'}), "
        f"account {account.account_id}"
    )
    out.print(f"split {split} ({figures['queries']} queries), fusion {fusion}")
    for key in ("ndcg@10", "recall@100", "mrr@10"):
        out.print(f"  {key:11} {figures[key]:.4f}")
    out.print(f"  latency    p50 {figures['p50_ms']:.1f} ms  p95 {figures['p95_ms']:.1f} ms")
    stages = "  ".join(f"{k} {v:.1f}" for k, v in figures["stages_p50_ms"].items())
    out.print(f"  stages     {stages} (ms, medians; vector and BM25 run side by side)")
    print_folds(figures["folds"], percent=False)


@eval_app.command("conversations")
@friendly
def conversations(
    directory: Path = typer.Argument(..., help="A folder with messages.jsonl and questions.jsonl"),
    folds: int = typer.Option(
        DEFAULT_FOLDS, "--folds", min=2, max=50, help="Also report every figure's mean and spread over this many folds."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Import each conversation into its own account and report Recall@5/10/25 of the evidence."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from ..config import load_settings
    from ..search import MESSAGE_SEARCH, SearchConfig
    from .conversations import KS, evaluate

    settings = load_settings()
    with schema_ready(settings) as (embedder, db):
        with Progress(TextColumn("questions"), BarColumn(), MofNCompleteColumn(), console=err, transient=True) as bar:
            task = bar.add_task("questions", total=None)
            result = evaluate(
                settings,
                db,
                embedder,
                directory,
                config=SearchConfig.from_settings(settings, base=MESSAGE_SEARCH),
                folds=folds,
                progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
    if json_out:
        emit_json(result)
        return
    print_recall(result, KS)
    print_folds(result["folds"], percent=True)


@eval_app.command("memory-agent")
@friendly
def memory_agent(
    directory: Path = typer.Argument(..., help="A folder with messages.jsonl and questions.jsonl"),
    fresh: bool = typer.Option(False, "--fresh", help="Feed every conversation again, even if unchanged."),
    folds: int = typer.Option(
        DEFAULT_FOLDS, "--folds", min=2, max=50, help="Also report every figure's mean and spread over this many folds."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Feed each conversation through the memory agent, then report Recall@5/10/25 of the evidence
    searching its entries, the raw messages, and both together."""
    from ..config import load_settings
    from ..search import MESSAGE_SEARCH, SearchConfig
    from .memory_agent import KS, VARIANTS, evaluate

    settings = load_settings()
    with schema_ready(settings) as (embedder, db):
        with stage_bar("messages fed") as progress:
            result = evaluate(
                settings,
                db,
                embedder,
                directory,
                fresh=fresh,
                folds=folds,
                config=SearchConfig.from_settings(settings, base=MESSAGE_SEARCH),
                feed_progress=lambda done, total: progress("messages fed", done, total),
                progress=lambda done, total: progress("questions", done, total),
            )
    if json_out:
        emit_json(result)
        return
    err.print(f"memory agent mode: {result['mode']}; fed {len(result['written'])} conversation(s) this run")
    for name in VARIANTS:
        out.print(f"\n{name}")
        print_recall(result[name], KS)
        print_folds(result[name]["folds"], percent=True)


eval_app.add_typer(received_commands)  # maxy eval received


@eval_app.command("memory")
@friendly
def memory(
    directory: Path = typer.Argument(..., help="A folder with observations.jsonl and questions.jsonl"),
    folds: int = typer.Option(
        DEFAULT_FOLDS, "--folds", min=2, max=50, help="Also report every figure's mean and spread over this many folds."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Write each conversation's facts about its speakers into a fresh account, as an agent's
    memory-write would, and report Recall@5/10/25 of the questions' evidence through memory-search."""

    from ..config import load_settings
    from .memory import KS, evaluate

    settings = load_settings()
    with schema_ready(settings) as (embedder, db):
        with stage_bar("facts") as progress:
            result = evaluate(settings, db, embedder, directory, progress=progress, folds=folds)
    if json_out:
        emit_json(result)
        return
    err.print(f"{result['facts']} facts written in {result['write_ms'] / 1000:.1f} s")
    print_recall(result, KS)
    print_folds(result["folds"], percent=True)


# maxy eval calibrate and maxy eval relevance
@eval_app.command("calibrate")
@friendly
def calibrate(
    scifact: Path = typer.Argument(..., help="SciFact in BEIR format (corpus.jsonl, queries.jsonl, qrels/dev.tsv)"),
    locomo: Path = typer.Argument(..., help="LoCoMo: messages.jsonl, observations.jsonl, questions.jsonl"),
    write: bool = typer.Option(False, "--write", help="Store the fit in Maxy's relevance.json for this model."),
    halves_: int = typer.Option(
        0, "--halves", min=0, max=20, help="Also fit on a random half and measure on the other, this many times."
    ),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """Fit the relevance model of the embedding model in use on the development splits and
    a noise set, and choose its cut."""
    from importlib import resources

    from .relevance import fit, halves, measure, write_calibration
    from .reliability import cross_validated

    asked, model = _ask(scifact, locomo)
    calibration = fit(asked, model)
    answer = _answers(asked, calibration)
    report = {
        **calibration.to_json(),
        "model": model,
        "measured": measure(asked, calibration),
        "answer": answer.to_json(),
        "reliability": cross_validated(asked, calibration),
    }
    if halves_:
        report["halves"] = halves(asked, model, halves_)
    if write:
        path = Path(str(resources.files("maxy").joinpath("resources", "relevance.json")))
        report["written"] = str(write_calibration(calibration, path, answer))
    if json_out:
        emit_json(report)
        return
    print_calibration(report)
    if write:
        err.print(f"written to {report['written']}")


@eval_app.command("relevance")
@friendly
def relevance(
    scifact: Path = typer.Argument(..., help="SciFact in BEIR format (corpus.jsonl, queries.jsonl, qrels/dev.tsv)"),
    locomo: Path = typer.Argument(..., help="LoCoMo: messages.jsonl, observations.jsonl, questions.jsonl"),
    json_out: bool = typer.Option(False, "--json"),
) -> None:
    """How often the first relevant hit clears the relevance cut, how often a query nothing
    answers gets "no relevant results", what the cut costs nDCG@10 and Recall@10, and the
    reliability table of the relevance answers show (with its expected calibration error)."""
    from ..errors import ConfigError
    from ..search.relevance import calibration_for, shipped_answers
    from .relevance import measure
    from .reliability import reliability

    asked, model = _ask(scifact, locomo)
    calibration = calibration_for(model)
    if calibration is None:
        raise ConfigError(f"no relevance calibration for {model}: run maxy eval calibrate SCIFACT LOCOMO --write")
    report = measure(asked, calibration)
    answer = shipped_answers().get(model)
    if answer is not None:
        report["reliability"] = reliability(asked, calibration, answer)
    if json_out:
        emit_json(report)
        return
    print_relevance(report)
    if "reliability" in report:
        print_reliability(report["reliability"], "the shipped answer calibration")


def _ask(scifact: Path, locomo: Path) -> tuple[list, str]:
    from ..config import load_settings
    from .ready import schema_ready
    from .relevance import ask_all

    settings = load_settings()
    with schema_ready(settings) as (embedder, db):
        with stage_bar("asking") as progress:
            asked = ask_all(settings, db, embedder, scifact, locomo, progress=progress)
    return asked, embedder.name


def register(app: typer.Typer) -> None:
    app.add_typer(eval_app, name="eval")
