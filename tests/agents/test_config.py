"""The TOML configuration: defaults, the documented example, the lineup with baselines, and a clear ConfigError
naming the key for every mistake (never echoing what might be a key)."""

from __future__ import annotations

import json

from decimal import Decimal
from pathlib import Path

import pytest

from arena.config import (BASELINE_KINDS, KNOWN_JOBS, OPENROUTER_BASE_URL, AgentConfig, ArenaConfig, TokenPrices,
                          default_config, example_config_text, load_config, parse_config)
from arena.domain.forecast_set import BAND_SELECTION, LADDER_SELECTION, LEGACY_SELECTION, ForecastSetRules
from arena.domain.sizing import CohortRules
from arena.errors import ConfigError
from arena.money import Money

ROOT = Path(__file__).resolve().parents[2]


def test_default_config_is_the_baselines_with_default_rules():
    cfg = default_config()
    assert cfg.agents == ()
    assert [a.kind for a in cfg.lineup] == list(BASELINE_KINDS)
    assert [a.name for a in cfg.lineup] == ["always-0.5", "market-follower", "random", "kelly-extremizer"]
    assert cfg.cohort.rules() == CohortRules()
    assert cfg.cohort.newest_cohorts == 5 and cfg.cohort.forecast_set_size == 20
    assert cfg.schedule.overrides() == {}
    assert cfg.missing_keys({}) == []
    assert parse_config("") == ArenaConfig(source="<string>")


def test_the_example_file_is_the_example_text_and_is_valid():
    assert (ROOT / "arena.example.toml").read_text(encoding="utf-8") == example_config_text()
    cfg = load_config(ROOT / "arena.example.toml")
    assert [a.name for a in cfg.llm_agents] == ["gpt-4o-mini", "claude-sonnet"]
    assert [a.name for a in cfg.lineup] == ["gpt-4o-mini", "claude-sonnet", "kelly-extremizer", "always-0.5",
                                            "market-follower", "random"]
    gpt = cfg.agent("gpt-4o-mini")
    assert gpt.base_url == OPENROUTER_BASE_URL and gpt.api_key_env == "OPENROUTER_API_KEY"
    assert gpt.prices == TokenPrices(0.15, 0.60)
    assert gpt.response_format == "json_schema" and gpt.max_repairs == 2 and gpt.temperature == 0.0
    assert gpt.max_completion_tokens is None and gpt.reasoning_effort is None and gpt.max_reply_bytes == 262144
    assert cfg.agent("kelly-extremizer").params == {"alpha": 1.5, "kelly_multiplier": 1.0}
    assert cfg.schedule.overrides()["sync"] == {"minutes": 15}
    assert cfg.schedule.overrides()["cohort_start"] == "0 0 * * sun"


def test_a_full_config_is_read():
    cfg = parse_config('''
baselines = false
[cohort]
starting_cash = "5000.50"
max_bet_fraction = 0.2
min_bet = 25
decision_weeks = 3
newest_cohorts = 2
forecast_set_size = 10
universe_size = 50
horizon_days = 30
forecast_band = [0.1, 0.9]
forecast_max_per_event = 3
rank_by = "liquidity"
prompt_markets = 40
exclude_categories = ["sports"]
[schedule]
mark = { hours = 6 }
[[agents]]
name = "local"
model = "llama-3"
base_url = "http://127.0.0.1:8080/v1/"
api_key_env = "LOCAL_KEY"
temperature = 0.3
max_tokens = 1000
max_repairs = 0
timeout_s = 30
response_format = "none"
[[agents]]
name = "rnd"
kind = "random"
params = { seed = 7, max_bets = 2 }
''', "t.toml")
    assert cfg.cohort.rules() == CohortRules(Money.of("5000.50"), Decimal("0.2"), Money.of(25), 20, 3, forecast=(
        ForecastSetRules(band=(Decimal("0.1"), Decimal("0.9")), max_per_event=3, horizon_days=30)))
    assert cfg.cohort.universe_rules().top_n == 50 and cfg.cohort.universe_rules().rank_by == "liquidity"
    assert cfg.cohort.universe_rules().exclude_categories == ("sports",)
    assert [a.name for a in cfg.lineup] == ["local", "rnd"]
    local = cfg.agent("local")
    assert local.base_url == "http://127.0.0.1:8080/v1"  # trailing slash dropped
    assert local.prices == TokenPrices(None, None) and local.prices.cost(10, 10) is None
    assert (local.temperature, local.max_tokens, local.max_repairs, local.timeout_s) == (0.3, 1000, 0, 30.0)
    assert cfg.schedule.overrides() == {"mark": {"hours": 6}}
    assert cfg.missing_keys({"LOCAL_KEY": "x"}) == []
    assert cfg.missing_keys({"LOCAL_KEY": ""}) == [("local", "LOCAL_KEY")]


