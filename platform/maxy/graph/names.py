"""Canonical names: how two spellings of one name are recognised as the same.

``name_key`` folds case, accents, punctuation and spacing ("Globex  Corp." and "globex corp"
give ``globex corp``). The write primitive stores it as ``nameKey`` on every node with a
``name`` (else a ``title``), and the keys of its aliases (``alternateName``, ``aliases``) as
``aliasKeys``; organisation-like labels also get the key without a trailing legal form, so
"Globex Corporation" and "Globex Corp." resolve to one node. Entity resolution and the
exact-name lookup of search both read these keys.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

NAME_PROPS = ("name", "title")
ALIAS_PROPS = ("alternateName", "aliases")
ORGANISATION_LABELS = frozenset({"Organization", "Company", "LocalBusiness"})
LEGAL_FORMS = frozenset(
    {"inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc", "plc", "gmbh", "ag", "sa"}
)
MAX_KEY_CHARS = 200

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def name_key(text: object) -> str | None:
    """The canonical form of a name, or None when it has no letters or digits."""
    if not isinstance(text, str):
        return None
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    key = " ".join(_NON_WORD.sub(" ", plain.casefold()).split())
    return key[:MAX_KEY_CHARS] or None


def _without_legal_form(key: str) -> str | None:
    words = key.split()
    while len(words) > 1 and words[-1] in LEGAL_FORMS:
        words.pop()
    short = " ".join(words)
    return short if short != key else None


def _aliases(props: Mapping[str, Any]) -> list[str]:
    out: list[str] = []
    for prop in ALIAS_PROPS:
        value = props.get(prop)
        for item in [value] if isinstance(value, str) else (value if isinstance(value, list) else []):
            if isinstance(item, str):
                out.append(item)
    return out


def primary_name(props: Mapping[str, Any]) -> str | None:
    for prop in NAME_PROPS:
        value = props.get(prop)
        if isinstance(value, str) and value.strip():
            return value
    return None


def node_keys(labels: Sequence[str], props: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(nameKey, aliasKeys) of a node with these labels and (merged) properties."""
    key = name_key(primary_name(props))
    aliases = [k for k in (name_key(a) for a in _aliases(props)) if k]
    if ORGANISATION_LABELS.intersection(labels):
        aliases += [short for short in (_without_legal_form(k) for k in [key, *aliases] if k) if short]
    return key, sorted(set(aliases) - {key})


def lookup_keys(labels: Sequence[str], props: Mapping[str, Any]) -> list[str]:
    """Every key a node written with these properties may be known by (its name and aliases)."""
    key, aliases = node_keys(labels, props)
    return sorted({k for k in [key, *aliases] if k})
