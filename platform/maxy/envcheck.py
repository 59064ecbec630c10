"""Environment variables that look like Maxy's settings but are none of them.

``ACOUNT_ID=<id> maxy ingest ...`` would otherwise write into the default account without a
word. Each command names such a variable on stderr with the setting it most likely meant:
a spelling close to a setting's (or to another variable Maxy reads), closer still when both
start with the same word (``MAXY_``, ``NEO4J_``, ...). Variables of other programs that merely
resemble one of ours (``NEO4J_HOME``) stay below the bar.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Mapping

#: Variables Maxy reads besides the settings (``maxy.config.Settings``).
OTHER_NAMES = frozenset(
    {
        "MAXY_CONFIG_DIR",
        "MAXY_CACHE_DIR",
        "MAXY_DEBUG",
        "MAXY_LOG_LEVEL",
        "MAXY_JAVA",
        "MAXY_MVN",
        "MAXY_MAVEN_REPO",
        "MAXY_BGE_MODEL_DIR",
        "MAXY_TOKENIZER_PATH",
        "MAXY_SKIP_DEMO",
        "CLAUDE_CODE_SESSION_ID",
    }
)
CLOSE = 0.85  # SequenceMatcher ratio: ACOUNT_ID/ACCOUNT_ID 0.95; NEO4J_HOME/NEO4J_HEAP 0.80
CLOSE_SAME_WORD = 0.83  # NEO4J_USERNAME/NEO4J_USER, MAXY_CONFIG/MAXY_CONFIG_DIR


def known_names() -> frozenset[str]:
    from .config import Settings

    return frozenset(Settings.model_fields) | OTHER_NAMES


def _first_word(name: str) -> str:
    return name.split("_", 1)[0]


def mistyped(environ: Mapping[str, str]) -> list[tuple[str, str]]:
    """(variable, the name it most likely meant) for each variable of ``environ`` that is no
    name Maxy reads but is spelled close to one, sorted by variable."""
    known = known_names()
    found = []
    for name in sorted(environ):
        if name in known or not name.isupper():
            continue
        for candidate in difflib.get_close_matches(name, known, n=1, cutoff=CLOSE_SAME_WORD):
            ratio = difflib.SequenceMatcher(None, name, candidate).ratio()
            if ratio >= CLOSE or _first_word(name) == _first_word(candidate):
                found.append((name, candidate))
    return found


def warn_mistyped(environ: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """One ``warning:`` line on stderr per look-alike variable; returns them."""
    found = mistyped(os.environ if environ is None else environ)
    for name, meant in found:
        sys.stderr.write(f"warning: {name} is not a Maxy setting; did you mean {meant}?\n")
    if found:
        sys.stderr.flush()
    return found