def test_a_listed_baseline_replaces_the_default_of_its_kind():
    cfg = parse_config('[[agents]]\nname = "coin"\nkind = "random"\nparams = { seed = 3 }\n')
    assert [a.name for a in cfg.lineup] == ["coin", "always-0.5", "market-follower", "kelly-extremizer"]


def test_missing_keys_names_agent_and_variable():
    cfg = parse_config('[[agents]]\nname = "a"\nmodel = "m"\n[[agents]]\nname = "b"\nmodel = "m"\n'
                       'api_key_env = "B_KEY"\n')
    assert cfg.missing_keys({"OPENROUTER_API_KEY": "k"}) == [("b", "B_KEY")]
    assert cfg.missing_keys({}) == [("a", "OPENROUTER_API_KEY"), ("b", "B_KEY")]


def test_token_prices_cost_in_usd():
    assert TokenPrices(3.0, 15.0).cost(1000, 200) == pytest.approx(0.006)
    assert TokenPrices(3.0, 15.0).cost(None, 200) is None


def test_lineup_json_has_the_env_var_name_only():
    entry = AgentConfig(name="a", model="m", api_key_env="MY_KEY", price_per_million_input=1.0,
                        price_per_million_output=2.0)
    record = entry.to_json()
    assert record["api_key_env"] == "MY_KEY" and "api_key" not in record
    assert AgentConfig(name="r", kind="random", params={"seed": 1}).to_json() == {"kind": "random",
                                                                                 "params": {"seed": 1}}


