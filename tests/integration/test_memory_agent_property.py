"""Properties of memory names and memory spaces, with hypothesis (the spaces against the real Neo4j):

- any text is a valid memory name exactly when it is 1-128 of the letters, digits and
  ``. _ : @ -``; a valid one comes back unchanged, any other is one ValidationError naming
  ``memory`` (or the field the caller names);
- whatever two views of one account write under the same memory name, each lists only its own
  entries, recent first.
"""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from maxy.errors import ValidationError
from maxy.graph.guards import Caller
from maxy.graph.write import GraphWriter
from maxy.memoryagent import add_entry, check_memory, list_entries

from tests.hypothesis_profile import examples

ALLOWED = set(string.ascii_letters + string.digits + "._:@-")
NAMES = st.one_of(
    st.text(alphabet="".join(sorted(ALLOWED)), min_size=1, max_size=140),
    st.text(max_size=140),
    st.sampled_from(["", " ada", "ada\n", "a/b", "é", "user:ada@example.com", "x" * 128, "x" * 129]),
)


@given(name=NAMES, field=st.sampled_from(["memory", "memoryId"]))
@hsettings(max_examples=examples(400), deadline=None)
def test_a_memory_name_is_valid_exactly_when_the_oracle_says(name: str, field: str) -> None:
    valid = 1 <= len(name) <= 128 and set(name) <= ALLOWED
    if valid:
        assert check_memory(name, field) == name
        return
    with pytest.raises(ValidationError) as err:
        check_memory(name, field)
    assert err.value.field == field and "\n" not in str(err.value)


def test_a_non_string_memory_is_refused_naming_the_field() -> None:
    for value in (None, 7, ["ada"], b"ada"):
        with pytest.raises(ValidationError) as err:
            check_memory(value)
        assert err.value.field == "memory"


VIEWS = {
    "admin": Caller("-"),
    "public-bot": Caller("-", ("public",), "bot"),
    "shared": Caller("-", ("shared",)),
    "public-other": Caller("-", ("public",), "other"),
}
WRITES = st.lists(st.tuples(st.sampled_from(sorted(VIEWS)), st.sampled_from(["ada", "bob"])), min_size=1, max_size=8)


@given(writes=WRITES)
@hsettings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_spaces_of_two_views_never_see_each_others_entries(db, make_account, writes) -> None:
    account = make_account("views")
    callers = {name: Caller(account.account_id, v.allowed_scopes, v.agent_slug) for name, v in VIEWS.items()}
    expected: dict[tuple[str, str], list[str]] = {}
    for i, (view, memory) in enumerate(writes):
        writer = GraphWriter(db, account, None, caller=callers[view])
        raw = f"{view} {memory} {i}"
        add_entry(writer, memory, summary=f"entry {i}", raw_entry=raw)
        expected.setdefault((view, memory), []).insert(0, raw)  # recent first
    for view, caller in callers.items():
        for memory in ("ada", "bob"):
            seen = [r["rawEntry"] for r in list_entries(db, caller, memory, limit=100)]
            assert seen == expected.get((view, memory), []), (view, memory)
