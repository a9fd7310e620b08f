"""The versions that change a number: the code's sizing, scoring, prompt and simulator versions (and where each is
defined), how many stored rows carry each version, and the database's schema revision. Reads the store; never
writes. (Kept out of `arena.web`, which must not import the venues or the agents.)"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import func, select, text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.domain.sizing import SIZING_VERSION
from arena.read.score import SCORING_VERSION
from arena.store.tables import DecisionRow, ModelCallRow


@dataclass(frozen=True)
class CodeVersion:
    name: str
    value: str
    where: str  # the constant that defines it ("" when its module is not installed)


@dataclass(frozen=True)
class StoredVersions:
    seen: tuple[tuple[str, str, int], ...]  # what, version ("—" when empty), rows stamped with it; sorted
    schema_revision: str  # alembic's version_num, "none" when the table is absent or empty


def _optional_version(candidates: Sequence[tuple[str, str]]) -> tuple[str, str]:
    for module, attr in candidates:
        try:
            value = getattr(importlib.import_module(module), attr)
        except Exception:  # noqa: BLE001 — an absent or broken optional module just means "not installed"
            continue
        return str(value), f"{module}.{attr}"
    return "not installed", ""


def code_versions() -> tuple[CodeVersion, ...]:
    """The versions of this code that change a number, each with the constant that defines it."""
    from arena.venues.simulated import SIMULATOR_VERSION

    prompt, where = _optional_version([("arena.agents.prompts", "PROMPT_VERSION"),
                                       ("arena.agents.llm", "PROMPT_VERSION")])
    return (
        CodeVersion("sizing", SIZING_VERSION, "arena.domain.sizing.SIZING_VERSION"),
        CodeVersion("scoring", SCORING_VERSION, "arena.read.score.SCORING_VERSION"),
        CodeVersion("prompt", prompt, where),
        CodeVersion("simulator", SIMULATOR_VERSION, "arena.venues.simulated.SIMULATOR_VERSION"),
    )


def stored_versions(engine: Engine) -> StoredVersions:
    """The versions the stored rows carry (sizing on decisions, prompt on model calls) with their counts, and the
    schema revision."""
    with engine.connect() as conn:
        seen = [("sizing (decisions)", v or "—", int(n)) for v, n in conn.execute(
            select(DecisionRow.sizing_version, func.count()).group_by(DecisionRow.sizing_version)).all()]
        seen += [("prompt (model calls)", v or "—", int(n)) for v, n in conn.execute(
            select(ModelCallRow.prompt_version, func.count()).group_by(ModelCallRow.prompt_version)).all()]
        try:  # read directly: importing alembic to ask would cost more than the whole page
            revision = conn.execute(text("SELECT version_num FROM alembic_version")).scalar() or "none"
        except SQLAlchemyError:
            revision = "none"
    return StoredVersions(tuple(sorted(seen)), str(revision))
