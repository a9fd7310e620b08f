"""Every configuration error reads as it did before the pydantic models (issue 11), case by case.

`golden/config_errors.json` holds 243 configurations — the tests' own and more, one bad value or key each, and
some valid ones — with the message and key the hand-written TOML readers gave (null: the file is valid). It was
made by running those readers (commit c19a494) and is not regenerated from the current code: a message that
changes on purpose is listed in CHANGED below with its new wording, so every difference is on the page.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from arena.config import parse_config
from arena.errors import ConfigError

CASES = json.loads((Path(__file__).parent / "golden" / "config_errors.json").read_text(encoding="utf-8"))

# toml -> the message now given, where it differs from the hand-written reader's (each names the same key path).
CHANGED = {
    # a missing name says "is required" instead of showing an empty value
    '[[agents]]\nmodel = "m"':
        "arena.toml: agents[0] name: is required: must be a non-empty name of letters, digits and . _ : + -",
    # a choice given as a number lists the choices instead of saying "must be a string"
    '[cohort]\nrank_by = 3':
        "arena.toml: [cohort] rank_by: must be one of 'volume_24h', 'liquidity', 'volume', got 3",
    '[cohort]\nprompt_version = 2':
        "arena.toml: [cohort] prompt_version: must be one of 'decision-v1', 'decision-v2', 'decision-v3', "
        "'decision-v1.1', 'decision-v2.1', 'decision-v3.1', got 2",
    '[[agents]]\nname = "a"\nkind = 3':
        "arena.toml: agents[0] (a) kind: must be one of 'llm', 'always-0.5', 'market-follower', 'random', "
        "'kelly', got 3",
    '[[agents]]\nname = "a"\nmodel = "m"\nreasoning_effort = 3':
        "arena.toml: agents[0] (a) reasoning_effort: must be one of 'none', 'minimal', 'low', 'medium', 'high', "
        "got 3",
    '[[agents]]\nname = "a"\nmodel = "m"\nresponse_format = 3':
        "arena.toml: agents[0] (a) response_format: must be one of 'json_schema', 'json_object', 'none', got 3",
    '[[agents]]\nname = "a"\nmodel = "m"\ntrack = 3':
        "arena.toml: agents[0] (a) track: must be one of 'model', 'agent', got 3",
    # a baseline's track: the rule that applies rather than "unknown key"
    '[[agents]]\nname = "r"\nkind = "random"\ntrack = "model"':
        "arena.toml: agents[0] (r) track: applies only to kind = \"llm\" (this agent is kind = 'random')",
    # two problems (a name that is not a string, no model): the kind's rules are checked first, so the missing
    # model is reported before the name
    '[[agents]]\nname = 3':
        "arena.toml: agents[0] model: is required for kind = \"llm\" (the model id, e.g. \"openai/gpt-4o-mini\")",
    # issue 30 added the corpus_search tool to the list of known tools
    '[[agents]]\nname = "a"\nmodel = "m"\ntools = ["price_history", "crystal_ball"]\n':
        "arena.toml: agents[0] (a) tools: unknown tool 'crystal_ball' (known: price_history, order_book, "
        "related_markets, resolution_criteria, web_search, corpus_search)",
}


# Issue 27 gave every numeric option an upper bound (docs/configuration.md): a message that stated only the lower
# bound now states both, e.g. "must be an integer ≥ 1 and ≤ 104, got 0". The upper bounds, written out here:
UPPER = {"max_actions": 1000, "decision_weeks": 104, "newest_cohorts": 104, "forecast_set_size": 1000,
         "universe_size": 100000, "horizon_days": 3660, "prompt_markets": 10000, "decision_attempts": 100,
         "retry_window_hours": 168, "max_tokens": 10000000, "max_completion_tokens": 10000000,
         "max_reply_bytes": 67108864, "price_per_million_input": 1000000.0, "price_per_million_output": 1000000.0,
         "max_repairs": 10, "max_retries": 20, "timeout_s": 3600.0}
_LOWER_ONLY = re.compile(r"^(.* (\w+): must be (?:an integer|a number) [≥>] [0-9.]+)(, got .*)$")


def expected(case: dict) -> str:
    if case["toml"] in CHANGED:
        return CHANGED[case["toml"]]
    m = _LOWER_ONLY.match(case["error"])
    if m and m.group(2) in UPPER:
        return f"{m.group(1)} and ≤ {UPPER[m.group(2)]}{m.group(3)}"
    return case["error"]


def test_the_golden_cases_are_many_and_mostly_unchanged():
    assert len(CASES) == 243 and sum(c["error"] is not None for c in CASES) == 204
    assert set(CHANGED) <= {c["toml"] for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_each_message_is_the_hand_written_readers_or_a_listed_change(case):
    if case["error"] is None:
        parse_config(case["toml"], "arena.toml")
        return
    with pytest.raises(ConfigError) as info:
        parse_config(case["toml"], "arena.toml")
    assert str(info.value) == expected(case)
    if case["toml"] not in CHANGED:
        assert info.value.data["key"] == case["key"]
