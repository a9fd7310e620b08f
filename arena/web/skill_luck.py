"""Skill vs luck: each agent's P/L split into the edge it claimed and what its own beliefs call luck, as
`services.decomposition` computes it (exact micro-USD), for the cohort, agent and model pages and the API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from sqlalchemy.engine import Engine

from arena.read.decomposition import decomposition
from arena.cache.memo import Recent, kept


@dataclass(frozen=True)
class SkillLuck:
    """An agent's P/L split into the edge it claimed and what its own beliefs call luck (`scoring.decomposition`;
    micro-USD, exact): pnl = expected_pnl + belief_gap + move_without_belief + resolution_residual. Slippage is
    already inside the parts (a view, not an addend)."""

    n_bets: int
    n_without_belief: int
    pnl: int
    expected_pnl: int
    belief_gap: int
    move_without_belief: int
    resolution_residual: int
    slippage_cost: int

    @property
    def luck(self) -> int:
        """belief_gap + resolution_residual = shares x (outcome - stated belief): zero on average if the beliefs
        were right."""
        return self.belief_gap + self.resolution_residual


SKILL_LUCK_FIELDS = ("n_bets", "n_without_belief", "pnl", "expected_pnl", "belief_gap", "move_without_belief",
                     "resolution_residual", "slippage_cost")


_SLICES: Recent[dict[tuple[str, str], SkillLuck]] = Recent("skill and luck")  # cohort key → its agents' parts


def skill_luck(engine: Engine, as_of: datetime, cohort_names: Sequence[str] | None = None, *,
               keys: Mapping[str, str] | None = None) -> dict[tuple[str, str], SkillLuck]:
    """(cohort, agent) → its `SkillLuck`, from `services.decomposition` (None: every cohort). `keys` (cohort name
    → a key naming every fact its decomposition reads, as `web.page_keys` gives): a cohort this process
    decomposed before under the same key is taken from memory (each cohort's decomposition is its own)."""
    if keys is None:
        return _compute(engine, as_of, cohort_names)
    names = list(keys) if cohort_names is None else [n for n in cohort_names if n in keys]

    def compute(missing: list[str]) -> dict[str, dict[tuple[str, str], SkillLuck]]:
        fresh: dict[str, dict[tuple[str, str], SkillLuck]] = {n: {} for n in missing}
        for k, v in _compute(engine, as_of, missing).items():
            fresh[k[0]][k] = v
        return fresh

    found = kept({n: keys[n] for n in names}, _SLICES, None, compute, filed=str, now=None)
    return {k: v for n in names for k, v in found[n].items()}


def _compute(engine: Engine, as_of: datetime, cohort_names: Sequence[str] | None) -> dict[tuple[str, str], SkillLuck]:
    agents = decomposition(engine, as_of, list(cohort_names) if cohort_names else None).agents
    out = {}
    for row in agents.itertuples(index=False):
        r = row._asdict()
        out[(str(r["cohort"]), str(r["agent"]))] = SkillLuck(
            **{f: int(r[f]) if not pd.isna(r[f]) else 0 for f in SKILL_LUCK_FIELDS})
    return out
