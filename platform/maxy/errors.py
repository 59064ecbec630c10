"""Errors an operator or an agent can act on: each says what failed and what to do next."""

from __future__ import annotations


class MaxyError(Exception):
    """Base class: ``str(err)`` is a complete, user-facing sentence."""


class ValidationError(MaxyError, ValueError):
    """Bad input, naming the field and the reason."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class ConfigError(MaxyError):
    """Missing or inconsistent configuration."""


class AccountError(MaxyError):
    """ACCOUNT_ID missing, unknown on disk, or not the validated account."""

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)


class DatabaseUnavailable(MaxyError):
    """Neo4j could not be reached or refused the credentials."""


class SchemaError(MaxyError):
    """The live schema does not match what this process needs (e.g. vector dimensions)."""


class GraphWriteError(MaxyError):
    """A write was refused; nothing was written."""

    def __init__(self, reason: str, message: str):
        self.reason = reason
        super().__init__(message)
