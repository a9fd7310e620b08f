"""The arena's small error hierarchy: raised near the cause, caught and recorded at one boundary (CLI, job runner)."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena raises on purpose. `reason` is a short machine-readable code."""

    reason: str = "error"

    def __init__(self, message: str, *, reason: str | None = None, **data: object) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason
        self.data = data

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.reason


class RejectedOrder(ArenaError):
    """An agent's action broke a rule (limit, unknown or closed market, malformed amount). Stored with its reason."""

    reason = "rejected"


class LedgerError(ArenaError):
    """A fill would break a ledger invariant (negative cash, selling shares not held, settling twice)."""

    reason = "ledger"


class ParseError(ArenaError):
    """A venue payload or model reply could not be parsed; `field` names what was wrong."""

    reason = "parse"

    def __init__(self, message: str, *, field: str = "", **data: object) -> None:
        super().__init__(f"{field}: {message}" if field else message, **data)
        self.field = field


class NotFound(ArenaError):
    """A market, cohort or agent the caller named does not exist."""

    reason = "not_found"


class ConfigError(ArenaError):
    """The arena's configuration is missing or inconsistent."""

    reason = "config"
