"""An account named by its id or its name: ``resolve_account`` decides, and ACCOUNT_ID in the
settings becomes the id of the account it names."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from maxy.accounts import (
    account_option,
    account_ref,
    create_account,
    ref_label,
    resolve_account,
    validate_account,
)
from maxy.config import load_settings
from maxy.errors import AccountError, ValidationError

# a few short names, so that random account sets share names often
NAMES = st.sampled_from(["docs", "Docs", " docs ", "shop", "notes", "my notes", "ÉTÉ", "été", "a"])


def _accounts(tmp: Path, names: list[str]):
    return [create_account(tmp, name) for name in names]


@settings(max_examples=40, deadline=None)
@given(names=st.lists(NAMES, min_size=1, max_size=6), wanted=NAMES)
def test_an_id_always_gives_its_account_and_a_name_its_only_holder(names: list[str], wanted: str) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        made = _accounts(tmp, names)
        for account in made:
            assert resolve_account(tmp, account.account_id).account_id == account.account_id
            assert resolve_account(tmp, account.account_id.upper()).account_id == account.account_id
        holders = [a for a in made if a.name.casefold() == wanted.strip().casefold()]
        if len(holders) == 1:
            assert resolve_account(tmp, wanted).account_id == holders[0].account_id
            return
        with pytest.raises(AccountError) as refused:
            resolve_account(tmp, wanted)
        if holders:
            assert refused.value.reason == "ambiguous"
            shown = {a.account_id for a in made if a.account_id in str(refused.value)}
            assert shown == {a.account_id for a in holders}, str(refused.value)
            assert f"ACCOUNT_ID={wanted.strip()}: {len(holders)} accounts are named" in str(refused.value)
        else:
            assert refused.value.reason == "mismatch"
            assert not any(a.account_id in str(refused.value) for a in made)
    finally:
        shutil.rmtree(tmp)


def test_an_id_wins_over_a_name_that_spells_another_id(data_root: Path) -> None:
    first = create_account(data_root, "first")
    impostor = create_account(data_root, first.account_id)  # a name that is another account's id
    assert resolve_account(data_root, first.account_id).account_id == first.account_id
    assert resolve_account(data_root, impostor.account_id).account_id == impostor.account_id


def test_an_unknown_value_lists_the_names_when_few_and_points_to_the_list_when_many(data_root: Path) -> None:
    create_account(data_root, "docs")
    create_account(data_root, "shop")
    with pytest.raises(AccountError) as few:
        validate_account(data_root, "dcos")
    assert str(few.value).startswith(f"ACCOUNT_ID=dcos matches no account under {data_root / 'accounts'}")
    assert "the accounts are named 'docs', 'shop'" in str(few.value)
    for n in range(10):
        create_account(data_root, f"team-{n}")
    with pytest.raises(AccountError) as many:
        validate_account(data_root, "dcos")
    assert "'docs'" not in str(many.value) and "`maxy account list`" in str(many.value)


def test_a_deleted_account_is_not_found_by_name_or_id(data_root: Path) -> None:
    gone = create_account(data_root, "old")
    kept = create_account(data_root, "kept")
    # how `maxy account delete` leaves it: the folder moved under accounts/.deleted
    deleted = data_root / "accounts" / ".deleted" / gone.account_id
    deleted.parent.mkdir()
    gone.path.parent.rename(deleted)
    for value in ("old", gone.account_id):
        with pytest.raises(AccountError) as refused:
            resolve_account(data_root, value)
        assert refused.value.reason == "mismatch" and "'kept'" in str(refused.value)
        assert f"(by id or name): 'old' ({gone.account_id}) is a deleted account; " in str(refused.value)
    assert resolve_account(data_root, "kept").account_id == kept.account_id


def test_a_name_shared_with_a_deleted_account_names_the_live_one(data_root: Path) -> None:
    gone = create_account(data_root, "docs")
    live = create_account(data_root, "docs")
    (data_root / "accounts" / ".deleted").mkdir()
    gone.path.parent.rename(data_root / "accounts" / ".deleted" / gone.account_id)
    assert resolve_account(data_root, "docs").account_id == live.account_id


def test_an_option_names_itself(data_root: Path) -> None:
    create_account(data_root, "docs")
    create_account(data_root, "docs")
    with pytest.raises(ValidationError) as refused:
        account_option(data_root, "docs")
    assert refused.value.field == "--account"
    assert str(refused.value).startswith("--account: docs: 2 accounts are named 'docs' (")


def test_settings_turn_a_name_into_its_id_and_keep_what_names_none_or_several(data_root: Path) -> None:
    docs = create_account(data_root, "docs")
    notes = create_account(data_root, "my notes")
    assert load_settings(ACCOUNT_ID="docs", DATA_ROOT=data_root).ACCOUNT_ID == docs.account_id
    assert load_settings(ACCOUNT_ID=" Docs ", DATA_ROOT=data_root).ACCOUNT_ID == docs.account_id
    assert load_settings(ACCOUNT_ID="MY NOTES", DATA_ROOT=data_root).ACCOUNT_ID == notes.account_id
    assert load_settings(ACCOUNT_ID=docs.account_id.upper(), DATA_ROOT=data_root).ACCOUNT_ID == docs.account_id
    assert load_settings(ACCOUNT_ID="nobody", DATA_ROOT=data_root).ACCOUNT_ID == "nobody"
    create_account(data_root, "docs")
    assert load_settings(ACCOUNT_ID="docs", DATA_ROOT=data_root).ACCOUNT_ID == "docs"
    unknown = str(uuid.uuid4())
    assert load_settings(ACCOUNT_ID=unknown, DATA_ROOT=data_root).ACCOUNT_ID == unknown


def test_a_summary_names_the_account_by_name_and_short_id(data_root: Path) -> None:
    docs = create_account(data_root, "docs")
    ref = account_ref(data_root, docs.account_id)
    assert ref == {"id": docs.account_id, "name": "docs"}
    assert ref_label(ref) == f"account docs ({docs.account_id[:8]})"
    nobody = str(uuid.uuid4())
    assert ref_label(account_ref(data_root, nobody)) == f"account {nobody}"
