"""``did you mean``: a mistyped label or relationship type is answered with the closest known
names, and a name far from every known one with none (the full list is shown instead)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.graph.allowlist import ALL_LABELS, RELATIONSHIP_TYPES, check_label, check_labels, check_relationship_type
from maxy.spelling import closest, did_you_mean

from tests.hypothesis_profile import examples

LABELS = sorted(ALL_LABELS)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(LABELS), st.data())
def test_a_label_in_any_case_or_plural_is_found_first(label: str, data: st.DataObject) -> None:
    flips = data.draw(st.lists(st.booleans(), min_size=len(label), max_size=len(label)))
    cased = "".join(c.swapcase() if flip else c for c, flip in zip(label, flips, strict=True))
    assert closest(cased, LABELS)[0] == label
    assert label in closest(label + "s", LABELS)


def test_the_error_line_suggests_or_lists() -> None:
    with pytest.raises(ValidationError) as typo:
        check_labels(["Note", "Chunks"], field="labels")
    assert str(typo.value) == "labels: unknown label 'Chunks'; did you mean Chunk?"
    with pytest.raises(ValidationError) as far:
        check_label("Spaceship")
    assert str(far.value).startswith("labels: unknown label 'Spaceship'; allowed labels: AdminConversation, ")
    with pytest.raises(ValidationError) as rel:
        check_relationship_type("WORKS_FOUR")
    assert str(rel.value) == "edges.type: unknown relationship type 'WORKS_FOUR'; did you mean WORKS_FOR?"
    with pytest.raises(ValidationError) as odd:
        check_label(7)
    assert "allowed labels:" in str(odd.value)


def test_nothing_close_is_no_suggestion() -> None:
    assert did_you_mean("Spaceship", LABELS) == ""
    assert did_you_mean("persons", LABELS) == "did you mean Person?"
    assert closest("LIKES", sorted(RELATIONSHIP_TYPES)) == []
