"""Cohort betting rules and the limits they put on one decision (pure).

The max bet is a fraction of the cash at the *start* of the decision and is never recomputed between the
legs of one decision: a defect of the arena this project replaces was that later legs were measured against
the cash left after earlier ones, which inflated their implied confidence.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any

from arena.domain.forecast_set import LEGACY_SELECTION, ForecastSetRules
from arena.money import Money

SIZING_VERSION = "sizing-1"
# Decision-prompt versions a cohort can be frozen with (the templates live in arena/agents/prompts.py, which this
# pure module must not import). A cohort records its version in its rules; one whose rules predate the field
# used decision-v1, the only prompt there was.
# decision-v1.1, -v2.1 and -v3.1 are v1, v2 and v3 with the venues' text fenced as untrusted data.
PROMPT_VERSIONS = ("decision-v1", "decision-v2", "decision-v3", "decision-v1.1", "decision-v2.1", "decision-v3.1")
DEFAULT_PROMPT_VERSION = "decision-v3.1"  # what a new cohort is told: v3 (the headline is the forecast-set Brier,
# a missing forecast scored as 0.5), with the venue text fenced
LEGACY_PROMPT_VERSION = "decision-v1"


@dataclass(frozen=True)
class CohortRules:
    """Rules frozen into a cohort when it starts. Amounts are Money; `max_bet_fraction` of cash per bet."""

    starting_cash: Money = Money.of(10_000)
    max_bet_fraction: Decimal = Decimal("0.25")
    min_bet: Money = Money.of(50)
    max_actions: int = 20  # per decision; keeps one reply from flooding the book
    decision_weeks: int = 5  # the cohort takes decisions in this many weekly rounds, then only settles
    prompt_version: str = DEFAULT_PROMPT_VERSION  # the decision prompt every LLM agent of the cohort is sent
    # how each round's forecast set is chosen (`domain.forecast_set`): band-v2 for a new cohort; a cohort whose
    # stored rules predate the field keeps the rule it ran with, volume-v1 (`from_json`)
    forecast: ForecastSetRules = ForecastSetRules()

    def __post_init__(self) -> None:
        if not Decimal(0) < self.max_bet_fraction <= Decimal(1):
            raise ValueError("max_bet_fraction must be in (0, 1]")
        if self.starting_cash.micros <= 0:
            raise ValueError("starting cash must be positive")
        if self.min_bet.micros < 0:
            raise ValueError("min bet cannot be negative")
        if self.prompt_version not in PROMPT_VERSIONS:
            raise ValueError(f"prompt_version must be one of {', '.join(PROMPT_VERSIONS)}, got {self.prompt_version!r}")

    def max_bet(self, cash_at_start: Money) -> Money:
        """The largest single bet allowed: floor(max_bet_fraction × cash at the start of the decision)."""
        if cash_at_start.micros <= 0:
            return Money.zero()
        num, den = self.max_bet_fraction.as_integer_ratio()
        return cash_at_start.fraction(num, den)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["starting_cash"] = str(self.starting_cash.to_decimal())
        d["min_bet"] = str(self.min_bet.to_decimal())
        d["max_bet_fraction"] = str(self.max_bet_fraction)
        d["sizing_version"] = SIZING_VERSION
        f = d.pop("forecast")
        d["forecast_selection"] = f["selection"]
        d["forecast_band"] = [str(x) for x in self.forecast.band]
        d["forecast_max_per_event"] = f["max_per_event"]
        d["forecast_horizon_days"] = f["horizon_days"]
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> CohortRules:
        return cls(
            starting_cash=Money.of(d["starting_cash"]),
            max_bet_fraction=Decimal(str(d["max_bet_fraction"])),
            min_bet=Money.of(d["min_bet"]),
            max_actions=int(d.get("max_actions", 20)),
            decision_weeks=int(d.get("decision_weeks", 5)),
            prompt_version=str(d.get("prompt_version", LEGACY_PROMPT_VERSION)),
            forecast=_forecast_rules(d),
        )


def _forecast_rules(d: dict[str, Any]) -> ForecastSetRules:
    """The forecast-set rules frozen in a cohort's rules JSON; rules written before they were frozen ran volume-v1
    (no band, no horizon, no per-event cap)."""
    if "forecast_selection" not in d:
        return ForecastSetRules(selection=LEGACY_SELECTION, horizon_days=None)
    horizon = d.get("forecast_horizon_days")
    return ForecastSetRules(selection=str(d["forecast_selection"]),
                            band=tuple(Decimal(str(x)) for x in d["forecast_band"]),  # type: ignore[arg-type]
                            max_per_event=int(d["forecast_max_per_event"]),
                            horizon_days=int(horizon) if horizon is not None else None)
