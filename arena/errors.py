"""The arena's small error hierarchy: raised near the cause, caught and recorded at one boundary (CLI, job runner)."""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the arena raises on purpose. `reason` is a short machine-readable code; `fix` says
    what the user can do about it (the CLI prints ``arena: <message> — <fix>``); `exit_code` is the CLI's exit
    status: 2 when the input was wrong, 1 when the world failed (a database down, a port taken)."""

    reason: str = "error"
    exit_code: int = 1

    def __init__(self, message: str, *, reason: str | None = None, fix: str = "", **data: object) -> None:
        super().__init__(message)
        if reason is not None:
            self.reason = reason
        self.fix = fix
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
    exit_code = 2

    def __init__(self, message: str, *, field: str = "", **data: object) -> None:
        super().__init__(f"{field}: {message}" if field else message, **data)
        self.field = field


class NotFound(ArenaError):
    """A market, cohort or agent the caller named does not exist."""

    reason = "not_found"


class ConfigError(ArenaError):
    """The arena's configuration is missing or inconsistent."""

    reason = "config"
    exit_code = 2


class InputError(ArenaError):
    """A command's input is wrong: an argument out of range, a file that is not what it should be."""

    reason = "input"
    exit_code = 2


class StoreError(ArenaError):
    """The database cannot be used: a URL that is not one, an unknown driver, a server that does not answer, a
    database a read-only command expected but that does not exist."""

    reason = "store"


class SchemaError(StoreError):
    """The database is not at this version's arena schema (none, older, or a newer arena's), and the command
    may not change that: the database named is the wrong input."""

    reason = "schema"
    exit_code = 2


class DatabaseURLError(StoreError):
    """The database URL cannot be used: not a URL, or a driver that is unknown or not installed."""

    reason = "database_url"
    exit_code = 2
