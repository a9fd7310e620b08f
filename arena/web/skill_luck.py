"""Skill vs luck: each agent's P/L split into the edge it claimed and what its own beliefs call luck, as
`services.decomposition` computes it (exact micro-USD), for the cohort, agent and model pages and the API.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import pandas as pd
from sqlalchemy.engine import Engine

from arena.services.decomposition import decomposition


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


def skill_luck(engine: Engine, as_of: datetime, cohort_names: Sequence[str] | None = None
               ) -> dict[tuple[str, str], SkillLuck]:
    """(cohort, agent) → its `SkillLuck`, from `services.decomposition` (None: every cohort)."""
    agents = decomposition(engine, as_of, list(cohort_names) if cohort_names else None).agents
    out = {}
    for row in agents.itertuples(index=False):
        r = row._asdict()
        out[(str(r["cohort"]), str(r["agent"]))] = SkillLuck(
            **{f: int(r[f]) if not pd.isna(r[f]) else 0 for f in SKILL_LUCK_FIELDS})
    return out
