"""RELEVANCE: how likely a hit answers the query, read from the hit's own signals.

The fused score ranks a result list but means nothing across queries: every path is scaled
within its own list, so the best hit of a query the graph cannot answer scores like the best
hit of one it answers well. Relevance is a logistic function of absolute signals instead:

- ``cosine``: the raw cosine between the query and the node's vector (0 when only BM25 found it);
- ``coverage``: the share of the query's content words found in the node's text;
- ``bm25``: the raw Lucene score per content word of the query, capped;
- the logarithm of the text's length, alone and times the cosine (short texts, facts and
  messages, have lower cosines than long passages for the same match);
- ``cosine_over_blank``: the cosine less the query's cosine to a blank text. Some queries sit
  close to everything (a few common words, a greeting): their cosines run high against any
  text, and what counts is how far a hit rises above that floor.

The weights and the default cut are fitted per embedding model on relevant hits against hits
for queries nothing answers (``maxy eval calibrate``) and shipped in ``relevance.json``, the
bias set so that the default cut is 0.5; a
model without a calibration gets no relevance (and no cut). Ranking never changes. The
default cut is a gate: when no hit clears it, the search answers with no hits and the best of
them as the nearest miss; when one does, every hit stays (a relevant second or third hit often
scores lower than the first, and dropping it would cost recall). A caller's own minimum
relevance drops each hit below it.

What an answer shows is a second reading (:class:`AnswerCalibration`, :func:`shown`): how likely
each hit of that answer is relevant, from its own reading, the answer's best one, its rank and
its score against the first hit's, fitted on every hit of the development answers (``maxy eval
calibrate``; ``maxy eval relevance`` prints its reliability table), and never higher than the
hit ranked above it. The gate reads the first reading; the hits, and a caller's minimum, the shown one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache, partial
from importlib import resources
from typing import Any

from ..embeddings.base import Embedder
from ..errors import ValidationError
from ..graph.allowlist import RESERVED_PROPERTIES
from .hits import Hit

FEATURES = (
    "cosine",
    "coverage",
    "cosine_x_coverage",
    "bm25_per_word",
    "length_x_cosine",
    "length",
    "cosine_over_blank",
)
BM25_CAP = 5.0
CALIBRATION_FILE = "relevance.json"

_WORD = re.compile(r"\w+")
# Words that carry no topic: English function words and question words.
STOP_WORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there
    these they this to was will with what when where who whom which why how did do does done has have had
    i me my we our you your he she him her his hers its them been being were am can could would should may
    might must shall about from up down out over under again further once here than too very just now any
    all both each few more most other some own same so only nor""".split()
)
_SUFFIXES = ("ing", "ed", "es", "s", "ly")


def coverage(query_words: set[str], text: str) -> float:
    """The share of ``query_words`` (stems) found among the word stems of ``text`` (a crude
    suffix strip: "walked", "walking" -> "walk"), without stemming the text. A stem can only come from
    itself or itself plus one suffix, so each query stem is looked up in the text's plain
    words through those few forms; a passage's hundreds of words are never stemmed one by one
    (a search assesses up to its whole candidate depth)."""
    if not query_words:
        return 0.0
    forms = _forms(frozenset(query_words))
    found = {forms[w] for w in forms.keys() & set(_WORD.findall(text.lower()))}
    return len(found) / len(query_words)


@lru_cache(maxsize=1024)
def _forms(stems: frozenset[str]) -> dict[str, str]:
    """Every word whose stem is one of ``stems``, with that stem."""
    return {w: stem for stem in stems for w in (stem, *(stem + s for s in _SUFFIXES)) if _stem(w) == stem}


def content_words(query: str) -> set[str]:
    """The query's topic words: no function words, single characters or bare numbers."""
    return {_stem(w) for w in _WORD.findall(query.lower()) if w not in STOP_WORDS and len(w) > 1 and not w.isdigit()}


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def hit_text(properties: Mapping[str, Any]) -> str:
    """The node's own text: its string values, bookkeeping left out."""
    return " ".join([v for k, v in properties.items() if isinstance(v, str) and k not in RESERVED_PROPERTIES])


def features(hit: Hit, query_words: set[str], blank: float, text: str | None = None) -> tuple[float, ...]:
    """The signals of one hit whose properties are loaded, in the order of ``FEATURES``;
    ``blank`` is the query's cosine to a blank text (``blank_cosine``); ``text`` the hit's
    ``hit_text`` when already taken."""
    text = hit_text(hit.properties) if text is None else text
    return signals(hit.vector_score, hit.bm25_raw, text, query_words, blank)


