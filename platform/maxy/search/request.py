"""What a search asks for: the query and the filters a caller may set, validated in one place."""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, dataclass

from ..errors import ValidationError
from ..graph.allowlist import SEARCHABLE_LABELS, check_labels
from ..graph.validity import to_instant
from .classifier import RETRIEVAL_CLASSES

MAX_QUERY_CHARS = 4_000
MAX_LIMIT = 500


@dataclass(frozen=True)
class SearchRequest:
    query: str
    _: KW_ONLY
    limit: int = 10
    labels: tuple[str, ...] | None = None  # None: every searchable label
    fields: tuple[str, ...] | None = None  # None: every property; (): none
    expand_hops: int = 1  # 1: attach related nodes; 0: compact
    threshold: float = 0.0  # drop hits scoring below this after fusion and boosts
    min_relevance: float | None = None  # drop hits less relevant; None: no hit if none clears the cut; 0: keep all
    retrieval_class: str | None = None  # routes the search when routing is on; None: classify or not route
    session_id: str | None = None  # only nodes of this conversation session (message search)
    as_of: str | None = None  # what was true at this instant (ISO 8601); None: what is true now
    include_history: bool = False  # superseded and expired facts too
    after: str | None = None  # only what happened at or after this instant (ISO 8601)
    before: str | None = None  # only what happened before this instant

    def validated(self) -> SearchRequest:
        """The same request, checked and normalised; a bad field raises ``ValidationError``."""
        return dataclasses.replace(
            self,
            query=_query(self.query),
            limit=_limit(self.limit),
            labels=_labels(self.labels),
            fields=_fields(self.fields),
            expand_hops=_expand_hops(self.expand_hops),
            threshold=_threshold(self.threshold),
            min_relevance=_min_relevance(self.min_relevance),
            retrieval_class=_retrieval_class(self.retrieval_class),
            session_id=_session_id(self.session_id),
            as_of=_instant(self.as_of, "asOf"),
            include_history=_flag(self.include_history, "includeHistory"),
            after=_instant(self.after, "after"),
            before=_instant(self.before, "before"),
        )._window_checked()

    def _window_checked(self) -> SearchRequest:
        if self.after is not None and self.before is not None and self.after >= self.before:
            raise ValidationError("before", f"must be later than after ({self.after})")
        if self.as_of is not None and self.include_history:
            raise ValidationError("asOf", "give asOf (what was true then) or includeHistory (everything), not both")
        return self


def _query(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError("query", "a non-empty search text is required")
    if len(value) > MAX_QUERY_CHARS:
        raise ValidationError("query", f"at most {MAX_QUERY_CHARS} characters")
    return value.strip()


def _limit(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise ValidationError("limit", f"an integer from 1 to {MAX_LIMIT}")
    return value


def _labels(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    labels = tuple(check_labels(value, field="labels"))  # type: ignore[arg-type]
    outside = [lab for lab in labels if lab not in SEARCHABLE_LABELS]
    if outside:
        searchable = ", ".join(sorted(SEARCHABLE_LABELS))
        raise ValidationError("labels", f"not searchable: {', '.join(outside)}; searchable labels: {searchable}")
    return labels


def _fields(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, (list, tuple)) or not all(isinstance(f, str) for f in value):
        raise ValidationError("fields", "a list of property names")
    return tuple(value)


def _expand_hops(value: object) -> int:
    if isinstance(value, bool) or value not in (0, 1):
        raise ValidationError("expandHops", "0 (compact, no related nodes) or 1 (one hop)")
    return int(value)


def _threshold(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValidationError("threshold", "a number >= 0")
    return float(value)


def _min_relevance(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValidationError("minRelevance", "a number from 0 to 1 (0 keeps every hit; omit it for the default cut)")
    return float(value)


def _retrieval_class(value: object) -> str | None:
    if value is None:
        return None
    if value not in RETRIEVAL_CLASSES:
        raise ValidationError("retrievalClass", f"one of {', '.join(RETRIEVAL_CLASSES)}")
    return str(value)


def _session_id(value: object) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValidationError("sessionId", "a non-empty session id")
    return value


def _instant(value: object, field: str) -> str | None:
    return None if value is None else to_instant(value, field)


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise ValidationError(field, "true or false")
    return value