@pytest.mark.parametrize("text, key, words", [
    ("nonsense = 1", "nonsense", "unknown key"),
    ("[cohort]\nstarting_cassh = 1", "starting_cassh", "unknown key"),
    ("[cohort]\nmin_bet = -5", "min_bet", "must not be negative"),
    ("[cohort]\nmin_bet = \"lots\"", "min_bet", "amount in USD"),
    ("[cohort]\nmin_bet = 5000", "min_bet", "above the first max bet"),
    ("[cohort]\nstarting_cash = 0", "starting_cash", "positive"),
    ("[cohort]\nmax_bet_fraction = 1.5", "max_bet_fraction", "(0, 1]"),
    ("[cohort]\nmax_bet_fraction = 0", "max_bet_fraction", "(0, 1]"),
    ("[cohort]\ndecision_weeks = 0", "decision_weeks", "integer ≥ 1"),
    ("[cohort]\nnewest_cohorts = 2.5", "newest_cohorts", "integer"),
    ("[cohort]\nrank_by = \"age\"", "rank_by", "one of"),
    ("[cohort]\nexclude_keywords = \"x\"", "exclude_keywords", "list of strings"),
    ("baselines = \"yes\"", "baselines", "true or false"),
    ("cohort = 3", "[cohort]", "must be a table"),
    ("[schedule]\nmark = \"every day\"", "mark", "5-field crontab"),
    ("[schedule]\nmark = { fortnights = 1 }", "mark", "interval table takes"),
    ("[schedule]\nmark = { hours = 0 }", "mark", "positive integer"),
    ("[schedule]\nmark = 5", "mark", "crontab string or an interval table"),
    ("[schedule]\nmarks = \"0 0 * * *\"", "marks", "unknown job"),
    ("agents = 3", "agents", "[[agents]]"),
    ("[[agents]]\nmodel = \"m\"", "name", "non-empty name"),
    ("[[agents]]\nname = \"a b\"\nmodel = \"m\"", "name", "non-empty name"),
    ("[[agents]]\nname = \"a\"", "model", "is required"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nkind = \"oracle\"", "kind", "must be one of"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nbase_url = \"openrouter.ai\"", "base_url", "http(s) URL"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\ntemperature = 3", "temperature", "≤ 2.0"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nmax_tokens = 0", "max_tokens", "integer ≥ 1"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\ntimeout_s = 0", "timeout_s", "> 0"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nmax_repairs = -1", "max_repairs", "integer ≥ 0"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nresponse_format = \"xml\"", "response_format", "one of"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nprice_per_million_input = 1", "price_per_million_output",
     "both token prices"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nprice_per_million_input = -1\nprice_per_million_output = 1",
     "price_per_million_input", "≥ 0"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nparams = { seed = 1 }", "params", "baseline kinds"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nfoo = 1", "foo", "unknown key"),
    ("[[agents]]\nname = \"r\"\nkind = \"random\"\nmodel = \"m\"", "model", "only to kind = \"llm\""),
    ("[[agents]]\nname = \"r\"\nkind = \"kelly\"\nparams = { beta = 1 }", "params.beta", "not a parameter"),
    ("[[agents]]\nname = \"r\"\nkind = \"random\"\nparams = { seed = 1.5 }", "params.seed", "integer"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\n[[agents]]\nname = \"a\"\nmodel = \"n\"", "agents.name",
     "used twice"),
    ("[[agents]]\nname = \"random\"\nmodel = \"m\"", "agents.name", "default name of the 'random' baseline"),
    ("[schedule]\nmark = \"99 99 * * *\"", "mark", "not a valid crontab"),
    ("[schedule]\nsettle = \"*/0 * * * *\"", "settle", "not a valid crontab"),
    ("[schedule]\nsync = \"0 0 32 * *\"", "sync", "not a valid crontab"),
    ("[cohort]\nstarting_cash = 1e30", "starting_cash", "at most 1000000000 USD"),
    ("[cohort]\nmax_actions = 1.5", "max_actions", "integer"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nmax_completion_tokens = 0", "max_completion_tokens", "≥ 1"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nreasoning_effort = \"max\"", "reasoning_effort", "one of"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nmax_reply_bytes = 10", "max_reply_bytes", "≥ 1024"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_headers = { authorization = \"Bearer x\" }",
     "extra_headers.authorization", "cannot be overridden"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_headers = { \"X Bad\" = \"1\" }", "extra_headers.X Bad",
     "header name"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_headers = { X-Title = 3 }", "extra_headers.X-Title",
     "one-line string"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_headers = 3", "extra_headers", "must be a table"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_body = { model = \"x\" }", "extra_body.model",
     "cannot be overridden"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_body = { max_tokens = 5 }", "extra_body.max_tokens",
     "use the agent's max_tokens key"),
    ("[[agents]]\nname = \"a\"\nmodel = \"m\"\nextra_body = { when = 2026-01-01 }", "extra_body.when",
     "JSON-like"),
    ("[[agents]]\nname = \"r\"\nkind = \"random\"\nreasoning_effort = \"low\"", "reasoning_effort",
     "only to kind"),
])
def test_errors_name_the_bad_key(text, key, words):
    with pytest.raises(ConfigError) as info:
        parse_config(text, "arena.toml")
    message = str(info.value)
    assert message.startswith("arena.toml:")
    assert key in message or key in str(info.value.data.get("key", "")), message
    assert words in message, message


def test_endpoint_options_are_read_and_frozen_into_the_lineup_with_header_values():
    cfg = parse_config('[[agents]]\nname = "o3"\nmodel = "openai/o3"\nmax_completion_tokens = 20000\n'
                       'reasoning_effort = "high"\nmax_reply_bytes = 65536\n'
                       'extra_headers = { "X-Title" = "arena", "HTTP-Referer" = "https://example.org" }\n'
                       'extra_body = { provider = { sort = "price", allow_fallbacks = false } }\n')
    o3 = cfg.agent("o3")
    assert o3.temperature is None and o3.max_completion_tokens == 20000 and o3.reasoning_effort == "high"
    assert dict(o3.extra_headers) == {"X-Title": "arena", "HTTP-Referer": "https://example.org"}
    assert o3.extra_body["provider"] == {"sort": "price", "allow_fallbacks": False} and o3.max_reply_bytes == 65536
    record = o3.to_json()
    # the values too: the seat is rebuilt from this record (credential-like header names are refused)
    assert record["extra_headers"] == {"X-Title": "arena", "HTTP-Referer": "https://example.org"}
    assert record["extra_body"] == {"provider": {"sort": "price", "allow_fallbacks": False}}
    assert record["temperature"] is None and record["reasoning_effort"] == "high"


def test_a_name_clash_with_a_baseline_is_fine_when_baselines_are_off():
    cfg = parse_config('baselines = false\n[[agents]]\nname = "random"\nmodel = "m"\n')
    assert [a.name for a in cfg.lineup] == ["random"]


def test_a_key_in_the_file_is_refused_without_being_echoed():
    secret = "sk-or-v1-0123456789abcdef"
    with pytest.raises(ConfigError) as info:
        parse_config(f'[[agents]]\nname = "a"\nmodel = "m"\napi_key = "{secret}"\n')
    assert "api_key_env" in str(info.value) and secret not in str(info.value)
    with pytest.raises(ConfigError) as info:
        parse_config(f'[[agents]]\nname = "a"\nmodel = "m"\napi_key_env = "{secret}"\n')
    assert "NAME of an environment variable" in str(info.value) and secret not in str(info.value)
    assert secret not in repr(info.value.data)


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not valid TOML"):
        parse_config("[cohort\n", "x.toml")
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_config(tmp_path / "nope.toml")
    p = tmp_path / "arena.toml"
    p.write_text('[cohort]\nmin_bet = 10\n', encoding="utf-8")
    assert load_config(p).cohort.min_bet == Money.of(10)
    assert load_config(p).source == str(p)


def test_config_values_are_frozen():
    cfg = default_config()
    with pytest.raises(AttributeError):
        cfg.baselines = False  # type: ignore[misc]
    entry = AgentConfig(name="k", kind="kelly", params={"alpha": 2.0})
    with pytest.raises(TypeError):
        entry.params["alpha"] = 3.0  # type: ignore[index]


def test_unknown_agent_name():
    with pytest.raises(ConfigError, match="no agent named"):
        default_config().agent("nobody")


def test_new_cohorts_are_frozen_with_the_band_rule_old_ones_keep_volume():
    rules = default_config().cohort.rules()
    assert rules.forecast.selection == LADDER_SELECTION  # band-v2: the band rule with whole ladders
    assert rules.forecast.band == (Decimal("0.05"), Decimal("0.95")) and rules.forecast.max_per_event == 2
    assert rules.forecast.horizon_days == default_config().cohort.horizon_days
    assert CohortRules.from_json(rules.to_json()) == rules
    stored = rules.to_json()
    for key in ("forecast_selection", "forecast_band", "forecast_max_per_event", "forecast_horizon_days"):
        del stored[key]  # rules stored before the band rule existed: the cohort ran (and keeps) volume-v1
    assert CohortRules.from_json(stored).forecast.selection == LEGACY_SELECTION
    older = {**rules.to_json(), "forecast_selection": BAND_SELECTION}  # a cohort frozen before ladders keeps band-v1
    assert CohortRules.from_json(older).forecast.selection == BAND_SELECTION
    narrow = parse_config("[cohort]\nforecast_band = [0.2, 0.8]\nforecast_max_per_event = 0\n").cohort.rules()
    assert narrow.forecast.band == (Decimal("0.2"), Decimal("0.8")) and narrow.forecast.max_per_event == 0


@pytest.mark.parametrize("value, words", [
    ("[0.95, 0.05]", "inverted"), ("[0.5, 0.5]", "inverted"), ("[0, 0.9]", "inside (0, 1)"),
    ("[0.1, 1]", "inside (0, 1)"), ("[-0.1, 0.5]", "inside (0, 1)"), ("[0.1]", "two numbers"),
    ("[0.1, 0.5, 0.9]", "two numbers"), ('"0.05-0.95"', "two numbers"), ("[true, 0.5]", "two numbers"),
])
def test_a_bad_forecast_band_names_the_key_and_the_fix(value, words):
    with pytest.raises(ConfigError) as err:
        parse_config(f"[cohort]\nforecast_band = {value}\n", "t.toml")
    msg = str(err.value)
    assert msg.startswith("t.toml: [cohort] forecast_band: ") and words in msg and "\n" not in msg
    assert "0 < lo < hi < 1" in msg


def test_a_negative_per_event_cap_is_refused():
    with pytest.raises(ConfigError, match=r"\[cohort\] forecast_max_per_event: must be an integer ≥ 0 and ≤ 1000, got -1"):
        parse_config("[cohort]\nforecast_max_per_event = -1\n", "t.toml")


def test_prompt_version_is_frozen_into_new_cohorts_rules():
    assert default_config().cohort.rules().prompt_version == "decision-v3.1"
    old = parse_config('[cohort]\nprompt_version = "decision-v1"\n').cohort.rules()
    assert old.prompt_version == "decision-v1" and CohortRules.from_json(old.to_json()) == old
    rules = CohortRules().to_json()
    del rules["prompt_version"]  # rules stored before the field existed were sent decision-v1
    assert CohortRules.from_json(rules).prompt_version == "decision-v1"
    with pytest.raises(ConfigError, match="decision-v1.*decision-v2.*decision-v3.*decision-v3.1"):
        parse_config('[cohort]\nprompt_version = "decision-v9"\n')
    with pytest.raises(ValueError, match="prompt_version"):
        CohortRules(prompt_version="v9")


# -- the pydantic models behind the file (issue 11) ---------------------------------------------------------------


@pytest.mark.parametrize("text, message, key", [
    # a nested bad value: the table, the agent's index and name, the key path inside it, the rule and the value
    ('[[agents]]\nname = "a"\nmodel = "m"\n[[agents]]\nname = "k"\nkind = "kelly"\nparams = { seed = 1.5 }\n',
     "arena.toml: agents[1] (k) params.seed: must be an integer, got 1.5", "agents[1] (k).params.seed"),
    ('[[agents]]\nname = "a"\nmodel = "m"\nextra_body = { provider = { when = 2026-01-01 } }\n',
     "arena.toml: agents[0] (a) extra_body.provider: must be JSON-like (strings, numbers, booleans, arrays, "
     "tables), got {'when': datetime.date(2026, 1, 1)}", "agents[0] (a).extra_body.provider"),
    ("[schedule]\nmark = { hours = 0 }\n", "arena.toml: [schedule] mark: interval hours must be a positive integer, "
     "got 0", "[schedule].mark"),
    ('[[agents]]\nname = "a"\nmodel = "m"\ntools = ["order_book", 3]\n',
     "arena.toml: agents[0] (a) tools: must be a list of strings, got ['order_book', 3]", "agents[0] (a).tools"),
    ("[operations]\nlease_seconds = 0\n", "arena.toml: [operations] lease_seconds: must be a number > 0.0 and "
     "≤ 86400.0, got 0", "[operations].lease_seconds"),
    # an unknown key, at the top, in a table and in the second agent
    ("colour = 1\n", "arena.toml: (top level) colour: unknown key (check the spelling; see arena.example.toml)",
     "(top level).colour"),
    ("[operations]\nretries = 1\n", "arena.toml: [operations] retries: unknown key (check the spelling; see "
     "arena.example.toml)", "[operations].retries"),
    ('[[agents]]\nname = "a"\nmodel = "m"\n[[agents]]\nname = "b"\nmodel = "m"\ntemprature = 0.5\n',
     "arena.toml: agents[1] (b) temprature: unknown key (check the spelling; see arena.example.toml)",
     "agents[1] (b).temprature"),
    ("source = \"x\"\n", "arena.toml: (top level) source: unknown key (check the spelling; see arena.example.toml)",
     "(top level).source"),
    ('[[agents]]\nkind = "random"\n', "arena.toml: agents[0] name: is required: must be a non-empty name of "
     "letters, digits and . _ : + -", "agents[0].name"),
])
def test_errors_name_the_key_path_and_the_rule_in_one_line(text, message, key):
    with pytest.raises(ConfigError) as info:
        parse_config(text, "arena.toml")
    assert str(info.value) == message
    assert info.value.data["key"] == key
    assert "\n" not in str(info.value) and "pydantic" not in str(info.value)


def test_the_values_are_pydantic_models_that_refuse_unknown_keys_without_echoing_values():
    from pydantic import BaseModel, ValidationError

    from arena.config import CohortConfig, LeaderboardConfig, OperationsConfig, ScheduleConfig

    for model in (ArenaConfig, CohortConfig, ScheduleConfig, OperationsConfig, LeaderboardConfig, AgentConfig):
        assert issubclass(model, BaseModel) and model.model_config["extra"] == "forbid", model
    assert tuple(ScheduleConfig.model_fields) == KNOWN_JOBS  # one field per job the scheduler knows
    secret = "sk-or-v1-0123456789abcdef"
    with pytest.raises(ValidationError) as info:  # built in Python: pydantic's error, never the value
        AgentConfig(name="a", model="m", api_key_env=secret)
    assert "api_key_env" in str(info.value) and secret not in str(info.value)
    with pytest.raises(ValidationError):
        AgentConfig(name="a", model="m", temprature=0.5)
    assert AgentConfig(name="a", model="m", tools=["order_book"]).track == "agent"  # derived when left out
    entry = parse_config('[[agents]]\nname = "a"\nmodel = "m"\nextra_headers = { X-Title = "t" }\n').agent("a")
    with pytest.raises(TypeError):
        entry.extra_headers["X-Title"] = "u"  # type: ignore[index]


# -- the contamination guard's dates (issue 30 item 1) ------------------------------------------------------------


def test_a_seats_dates_are_read_frozen_and_checked_against_the_injected_day():
    from datetime import date

    text = ('[[agents]]\nname = "m"\nmodel = "v/m"\nknowledge_cutoff = 2025-03-31\nreleased = 2025-05-22\n')
    seat = parse_config(text).agents[0]
    assert (seat.knowledge_cutoff, seat.released) == (date(2025, 3, 31), date(2025, 5, 22))
    frozen = seat.to_json()
    assert (frozen["knowledge_cutoff"], frozen["released"]) == ("2025-03-31", "2025-05-22")
    assert AgentConfig(name="m", **frozen) == seat  # the lineup record rebuilds the seat
    assert "knowledge_cutoff" not in parse_config('[[agents]]\nname = "m"\nmodel = "v/m"\n').agents[0].to_json()
    assert parse_config(text, today=date(2025, 5, 22)).agents[0] == seat  # both on today: fine
    with pytest.raises(ConfigError, match=r"agents\[0\] \(m\) released: 2025-05-22 is in the future \(today is "
                                          r"2025-05-21"):
        parse_config(text, "arena.toml", today=date(2025, 5, 21))
    with pytest.raises(ConfigError, match=r"knowledge_cutoff: 2025-03-31 is in the future") as info:
        parse_config(text, "arena.toml", today=date(2025, 3, 30))
    assert info.value.data["key"] == "agents[0].knowledge_cutoff"
    # a cutoff the day after the release is refused on any day
    with pytest.raises(ConfigError, match=r"released: 2025-03-30 is before knowledge_cutoff 2025-03-31"):
        parse_config(text.replace("2025-05-22", "2025-03-30"))