def signals(cosine: float, bm25_raw: float | None, text: str, query_words: set[str], blank: float) -> tuple[float, ...]:
    """``features`` from a hit's cosine, raw BM25 score and text."""
    covered = coverage(query_words, text)
    bm25 = min((bm25_raw or 0.0) / len(query_words), BM25_CAP) if query_words else 0.0
    length = math.log1p(len(text))
    over_blank = cosine - blank if cosine else 0.0
    return (cosine, covered, cosine * covered, bm25, length * cosine, length, over_blank)


_blank_vectors: dict[str, list[float]] = {}


def blank_cosine(embedder: Embedder, query_vector: Sequence[float]) -> float:
    """The cosine between a query's vector and the embedder's vector of a blank text (made
    once per model and kept)."""
    blank = _blank_vectors.get(embedder.name)
    if blank is None:
        blank = _blank_vectors[embedder.name] = list(embedder.embed([" "])[0])
    return _cosine(query_vector, blank)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norms = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norms if norms else 0.0


@dataclass(frozen=True)
class Calibration:
    """A fitted logistic model over ``FEATURES`` and the cut it was chosen with."""

    model: str
    weights: tuple[float, ...]
    bias: float
    cut: float

    def relevance(self, signals: Sequence[float]) -> float:
        z = self.bias + sum(w * x for w, x in zip(self.weights, signals, strict=True))
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))

    def centred(self) -> Calibration:
        """The same model and decisions with the cut moved to 0.5 (the bias shifted by the cut's
        log-odds), so that a relevance reads at a glance: above one half clears the default cut."""
        shift = math.log(self.cut / (1.0 - self.cut))
        return Calibration(self.model, self.weights, self.bias - shift, 0.5)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
            "cut": round(self.cut, 4),
        }

    @classmethod
    def from_json(cls, model: str, data: Mapping[str, Any]) -> Calibration:
        if list(data.get("features") or []) != list(FEATURES):
            raise ValidationError(CALIBRATION_FILE, f"{model}: features must be {', '.join(FEATURES)}")
        return cls(model, tuple(float(w) for w in data["weights"]), float(data["bias"]), float(data["cut"]))


@cache
def shipped() -> dict[str, Calibration]:
    """The calibrations that come with Maxy, by embedding model name."""
    text = resources.files("maxy").joinpath("resources", CALIBRATION_FILE).read_text(encoding="utf-8")
    return {model: Calibration.from_json(model, data) for model, data in json.loads(text)["models"].items()}


def calibration_for(model: str | None) -> Calibration | None:
    return shipped().get(model) if model else None


def assess(hits: Sequence[Hit], query: str, calibration: Calibration | None, blank: float) -> None:
    """Set each hit's relevance, worked out when first read (left None without a calibration)."""
    if calibration is None:
        return
    query_words = content_words(query)
    for hit in hits:
        # The scores and the properties are taken now (a caller's fields narrow a hit by giving it
        # a new dict, never by changing this one), the text only when the relevance is read: a
        # caller that keeps every hit never pays for it. The deferred reading holds no reference to
        # the hit, so a hit is freed as soon as the search lets go of it (a hit referring to itself
        # would wait for Python's cycle collector, whose full passes over a process's objects made
        # a search's slowest times).
        hit.assess_when_read(
            partial(_relevance, calibration, hit.vector_score, hit.bm25_raw, hit.properties, query_words, blank)
        )


def _relevance(
    calibration: Calibration,
    cosine: float,
    bm25_raw: float | None,
    properties: Mapping[str, Any],
    query_words: set[str],
    blank: float,
) -> float:
    return round(calibration.relevance(signals(cosine, bm25_raw, hit_text(properties), query_words, blank)), 4)


def gate(hits: list[Hit], cut: float | None) -> tuple[list[Hit], Hit | None]:
    """All ``hits`` when one clears ``cut``; else none, and the most relevant as the nearest miss."""
    if cut is None:
        return hits, None
    kept, nearest_miss = at_least(hits, cut)
    return (hits if kept else []), nearest_miss


def at_least(hits: list[Hit], minimum: float) -> tuple[list[Hit], Hit | None]:
    """The hits at or above a caller's ``minimum``, in order; the nearest miss when none is."""
    if minimum <= 0.0 or not hits or hits[0].relevance is None:
        return hits, None
    kept = [h for h in hits if (h.relevance or 0.0) >= minimum]
    return kept, None if kept else max(hits, key=lambda h: h.relevance or 0.0)


