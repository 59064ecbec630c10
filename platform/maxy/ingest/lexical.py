"""Lexical vectors of a section's units, for finding its topic boundaries without the embedder.

Each unit (a sentence, a list item, a code block) becomes a bag of its content words: lower
case, stop words and words of fewer than three characters left out, plural and verb endings
cut (``cells``/``cell``, ``increased``/``increase``), each word weighted by ``1 + log(tf)`` times
its inverse frequency among the section's units (a word every unit holds says nothing about
where the topic changes). Words are hashed into ``DIMENSIONS`` buckets (CRC-32, stable across
runs), so the vectors are plain arrays the chunker's cosine windows read like embeddings.

This is TextTiling's signal (Hearst, 1997): across a topic change, the words of the sentences
before and after it stop overlapping. It costs a tokenisation, where embedding every sentence
cost as much as embedding the section again.
"""

from __future__ import annotations

import math
import re
import zlib
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from .summarize import STOP_WORDS

DIMENSIONS = 2048

_WORD = re.compile(r"[a-z0-9][a-z0-9'-]*[a-z0-9]")
_SUFFIXES = ("ies", "ing", "ed", "es", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A crude stem: the common plural and verb endings cut when a stem of 4+ characters is left."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            base = word[: -len(suffix)]
            return base + "y" if suffix == "ies" else base
    return word


def terms(text: str) -> list[str]:
    """The stemmed content words of ``text``, in order, repeats kept."""
    return [stem(w) for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in STOP_WORDS]


@lru_cache(maxsize=65536)
def _bucket(term: str) -> int:
    return zlib.crc32(term.encode("utf-8")) % DIMENSIONS


def lexical_vectors(texts: Sequence[str]) -> np.ndarray:
    """One L2-normalised TF-IDF vector per text (a unit with no content word is all zeros)."""
    bags = [Counter(terms(t)) for t in texts]
    df = Counter(term for bag in bags for term in bag)
    n = len(bags)
    out = np.zeros((n, DIMENSIONS), dtype=np.float64)
    for i, bag in enumerate(bags):
        for term, tf in bag.items():
            out[i, _bucket(term)] += (1.0 + math.log(tf)) * math.log((n + 1) / (df[term] + 0.5))
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1.0, norms)
