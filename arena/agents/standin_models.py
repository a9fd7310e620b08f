"""The demo's stand-in models: fixed rules that answer the decision prompt from what it shows, each sold at its own
price per token, so that `arena demo` runs LLM seats through the real LLM path offline and the cost–skill frontier
has models on it.

They are NOT language models. A stand-in reads the prompt the arena sent (the markets' YES prices and the forecast
set's ids, from the prompt's own lines), states P(YES) by its rule — the price shaded toward 0.5, or the price with
seeded noise on its log-odds — bets the min bet on its largest edge, and reports the call's tokens and cost
(`usage.cost`, as OpenRouter does). It knows nothing the price does not say, so none of them can beat the market;
they differ in how much they lose to it and in what they charge. Each answer is a function of the request alone
(the noise is seeded by the demo's seed, the model, the decision time and the market), so two runs of one demo
store the same replies whatever order the seats call in.

The seats are served by `arena.agents.standin.StandinServer` on 127.0.0.1 (`standin_server`) and asked by
`arena.agents.llm.LLMAgent` like any other model (`standin_agents`). Imports the LLM agent, the config and the
stand-in server; no store.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena.agents.baselines import stable_int
from arena.agents.llm import LLMAgent
from arena.agents.standin import RecordedRequest, Reply, StandinServer, forecast_ids
from arena.config import AgentConfig

STANDIN_API_KEY_ENV = "ARENA_STANDIN_KEY"  # named in the frozen lineup; the stand-in needs and reads no key
STANDIN_KEY = "standin-needs-no-key"  # what the seats send in their Authorization header
# The base URL frozen into a cohort's lineup: the server's port is chosen afresh on every run, so it is left out
# and two runs of one demo freeze the same lineup. A stand-in seat cannot be rebuilt after its run.
STANDIN_RECORDED_URL = "http://127.0.0.1/v1"
STANDIN_NOTE = ("a local stand-in model, not a real LLM: a fixed rule on the prices the prompt shows, served on "
                "127.0.0.1 to exercise the LLM path (prompt, HTTP, parse, cost) and show the cost–skill frontier "
                "offline")
MIN_EDGE = 0.02  # a stand-in bets only where its P(YES) differs from the price by more than this


@dataclass(frozen=True)
class StandinModel:
    """One stand-in: its seat name, the model id it answers as, its rule and its prices.

    Rule: P(YES) = logistic(`shrink` · logit(price) + ε), ε ~ Normal(0, `noise_sd`) seeded per question (shrink < 1
    pulls the price toward 0.5). Prices in USD per million tokens."""

    name: str
    model: str
    shrink: float
    noise_sd: float
    input_per_million: float
    output_per_million: float

    @property
    def rule(self) -> str:
        parts = []
        if self.shrink != 1.0:
            parts.append(f"the price's log-odds × {self.shrink:g} (toward 0.5)")
        if self.noise_sd:
            parts.append(f"the price with seeded noise (sd {self.noise_sd:g} on the log-odds)")
        return " and ".join(parts) or "the price"

    def cost_usd(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_million + completion_tokens * self.output_per_million) / 1_000_000

    def config(self, base_url: str = STANDIN_RECORDED_URL) -> AgentConfig:
        """The seat as a lineup entry (kind "llm") asking `base_url` (default: the URL frozen into lineups)."""
        return AgentConfig(name=self.name, model=self.model, base_url=base_url,
                           api_key_env=STANDIN_API_KEY_ENV, temperature=0.0, max_repairs=1, max_retries=1,
                           timeout_s=30.0, price_per_million_input=self.input_per_million,
                           price_per_million_output=self.output_per_million)


# Cheap and coarse, dear and close to the price, and one in between that is both dearer and worse than the cheap
# one (dominated), so the frontier shows a trade-off and a model off it.
STANDIN_MODELS = (
    StandinModel("standin-cheap", "standin/cheap", shrink=0.4, noise_sd=0.0, input_per_million=0.10,
                 output_per_million=0.40),
    StandinModel("standin-mid", "standin/mid", shrink=1.0, noise_sd=0.9, input_per_million=1.00,
                 output_per_million=4.00),
    StandinModel("standin-dear", "standin/dear", shrink=1.0, noise_sd=0.2, input_per_million=3.00,
                 output_per_million=15.00),
)

_MARKET = re.compile(r"^\[(?P<id>[^\]\s]+)\] ")
_YES_PRICE = re.compile(r"^\s+YES price (?P<price>[0-9.]+)")
_NOW = re.compile(r"^Current date and time: (?P<now>.+?) \(")
_MONEY = r"\$(?P<amount>[0-9,]+\.[0-9]{2})"
_CASH = re.compile(rf"^Cash: {_MONEY}")
_MIN_BET = re.compile(rf"^Min bet: {_MONEY}")


@dataclass(frozen=True)
class PromptFacts:
    """What a stand-in reads from the prompt: the decision time (as printed), YES prices of the binary markets
    listed, which of them are closed, the cash and the min bet (USD, as printed)."""

    now: str
    prices: dict[str, float]
    closed: frozenset[str]
    cash: float
    min_bet: float


def prompt_facts(request: RecordedRequest) -> PromptFacts:
    """The facts of the decision prompt in `request` (the user message that lists the markets)."""
    now, cash, min_bet = "", 0.0, 0.0
    prices: dict[str, float] = {}
    closed: set[str] = set()
    for message in request.messages:
        if message.get("role") != "user" or "MARKETS (" not in str(message.get("content", "")):
            continue
        current = None
        for line in str(message["content"]).splitlines():
            if m := _NOW.match(line):
                now = m.group("now")
            elif m := _CASH.match(line):
                cash = float(m.group("amount").replace(",", ""))
            elif m := _MIN_BET.match(line):
                min_bet = float(m.group("amount").replace(",", ""))
            elif m := _MARKET.match(line):
                current = m.group("id")
                if "[CLOSED: no bets]" in line:
                    closed.add(current)
            elif current is not None and (m := _YES_PRICE.match(line)):
                prices[current] = float(m.group("price"))
                current = None
        break
    return PromptFacts(now, prices, frozenset(closed), cash, min_bet)


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def forecast(model: StandinModel, seed: int, now: str, market_id: str, price: float) -> float:
    """The stand-in's P(YES) for one market shown at `price` (rounded to 3 decimals)."""
    noise = random.Random(stable_int("standin", seed, model.model, now, market_id)).gauss(0.0, model.noise_sd) \
        if model.noise_sd else 0.0
    return round(1.0 / (1.0 + math.exp(-(model.shrink * _logit(price) + noise))), 3)