# ---------------------------------------------------------------------------------------
ANSWER_FEATURES = ("logit", "top_logit", "rank", "score_ratio")
ANSWER_KEY = "answer"  # a model's entry in relevance.json that holds its AnswerCalibration


def _logit(p: float) -> float:
    p = min(max(p, 1e-6), 1.0 - 1e-6)
    return math.log(p / (1.0 - p))


def answer_signals(readings: Sequence[float], scores: Sequence[float]) -> list[tuple[float, ...]]:
    """The signals of each hit of one answer, best first, in the order of ``ANSWER_FEATURES``:
    its reading's log-odds, the answer's highest, ``log(1 + rank)`` (rank 0 first), and its score
    over the first hit's."""
    logits = [_logit(r) for r in readings]
    top = max(logits, default=0.0)
    first = scores[0] if scores and scores[0] > 0 else 0.0
    return [
        (z, top, math.log1p(i), (s / first) if first else 0.0)
        for i, (z, s) in enumerate(zip(logits, scores, strict=True))
    ]


def monotone(values: Sequence[float]) -> list[float]:
    """Each value no higher than the one before it (a hit never reads more relevant than the hit
    ranked above it)."""
    out: list[float] = []
    for v in values:
        out.append(min(v, out[-1]) if out else v)
    return out


@dataclass(frozen=True)
class AnswerCalibration:
    """A logistic model over ``ANSWER_FEATURES``: how likely a hit of one answer is relevant."""

    model: str
    weights: tuple[float, ...]
    bias: float

    def probabilities(self, readings: Sequence[float], scores: Sequence[float]) -> list[float]:
        """Each hit's probability, monotone down the answer."""
        raw = []
        for x in answer_signals(readings, scores):
            z = self.bias + sum(w * v for w, v in zip(self.weights, x, strict=True))
            raw.append(1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0))))
        return monotone(raw)

    def to_json(self) -> dict[str, Any]:
        return {
            "features": list(ANSWER_FEATURES),
            "weights": [round(w, 6) for w in self.weights],
            "bias": round(self.bias, 6),
        }

    @classmethod
    def from_json(cls, model: str, data: Mapping[str, Any]) -> AnswerCalibration:
        if list(data.get("features") or []) != list(ANSWER_FEATURES):
            raise ValidationError(
                CALIBRATION_FILE, f"{model}.{ANSWER_KEY}: features must be {', '.join(ANSWER_FEATURES)}"
            )
        return cls(model, tuple(float(w) for w in data["weights"]), float(data["bias"]))


@cache
def shipped_answers() -> dict[str, AnswerCalibration]:
    """The answer calibrations that come with Maxy, by embedding model name."""
    text = resources.files("maxy").joinpath("resources", CALIBRATION_FILE).read_text(encoding="utf-8")
    models = json.loads(text)["models"]
    return {m: AnswerCalibration.from_json(m, d[ANSWER_KEY]) for m, d in models.items() if ANSWER_KEY in d}


def shown(hits: Sequence[Hit], model: str | None) -> None:
    """Replace each hit's reading with what the answer shows: its calibrated probability of
    being relevant within this answer (``hits``, best first), never above the hit before it.
    Hits without a reading, or a model without an answer calibration, are left as they are."""
    answer = shipped_answers().get(model) if model else None
    if answer is None or not hits or any(h.relevance is None for h in hits):
        return
    readings = [float(h.relevance or 0.0) for h in hits]
    for hit, p in zip(hits, answer.probabilities(readings, [h.score for h in hits]), strict=True):
        hit.relevance = round(p, 4)


def pipeline_floor(minimum: float | None) -> float | None:
    """The minimum to hand the pipeline for a caller's ``minimum``: a positive one applies to the
    shown relevance (:func:`answer`), so the pipeline keeps every hit (0); None (the gate), 0 and
    a value out of range pass through (the request refuses the last, naming the field)."""
    return 0.0 if minimum is not None and 0.0 < minimum <= 1.0 else minimum


def answer(
    hits: list[Hit], nearest_miss: Hit | None, model: str | None, minimum: float | None
) -> tuple[list[Hit], Hit | None]:
    """The hits (and nearest miss) as an answer shows them (:func:`shown`), then a caller's
    positive ``minimum`` applied to that shown relevance."""
    shown(hits, model)
    if nearest_miss is not None:
        shown([nearest_miss], model)
    if minimum is not None and minimum > 0:
        kept, miss = at_least(hits, minimum)
        return kept, miss or nearest_miss
    return hits, nearest_miss
