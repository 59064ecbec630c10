"""Semantic chunking: cut a section's text where the topic changes, within size bounds.

1. The text is split into *units*: sentences, list items or table rows, with fenced code
   blocks kept whole; each unit remembers whether it starts a paragraph. Units are spans
   of the original text, so a chunk's content is the raw text, byte for byte.
2. A section no longer than ``max_chars`` is one chunk and nothing is embedded.
3. Otherwise every unit is embedded and, at each boundary, the cosine similarity between
   the mean vector of the ``window`` units before it and the ``window`` units after it is
   computed; a paragraph break lowers that score by ``paragraph_bonus``. Boundaries whose
   score is below the ``percentile``-th percentile of the section's scores, and at least
   ``min_drop`` below their median, are topic breaks (so a uniform text has none).
4. Chunks are grown greedily: a chunk ends at the first topic break once it holds at least
   ``min_chars`` (up to ``max_chars``, and never leaving a tail shorter than ``min_chars``);
   when it reaches ``max_chars`` without a break, it ends at the lowest-scoring boundary
   that keeps it between ``min_chars`` and ``target_chars`` (up to ``max_chars`` when there
   is none), ties going to the longer chunk. A sentence is
   split (at whitespace) only when it alone is longer than ``max_chars``.

All functions are pure; ``embed`` is any ``Callable[[list[str]], list[list[float]]]``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ValidationError

EmbedFn = Callable[[list[str]], Sequence[Sequence[float]] | np.ndarray]


@dataclass(frozen=True)
class ChunkBounds:
    min_chars: int = 300
    target_chars: int = 1200
    max_chars: int = 1500
    window: int = 2
    percentile: float = 20.0
    paragraph_bonus: float = 0.05
    min_drop: float = 0.05

    def __post_init__(self) -> None:
        if not (0 < self.min_chars <= self.target_chars <= self.max_chars):
            raise ValidationError("chunkBounds", "need 0 < min_chars <= target_chars <= max_chars")
        if self.window < 1:
            raise ValidationError("chunkBounds.window", "must be at least 1")
        if not 0 <= self.percentile <= 100:
            raise ValidationError("chunkBounds.percentile", "must be between 0 and 100")

    @classmethod
    def from_env(cls) -> ChunkBounds:
        """Defaults, overridden by MAXY_CHUNK_MIN_CHARS / _TARGET_CHARS / _MAX_CHARS."""
        values = {}
        for key, env in (
            ("min_chars", "MAXY_CHUNK_MIN_CHARS"),
            ("target_chars", "MAXY_CHUNK_TARGET_CHARS"),
            ("max_chars", "MAXY_CHUNK_MAX_CHARS"),
        ):
            raw = os.environ.get(env, "").strip()
            if raw:
                try:
                    values[key] = int(raw)
                except ValueError:
                    raise ValidationError(env, f"must be an integer, got {raw!r}") from None
        return cls(**values)


@dataclass(frozen=True)
class Unit:
    """A span ``text[start:end]`` of the section text."""

    start: int
    end: int
    para_start: bool
    code: bool = False

    def __len__(self) -> int:
        return self.end - self.start


# ---------------------------------------------------------------------------------------
# Units
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LISTISH = re.compile(r"^\s*(?:[-*+•]|\d+[.)]|\|)\s?")
_ABBREV = frozenset(
    "e.g i.e mr mrs ms dr prof st vs etc fig figs no nos inc ltd jr sr co corp dept est approx cf al ca "
    "jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k e.u p pp vol".split()
)
# A sentence ends after . ! ? or … (plus closing quotes/brackets), before whitespace and
# a character that can start a sentence.
_LAST_WORD = re.compile(r"([\w.]+)[.!?…]*[\"'”’)\]]*$")
_TAIL = 80
_SENT_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9À-Ý])")


def _paragraphs(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_code) spans of blank-line separated blocks; fenced code is one block."""
    spans: list[tuple[int, int, bool]] = []
    pos = 0
    start: int | None = None
    fence: str | None = None
    code_start = 0
    for line in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(line)
        content = line.rstrip("\n")
        if fence is not None:
            stripped = content.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                spans.append((code_start, line_start + len(content), True))
                fence = None
            continue
        m = _FENCE.match(content)
        if m:
            if start is not None:
                spans.append((start, line_start, False))
                start = None
            fence = m.group(1)
            code_start = line_start
            continue
        if not content.strip():
            if start is not None:
                spans.append((start, line_start, False))
                start = None
            continue
        if start is None:
            start = line_start
    if fence is not None:
        spans.append((code_start, pos, True))
    elif start is not None:
        spans.append((start, pos, False))
    return [(a, b, c) for a, b, c in (_trim(text, a, b) + (code,) for a, b, code in spans) if b > a]