def decision_reply(model: StandinModel, seed: int, request: RecordedRequest) -> dict[str, Any]:
    """The JSON decision the stand-in answers `request` with: P(YES) for every forecast-set id (0.5 where the
    prompt shows no YES price) and a min-bet BET on the open market of largest edge, when one exceeds MIN_EDGE and
    the cash covers it."""
    facts = prompt_facts(request)
    forecasts: dict[str, float] = {}
    best: tuple[float, str] | None = None
    for mid in forecast_ids(request):
        price = facts.prices.get(mid)
        if price is None:
            forecasts[mid] = 0.5
            continue
        p = forecast(model, seed, facts.now, mid, price)
        forecasts[mid] = p
        edge = abs(p - price)
        if mid not in facts.closed and edge > MIN_EDGE and (best is None or edge > best[0]):
            best = (edge, mid)
    actions = []
    if best is not None and 0 < facts.min_bet <= facts.cash:
        mid = best[1]
        side = "YES" if forecasts[mid] > facts.prices[mid] else "NO"
        actions.append({"type": "BET", "market_id": mid, "side": side, "amount": facts.min_bet,
                        "probability": forecasts[mid],
                        "rationale": f"stand-in rule: {forecasts[mid]:.3f} against a YES price of "
                                     f"{facts.prices[mid]:g}"})
    return {"actions": actions, "forecasts": forecasts,
            "reasoning": f"{model.name} is a local stand-in, not a language model: P(YES) is {model.rule}."}


def standin_responder(models: tuple[StandinModel, ...] = STANDIN_MODELS,
                      seed: int = 0) -> Callable[[RecordedRequest], Reply]:
    """The server's responder: answers each request as the stand-in it names, with its tokens and cost; a request
    for any other model gets a 404 like a provider's unknown model."""
    by_model = {m.model: m for m in models}

    def respond(request: RecordedRequest) -> Reply:
        model = by_model.get(request.model)
        if model is None:
            return Reply(status=404, body=json.dumps({"error": {"message": f"no stand-in model {request.model!r}",
                                                                "code": 404}}))
        content = json.dumps(decision_reply(model, seed, request))
        prompt_tokens = len(json.dumps(request.messages)) // 4
        completion_tokens = len(content) // 4
        digest = hashlib.blake2b(json.dumps(request.body, sort_keys=True).encode("utf-8"), digest_size=6).hexdigest()
        return Reply(content=content, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                          cost=model.cost_usd(prompt_tokens, completion_tokens), completion_id=f"standin-{digest}",
                          provider="standin")

    return respond


def standin_server(seed: int, models: tuple[StandinModel, ...] = STANDIN_MODELS) -> StandinServer:
    """A stand-in server (not started) that answers as `models`."""
    return StandinServer(default=standin_responder(models, seed))


def standin_agents(base_url: str, models: tuple[StandinModel, ...] = STANDIN_MODELS,
                   max_markets: int | None = None) -> list[LLMAgent]:
    """The LLM agents of the stand-in seats, asking the server at `base_url` (its running URL, port included)."""
    kw: dict[str, Any] = {"max_markets": max_markets} if max_markets is not None else {}
    return [LLMAgent.from_config(m.config(base_url), STANDIN_KEY, **kw)
            for m in models]


__all__ = ["STANDIN_MODELS", "STANDIN_NOTE", "STANDIN_RECORDED_URL", "PromptFacts", "StandinModel",
           "decision_reply", "forecast", "prompt_facts", "standin_agents", "standin_responder", "standin_server"]
