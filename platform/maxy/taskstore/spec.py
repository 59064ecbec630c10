"""A task's spec: what is to be done, and whether it is complete enough to be executed.

    goal                 what the task achieves (text)
    scope_in, scope_out  what is and is not part of it
    inputs, outputs      what it starts from and what it delivers
    acceptance_criteria  how a reviewer tells it is done (at least one, each checkable as written)
    risks                what could go wrong (may be empty, but present)

A malformed payload (not an object, an unknown field, a value of the wrong type, too long)
is refused with a ValidationError. A well-formed but incomplete one is stored with its
problems (:func:`check_spec`): the task stays in spec_draft until there are none.

A criterion is checkable as written when it has at least four words, holds no placeholder
("TBD", "TODO", "etc", "...", "as expected", "and so on"), and names an observable outcome: a
number, a comparison ("at least", "within", "<", "every", "never" ...), a verb a reviewer can
watch happen ("returns", "shows", "logs", "refuses", "exits" ...) or one of the declared
outputs. "It works properly and is fast" names none, so it is a problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..errors import ValidationError

SPEC_FIELDS: tuple[str, ...] = (
    "goal",
    "scope_in",
    "scope_out",
    "inputs",
    "outputs",
    "acceptance_criteria",
    "risks",
)
LIST_FIELDS: tuple[str, ...] = SPEC_FIELDS[1:]
NON_EMPTY_FIELDS: tuple[str, ...] = ("goal", "scope_in", "outputs", "acceptance_criteria")
MAX_GOAL = 2_000
MAX_ITEM = 1_000
MAX_ITEMS = 50
MIN_CRITERION_WORDS = 4

_WORD_RE = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
_PLACEHOLDERS = ("tbd", "todo", "etc", "...", "as expected", "and so on", "???")
_COMPARISONS = (
    "<",
    ">",
    "=",
    "≤",
    "≥",
    "at least",
    "at most",
    "less than",
    "more than",
    "fewer than",
    "greater than",
    "no more than",
    "no later than",
    "within",
    "exactly",
    "equal",
    "every",
    "each",
    "none",
    "never",
    "always",
    "only",
    "zero",
)
_OBSERVABLE_VERBS = frozenset(
    """accept answer appear complete contain count create delete display emit end equal exceed exit fail
    finish include keep leave link list load log mark match name open output pass print produce raise
    read record redirect refuse reject render report respond return save send show start stop store
    succeed write""".split()
)


@dataclass(frozen=True)
class Problem:
    """Why the spec is not complete yet: the field (``acceptance_criteria[1]``) and the reason."""

    field: str
    reason: str

    def __str__(self) -> str:
        return f"{self.field}: {self.reason}"


def normalize_spec(payload: object) -> dict[str, Any]:
    """The payload's fields, their text stripped; absent fields stay absent (a problem, not an
    error). A malformed payload raises a ValidationError naming the field."""
    if not isinstance(payload, dict):
        raise ValidationError("spec", f"an object with the fields {', '.join(SPEC_FIELDS)}")
    spec: dict[str, Any] = {}
    for key, value in payload.items():
        if key not in SPEC_FIELDS:
            raise ValidationError(f"spec.{key}", f"not a spec field; the fields are {', '.join(SPEC_FIELDS)}")
        if value is not None:
            spec[key] = _goal(value) if key == "goal" else _items(key, value)
    return spec


def _goal(value: object) -> str:
    if not isinstance(value, str):
        raise ValidationError("spec.goal", "text saying what the task achieves")
    if len(value) > MAX_GOAL:
        raise ValidationError("spec.goal", f"at most {MAX_GOAL} characters; move detail into scope_in")
    return value.strip()


def _items(key: str, value: object) -> list[str]:
    if not isinstance(value, list):
        raise ValidationError(f"spec.{key}", "a list of texts (an empty list when there is nothing to say)")
    if len(value) > MAX_ITEMS:
        raise ValidationError(f"spec.{key}", f"at most {MAX_ITEMS} items")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise ValidationError(f"spec.{key}[{i}]", "text")
        if len(item) > MAX_ITEM:
            raise ValidationError(f"spec.{key}[{i}]", f"at most {MAX_ITEM} characters")
    return [item.strip() for item in value]


def check_spec(payload: object) -> list[Problem]:
    """Every reason the spec is not complete yet (none: it is complete)."""
    spec = normalize_spec(payload)
    problems: list[Problem] = []
    for name in SPEC_FIELDS:
        if name not in spec:
            empty = "[]" if name in LIST_FIELDS else '""'
            needed = "must not be empty" if name in NON_EMPTY_FIELDS else f"may be empty ({empty}) but must be given"
            problems.append(Problem(name, f"missing; {needed}"))
            continue
        value = spec[name]
        if name in NON_EMPTY_FIELDS and not value:
            what = "say what the task achieves" if name == "goal" else "give at least one item"
            problems.append(Problem(name, f"empty; {what}"))
        if isinstance(value, list):
            problems += [
                Problem(f"{name}[{i}]", "empty text; remove it or fill it in") for i, v in enumerate(value) if not v
            ]
    for i, criterion in enumerate(spec.get("acceptance_criteria") or []):
        reason = criterion_problem(criterion, spec.get("outputs") or [])
        if criterion and reason is not None:
            problems.append(Problem(f"acceptance_criteria[{i}]", reason))
    return problems


def criterion_problem(criterion: str, outputs: list[str]) -> str | None:
    """Why ``criterion`` is not checkable as written, or None when it is."""
    text = criterion.lower()
    words = _WORD_RE.findall(text)
    if len(words) < MIN_CRITERION_WORDS:
        return f"{criterion!r} is too short to check (fewer than {MIN_CRITERION_WORDS} words)"
    for placeholder in _PLACEHOLDERS:
        if (placeholder in words) if placeholder.isalpha() else (placeholder in text):
            return f"{criterion!r} holds a placeholder ({placeholder!r}); say what exactly is expected"
    if _observable(text, words, outputs):
        return None
    return (
        f"{criterion!r} names no observable outcome; add a number, a comparison (at least, within, every), "
        "a verb a reviewer can see happen (returns, shows, logs, refuses) or one of the outputs"
    )


def _observable(text: str, words: list[str], outputs: list[str]) -> bool:
    if any(ch.isdigit() for ch in text):
        return True
    padded = f" {' '.join(words)} "
    if any((f" {c} " in padded) if c[0].isalpha() else (c in text) for c in _COMPARISONS):
        return True
    if any(_stem_in(w, _OBSERVABLE_VERBS) for w in words):
        return True
    return any(o.strip() and o.strip().lower() in text for o in outputs)


def _stem_in(word: str, verbs: frozenset[str]) -> bool:
    """``word`` or its form without -s, -es, -ed, -d, -ing (a doubled last consonant too) is in ``verbs``."""
    forms = {word, word[:-1], word[:-2], word[:-3]}
    if word.endswith("ing"):
        forms.add(word[:-3] + "e")
    return bool(forms & verbs)
