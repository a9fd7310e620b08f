"""What an agent decides in one round: bets, sells and stated forecasts. Pure data, validated by the broker."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from arena.money import Money


@dataclass(frozen=True)
class Bet:
    """Spend `amount` on `outcome` of `market_id`. `stated_probability` is the agent's P(YES), if it gave one."""

    market_id: str
    outcome: str
    amount: Money
    stated_probability: float | None = None
    rationale: str = ""


@dataclass(frozen=True)
class Sell:
    """Sell `fraction` (0 < fraction ≤ 1) of the position in `outcome` of `market_id`."""

    market_id: str
    outcome: str
    fraction: Decimal = Decimal(1)
    rationale: str = ""


Action = Bet | Sell


@dataclass(frozen=True)
class ModelCall:
    """One attempt at asking a model (the first, or a repair): everything needed to audit and re-cost it.

    Stored for every attempt, failed or not. `served_model` is the model id the endpoint says it served and
    `provider` the upstream provider it names (OpenRouter's `provider` field; None when not given); `cost_usd`
    is the cost the provider reported (OpenRouter's `usage.cost`, USD) when it did, else computed from the
    lineup's token prices; `latency_s` is wall time of the HTTP exchange.
    """

    attempt: int
    prompt: str  # the full prompt (system + user messages) as sent, JSON-encoded messages
    raw_response: str = ""
    parsed: Mapping[str, object] | None = None
    error: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None
    served_model: str = ""
    prompt_version: str = ""
    provider: str | None = None
    # The tool calls this reply asked for and the results sent back (`agents.tools.ToolCallRecord.to_json()`).
    tool_calls: tuple[Mapping[str, object], ...] = ()
    # Behind a proxy (LiteLLM): the upstream model and endpoint it reports routing to; None when not reported.
    upstream_model: str | None = None
    upstream_base: str | None = None
    reasoning_content: str | None = None  # the reasoning the model returned beside its answer, if any


@dataclass(frozen=True)
class Decision:
    """One agent's round. No actions means HOLD. `forecasts` maps market id → stated P(YES).

    `calls` is the transcript of model calls that produced it (empty for scripted agents); `error` says why a
    model's output was finally given up on (the decision is then a HOLD). `failed` marks a decision that could
    not be had at all (the endpoint refused or was unreachable): recorded as failed, and retryable.
    """

    actions: tuple[Action, ...] = ()
    forecasts: Mapping[str, float] = field(default_factory=dict)
    reasoning: str = ""
    calls: tuple[ModelCall, ...] = ()
    error: str = ""
    failed: bool = False

    @property
    def bets(self) -> tuple[Bet, ...]:
        return tuple(a for a in self.actions if isinstance(a, Bet))

    @property
    def sells(self) -> tuple[Sell, ...]:
        return tuple(a for a in self.actions if isinstance(a, Sell))

    @property
    def is_hold(self) -> bool:
        return not self.actions