def _trim(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def _sentence_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    block = text[a:b]
    lines = block.split("\n")
    if len(lines) >= 2 and sum(bool(_LISTISH.match(line)) for line in lines) >= max(2, len(lines) // 2):
        # a list or a table: one unit per item (continuation lines stay with their item)
        out: list[tuple[int, int]] = []
        pos = a
        for line in lines:
            if out and not _LISTISH.match(line):
                out[-1] = (out[-1][0], pos + len(line))
            else:
                out.append((pos, pos + len(line)))
            pos += len(line) + 1
        return [t for t in (_trim(text, s, e) for s, e in out) if t[1] > t[0]]
    out = []
    start = 0
    for m in _SENT_END.finditer(block):
        end = m.end()
        # the word before the stop, read from the sentence's tail only (a whole-sentence search
        # is quadratic); a word reaching the tail's start is too long to be an abbreviation
        tail = max(start, end - _TAIL)
        word = _LAST_WORD.search(block, tail, end)
        if word and not (tail > start and word.start() == tail):
            w = word.group(1).rstrip(".").lower()
            if m.group(0).startswith(".") and (w in _ABBREV or (len(w) == 1 and w.isalpha())):
                continue  # "e.g." or an initial, not a sentence end
        out.append((a + start, a + end))
        start = end
    out.append((a + start, b))
    return [t for t in (_trim(text, s, e) for s, e in out) if t[1] > t[0]]


def _hard_split(text: str, a: int, b: int, max_chars: int, code: bool) -> list[tuple[int, int]]:
    """Split an over-long span at line breaks (code) or whitespace, else at max_chars."""
    out = []
    while b - a > max_chars:
        window = text[a : a + max_chars + 1]
        cut = window.rfind("\n") if code else -1
        if cut <= max_chars // 3:
            cut = max(window.rfind(" "), window.rfind("\n"), window.rfind("\t"))
        if cut <= max_chars // 3:
            cut = max_chars
        out.append(_trim(text, a, a + cut))
        a = a + cut
        a, b = _trim(text, a, b)
    if b > a:
        out.append((a, b))
    return [t for t in out if t[1] > t[0]]


def split_units(text: str, max_chars: int = 1500) -> list[Unit]:
    """Sentences (list items, table rows, whole code blocks) as spans; none longer than max_chars."""
    units: list[Unit] = []
    for a, b, code in _paragraphs(text):
        pieces = [(a, b)] if code else _sentence_spans(text, a, b)
        first = True
        for s, e in pieces:
            for hs, he in _hard_split(text, s, e, max_chars, code) if e - s > max_chars else [(s, e)]:
                units.append(Unit(hs, he, first, code))
                first = False
    return units


def split_sentences(text: str) -> list[str]:
    """Sentence texts with whitespace normalised; a fenced code block is one unit, kept (code is
    content: a sentence that introduces it must not lose it)."""
    units = split_units(text, max_chars=10**9)
    return [" ".join(text[u.start : u.end].split()) for u in units]


# ---------------------------------------------------------------------------------------
# Boundary scores and segmentation
def boundary_scores(units: Sequence[Unit], vectors: np.ndarray | None, bounds: ChunkBounds) -> np.ndarray:
    """Score of the boundary before unit i (index 0 unused): low means a topic change."""
    n = len(units)
    scores = np.ones(n, dtype=np.float64)
    if vectors is not None and n > 1:
        v = np.asarray(vectors, dtype=np.float64)
        norms = np.linalg.norm(v, axis=1, keepdims=True)
        v = v / np.where(norms == 0, 1.0, norms)
        w = bounds.window
        # window sums from a running sum (a cosine of sums is the cosine of means)
        cum = np.vstack([np.zeros((1, v.shape[1])), np.cumsum(v, axis=0)])
        idx = np.arange(1, n)
        left = cum[idx] - cum[np.maximum(0, idx - w)]
        right = cum[np.minimum(n, idx + w)] - cum[idx]
        denom = np.linalg.norm(left, axis=1) * np.linalg.norm(right, axis=1)
        scores[1:] = np.einsum("ij,ij->i", left, right) / np.where(denom == 0, 1.0, denom)
    for i in range(1, n):
        if units[i].para_start:
            scores[i] -= bounds.paragraph_bonus
    scores[0] = np.inf
    return scores


_SizeFn = Callable[[int, int], int]  # characters from the start of unit a to the end of unit b - 1


def _furthest_end(size: _SizeFn, a: int, n: int, max_chars: int) -> int:
    """The last end unit that keeps the chunk starting at ``a`` within max_chars (at least a + 1)."""
    b_max = a + 1
    while b_max < n and size(a, b_max + 1) <= max_chars:
        b_max += 1
    return b_max


def _topic_cut(
    size: _SizeFn, scores: np.ndarray, a: int, b_max: int, n: int, bounds: ChunkBounds, threshold: float
) -> int | None:
    """The first topic break leaving this chunk and the tail at least min_chars, if any."""
    last = min(b_max, n - 1)
    for b in range(a + 1, last + 1):
        if size(a, b) < bounds.min_chars:
            continue
        if size(b, n) < bounds.min_chars:
            break  # would leave a tail shorter than min_chars (and so would any later cut)
        if scores[b] < threshold:
            # windows smear a break over neighbouring boundaries: slide to the local minimum
            while b + 1 <= last and scores[b + 1] < scores[b] and size(b + 1, n) >= bounds.min_chars:
                b += 1
            return b
    return None


def _size_cut(size: _SizeFn, scores: np.ndarray, a: int, b_max: int, n: int, bounds: ChunkBounds) -> int:
    """No topic break: the rest when it fits, else the lowest-scoring boundary that keeps the chunk
    between min_chars and target_chars and the tail at least min_chars (a filter that nothing
    passes is dropped), ties going to the longer chunk."""
    if b_max == n:
        return n
    cands = [b for b in range(a + 1, b_max + 1) if size(a, b) >= bounds.min_chars]
    cands = [b for b in cands if size(a, b) <= bounds.target_chars] or cands
    cands = [b for b in cands if size(b, n) >= bounds.min_chars] or cands
    return min(cands, key=lambda b: (scores[b], -b)) if cands else b_max


def segment(units: Sequence[Unit], scores: np.ndarray, bounds: ChunkBounds, threshold: float) -> list[tuple[int, int]]:
    """Greedy cuts as (first unit, end unit) pairs; see the module docstring."""
    n = len(units)

    def size(a: int, b: int) -> int:
        return units[b - 1].end - units[a].start

    chunks: list[tuple[int, int]] = []
    a = 0
    while a < n:
        b_max = _furthest_end(size, a, n, bounds.max_chars)
        cut = _topic_cut(size, scores, a, b_max, n, bounds, threshold)
        if cut is None:
            cut = _size_cut(size, scores, a, b_max, n, bounds)
        chunks.append((a, cut))
        a = cut
    if len(chunks) >= 2:  # fold a short tail into its neighbour when that fits
        (pa, _), (la, lb) = chunks[-2], chunks[-1]
        if size(la, lb) < bounds.min_chars and size(pa, lb) <= bounds.max_chars:
            chunks[-2:] = [(pa, lb)]
    return chunks


def chunk_text(text: str, embed: EmbedFn | None = None, bounds: ChunkBounds | None = None) -> list[str]:
    """Raw chunks of ``text``. Embeds units only when the text is longer than ``max_chars``."""
    bounds = bounds or ChunkBounds()
    stripped = text.strip()
    if not stripped:
        return []
    if len(stripped) <= bounds.max_chars:
        return [stripped]
    units = split_units(text, bounds.max_chars)
    vectors = None
    if embed is not None and len(units) > 2:
        vectors = np.asarray(embed([text[u.start : u.end] for u in units]), dtype=np.float64)
        if vectors.shape[0] != len(units):
            raise ValueError(f"embed returned {vectors.shape[0]} vectors for {len(units)} units")
    scores = boundary_scores(units, vectors, bounds)
    if vectors is not None:
        inner = scores[1:]
        threshold = min(float(np.percentile(inner, bounds.percentile)), float(np.median(inner)) - bounds.min_drop)
    else:
        threshold = -np.inf  # no topic signal: cut by size, preferring paragraph breaks
    return [text[units[a].start : units[b - 1].end] for a, b in segment(units, scores, bounds, threshold)]
