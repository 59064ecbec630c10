"""The accounts the evaluations write into: one per data set (or conversation), found by name."""

from __future__ import annotations

from ..accounts import ValidatedAccount, create_account, list_accounts, validate_account
from ..config import Settings
from ..db import Database


def named_account(settings: Settings, name: str) -> ValidatedAccount:
    """The account called ``name``, created on first use."""
    for account in list_accounts(settings.data_root):
        if account.name == name:
            return validate_account(settings.data_root, account.account_id)
    return validate_account(settings.data_root, create_account(settings.data_root, name).account_id)


def empty_account(db: Database, account: ValidatedAccount) -> None:
    """Delete every node of ``account`` (in batches), so it can be written afresh."""
    db.autocommit(
        "MATCH (n:Node {accountId: $a}) CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 2000 ROWS",
        a=account.account_id,
    )
