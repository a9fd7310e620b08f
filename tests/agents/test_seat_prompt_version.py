"""A seat's own `prompt_version` (issue 30: a fork or an ablation varies one seat's prompt): frozen with the seat
only when set, sent to that seat alone instead of the cohort's, refused on a baseline and for an unknown version."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import ValidationError
from standin import hold_responder

from arena.agents.llm import LLMAgent
from arena.config import AgentConfig
from arena.errors import ConfigError

V3 = "never helps your rank"  # a sentence decision-v3.x's system message has and v2.x's lacks


def test_a_seat_prompt_version_is_frozen_only_when_set():
    assert "prompt_version" not in AgentConfig(name="m", model="v/m").to_json()
    entry = AgentConfig(name="m", model="v/m", prompt_version="decision-v2.1")
    assert entry.to_json()["prompt_version"] == "decision-v2.1"
    assert AgentConfig(name="m", **entry.to_json()) == entry  # the seat rebuilds from its frozen record


@pytest.mark.parametrize("record", [{"kind": "kelly", "prompt_version": "decision-v2.1"},
                                    {"model": "v/m", "prompt_version": "decision-v9"}])
def test_a_prompt_version_on_a_baseline_or_unknown_is_refused(record):
    with pytest.raises((ConfigError, ValidationError)):
        AgentConfig(name="m", **record)


def test_the_seat_is_sent_its_own_version_and_the_others_the_cohorts(standin, view):
    standin.default = hold_responder(0.5)
    cohort = dataclasses.replace(view, prompt_version="decision-v3.1")
    for version, has_v3 in ((None, True), ("decision-v2.1", False)):
        entry = AgentConfig(name="m", model="v/m", base_url=standin.base_url, prompt_version=version)
        with LLMAgent.from_config(entry, "test-key") as agent:
            decision = agent.decide(cohort)
        system = standin.requests[-1].messages[0]["content"]
        assert (V3 in system) is has_v3
        assert {c.prompt_version for c in decision.calls} == {version or "decision-v3.1"}
