"""Errors an operator or an agent can act on: each says what failed and what to do next."""

from __future__ import annotations


class MaxyError(Exception):
    """Base class: ``str(err)`` is a complete, user-facing sentence."""

    exit_code = 1  # the command line's exit status: 1 a runtime failure, 2 a bad flag or setting


class ValidationError(MaxyError, ValueError):
    """Bad input, naming the field and the reason."""

    def __init__(self, field: str, reason: str):
        self.field = field
        self.reason = reason
        super().__init__(f"{field}: {reason}")


class ConfigError(MaxyError):
    """Missing or inconsistent configuration."""


class SettingsError(ConfigError):
    """A setting's value is malformed (``NAME: value, reason; fix``): nothing was started."""

    exit_code = 2

    def __init__(self, name: str, message: str):
        self.name = name
        super().__init__(message)


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


class EmbeddingError(RuntimeError):
    """An embedding could not be produced.

    The message always says what failed and what to do next (which setting to change,
    which command to run), so callers can show it to a person as it is.
    """
