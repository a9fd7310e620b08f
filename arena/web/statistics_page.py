"""A cohort's statistics page: bootstrap tables, pairwise matrices, reliability diagrams, anytime-valid
comparisons, ablations and replicates — all from `services.statistics.CohortStatistics`; this only reshapes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from arena.scoring.brier import BSS_MARKET_FLOOR
from arena.scoring.breakdown import HORIZON_RULE
from arena.scoring.provisional import PROVISIONAL_RULE
from arena.domain.question_filter import UNCATEGORIZED
from arena.web.charts import Chart
from arena.web.score_charts import reliability_chart
from arena.web.values import NAN, num


@dataclass(frozen=True)
class StatsTable:
    """A table for a statistics page: column keys with labels and filters, rows as dicts of plain values."""

    title: str
    note: str
    columns: tuple[tuple[str, str, str], ...]  # key, label, filter name
    rows: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class MatrixCell:
    """One cell of a pairwise matrix: row − column and its BH-adjusted p-value; `css` says which way and whether
    it is significant (the heat), `title` says it in words."""

    diff: float
    p_adjusted: float
    css: str
    title: str


@dataclass(frozen=True)
class PairMatrix:
    title: str
    note: str
    agents: tuple[str, ...]  # best first; rows and columns in this order
    rows: tuple[tuple[str, tuple[MatrixCell, ...]], ...]
    alpha: float


def pair_matrix(res: Any, title: str, label: str) -> PairMatrix | None:
    """The full pairwise difference / BH-adjusted p-value matrix of a `scoring.stats.BootstrapResult`."""
    if res is None or not len(res.table):
        return None
    agents = [a for a in res.table["agent"].tolist() if a in res.diff.index]
    rows = []
    for a in agents:
        cells = []
        for b in agents:
            if a == b:
                cells.append(MatrixCell(NAN, NAN, "self", ""))
                continue
            d = num(res.diff.at[a, b])
            p = num(res.p_adjusted.at[a, b])
            if math.isnan(d) or math.isnan(p):
                css, words = "ns", "no draw had both"
            elif p < res.alpha:
                better = d > 0 if res.higher_is_better else d < 0
                css = ("sig-better" if better else "sig-worse") + (" strong" if p < res.alpha / 5 else "")
                words = f"{'better' if better else 'worse'} than {b}, significant"
            else:
                css, words = "ns", f"not significantly different from {b}"
            cells.append(MatrixCell(d, p, css, f"{a} − {b}: {label} {d:+.4f}, BH-adjusted p = {p:.3f} — {words}"
                                    if not math.isnan(d) else f"{a} vs {b}: {words}"))
        rows.append((a, tuple(cells)))
    direction = "higher" if res.higher_is_better else "lower"
    note = (f"Each cell: row − column ({direction} is better) and the two-sided paired-bootstrap p-value, "
            f"Benjamini–Hochberg-adjusted over all pairs; green: the row is significantly better than the column "
            f"(adjusted p < {res.alpha}), red: significantly worse, grey: not significantly different.")
    return PairMatrix(title, note, tuple(agents), tuple(rows), float(res.alpha))


@dataclass(frozen=True)
class StatisticsPage:
    as_of: datetime
    cohort: str
    cohort_href: str
    n_boot: int
    min_resolved: int
    provisional_rule: str
    matrices: tuple[PairMatrix, ...]
    reliability: tuple[Chart, ...]  # one per agent
    tables: tuple[StatsTable, ...]
    proxy_validity: Mapping[str, Any]
    notes: tuple[str, ...]


def _records(df: Any, keep: Sequence[str]) -> tuple[Mapping[str, Any], ...]:
    if df is None or not len(df):
        return ()
    cols = [c for c in keep if c in df.columns]
    return tuple({c: (None if isinstance(v, float) and math.isnan(v) else v) for c, v in rec.items()}
                 for rec in df[cols].to_dict("records"))


def _guard_bss(rows: tuple[Mapping[str, Any], ...]) -> tuple[Mapping[str, Any], ...]:
    """The BSS-vs-market display rule on interim rows: no ratio over a market Brier below BSS_MARKET_FLOOR."""
    out = []
    for r in rows:
        ref = r.get("interim_market_brier")
        if ref is None or not ref >= BSS_MARKET_FLOOR:
            r = {**r, "interim_bss_vs_market": None}
        out.append(r)
    return tuple(out)


def statistics_context(as_of: datetime, st: Any, n_boot: int) -> StatisticsPage:
    """The statistics page of one cohort from `services.statistics.CohortStatistics` (all numbers computed
    there; the template only formats)."""
    summary = st.summary()
    if len(summary) and "brier_ci_low" in summary.columns:
        summary = summary.sort_values(["tier", "agent"], na_position="last")
    head = st.bootstrap.get("forecast_brier")
    head_table = head.table.sort_values(["rank", "agent"], na_position="last") if head is not None else None
    tables = [
        StatsTable("Headline: forecast Brier of stated P(YES) on the forecast set",
                   "One observation per resolved market (the mean over its rounds). Interval and P(first): "
                   f"paired bootstrap over markets, {n_boot} draws, every agent and both reference forecasters "
                   "on the same draws. Tier: exact paired t-tests on the per-market differences, "
                   "Benjamini–Hochberg (α = 0.05) — the same tier means not significantly different; a seat "
                   f"equal to a reference shares its tier. {PROVISIONAL_RULE}.",
                   (("agent", "agent", ""), ("tier", "tier", "integer"), ("n", "resolved forecasts", "integer"),
                    ("estimate", "forecast Brier", "number"), ("ci_low", "95% low", "number"),
                    ("ci_high", "95% high", "number"), ("p_first", "P(first)", "fraction_percent"),
                    ("p_vs_first_adj", "p vs No. 1 (BH)", "number"), ("provisional", "provisional", "")),
                   _records(head_table, ["agent", "tier", "n", "estimate", "ci_low", "ci_high", "p_first",
                                         "p_vs_first_adj", "provisional"])),
        StatsTable("Bet-size Brier: uncertainty and significance (resolved bets)",
                   f"Paired bootstrap over markets, {n_boot} draws; agents in the same tier are not significantly "
                   f"different (Benjamini–Hochberg, α = 0.05). Provisional: fewer than {st.min_resolved} resolved bets.",
                   (("agent", "agent", ""), ("tier", "tier", "integer"), ("n_resolved", "resolved", "integer"),
                    ("brier_ci_low", "Brier 95% low", "number"), ("brier_ci_high", "Brier 95% high", "number"),
                    ("pnl_ci_low", "P/L low $", "number"), ("pnl_ci_high", "P/L high $", "number"),
                    ("crowd_proxy_ci_low", "proxy low", "number"), ("crowd_proxy_ci_high", "proxy high", "number"),
                    ("p_first", "P(first)", "fraction_percent"), ("pct_beat_first", "% mkts beating No. 1", "number"),
                    ("p_vs_first_adj", "p vs No. 1 (BH)", "number"), ("provisional", "provisional", "")),
                   _records(summary, ["agent", "tier", "n_resolved", "brier_ci_low", "brier_ci_high",
                                      "pnl_ci_low", "pnl_ci_high",
                                      "crowd_proxy_ci_low", "crowd_proxy_ci_high", "p_first", "pct_beat_first",
                                      "p_vs_first_adj", "provisional"])),
        StatsTable("Interim scores (provisional until every market resolves)",
                   "Unresolved bets scored against today's market price (as ForecastBench does); resolved bets against their "
                   "outcome. These change until every market resolves. The interim skill vs market is shown only where "
                   f"the market's interim Brier is at least {BSS_MARKET_FLOOR} (else —: too small to divide by).",
                   (("agent", "agent", ""), ("n", "bets", "integer"), ("n_provisional", "scored vs price", "integer"),
                    ("interim_brier", "interim Brier", "number"), ("interim_brier_stated", "interim stated", "number"),
                    ("interim_market_brier", "market on same bets", "number"),
                    ("interim_bss_vs_market", "interim skill vs market", "number"),
                    ("market_brier", "market on own resolved bets", "number")),
                   _guard_bss(_records(st.interim, ["agent", "n", "n_provisional", "interim_brier",
                                                    "interim_brier_stated", "interim_market_brier",
                                                    "interim_bss_vs_market", "market_brier"]))),
        StatsTable("Calibration of stated forecasts",
                   "Forecast-set probabilities on resolved markets, 10 equal-width bins: expected calibration error "
                   "and the Murphy decomposition (Brier = reliability − resolution + uncertainty + within-bin terms).",
                   (("group", "agent", ""), ("n", "forecasts", "integer"), ("brier", "Brier", "number"),
                    ("ece", "ECE", "number"), ("reliability", "reliability", "number"),
                    ("resolution", "resolution", "number"), ("uncertainty", "uncertainty", "number")),
                   _records(st.murphy, ["group", "n", "brier", "ece", "reliability", "resolution", "uncertainty"])),
        StatsTable("Reliability diagram data",
                   "Per agent and bin: how many forecasts, their mean, and how often YES happened.",
                   (("group", "agent", ""), ("bin", "bin", "integer"), ("lo", "from", "number"), ("hi", "to", "number"),
                    ("count", "forecasts", "integer"), ("mean_forecast", "mean forecast", "number"),
                    ("observed_freq", "observed YES", "number")),
                   tuple(r for r in _records(st.reliability, ["group", "bin", "lo", "hi", "count", "mean_forecast",
                                                              "observed_freq"]) if r.get("count"))),
        StatsTable("Consistency",
                   "Multi-outcome groups: mean |Σ stated P − 1|. Two-member exclusive groups: seed 003's negation "
                   "violation (threshold 0.01). Named outcomes bet on, and each complete group's most likely "
                   "member: seed 004's S′. Complete resolved groups: the multi-class Brier Σ(p − y)² over the "
                   "members (0 best, 2 worst; stated P(YES) as given, not renormalised). Threshold and date "
                   "ladders (\"above $100\" / \"above $110\", \"by March\" / \"by June\"): the pairs whose "
                   "order is broken (P(above a higher threshold) or P(by an earlier date) stated above its "
                   "partner's) and the mean of max(0, gap) over all pairs.",
                   (("agent", "agent", ""), ("n_groups", "groups", "integer"), ("sum_deviation", "|Σp − 1|", "number"),
                    ("n_pairs", "negation pairs", "integer"), ("negation_violation_rate", "violation rate", "number"),
                    ("n_answers", "answers", "integer"), ("s_prime", "S′", "number"),
                    ("n_multi", "complete groups", "integer"), ("multi_brier", "multi-class Brier", "number"),
                    ("n_ladder_pairs", "ladder pairs", "integer"),
                    ("ladder_violations", "ladder violations", "integer"),
                    ("ladder_violation_mean", "mean ladder violation", "number")),
                   _records(st.consistency, ["agent", "n_groups", "sum_deviation", "n_pairs", "negation_violation_rate",
                                             "n_answers", "s_prime", "n_multi", "multi_brier", "n_ladder_pairs",
                                             "ladder_violations", "ladder_violation_mean"])),
    ]
    tables.extend(_breakdown_tables(st))
    tables.extend(_sequence_tables(st))
    tables.extend(_ablation_tables(st, n_boot))
    notes = tuple(dict.fromkeys(f"{metric} — {k}: {v}" for metric, res in st.bootstrap.items()
                                for k, v in (getattr(res, "notes", None) or {}).items()))
    matrices = tuple(m for m in (
        pair_matrix(head, "Headline: forecast Brier, every pair", "forecast Brier"),
        pair_matrix(st.bootstrap.get("brier"), "Bet-size Brier, every pair", "implied Brier"),
    ) if m is not None)
    charts = []
    rel = st.reliability
    if rel is not None and len(rel):
        for group, g in rel.groupby("group", sort=True):
            charts.append(reliability_chart(str(group), g.sort_values("bin").to_dict("records")))
    return StatisticsPage(as_of, st.cohort, "", n_boot, st.min_resolved, PROVISIONAL_RULE, matrices, tuple(charts),
                          tuple(tables), dict(st.proxy_validity or {}), notes)


_BREAKDOWN_COLUMNS = (("agent", "forecaster", ""), ("group", "{what}", ""), ("n_markets", "markets", "integer"),
                      ("n_forecasts", "resolved forecasts", "integer"),
                      ("brier_minus_market", "Brier − market", "number"), ("brier_minus_market_lo", "95% low", "number"),
                      ("brier_minus_market_hi", "95% high", "number"))


def _breakdown_tables(st: Any) -> list[StatsTable]:
    """Brier − market per seat by horizon bucket and by category (`services.statistics`, `scoring.breakdown`)."""
    keep = [c for c, _, _ in _BREAKDOWN_COLUMNS]
    common = ("One observation per resolved market in the group (the mean over its rounds there) of the seat's Brier "
              "minus the market price's; < 0 beats the market. 95% t interval clustered by market (— below two "
              "markets). To rank the boards on such a part of the questions: `arena leaderboard --from D --until D "
              "--category C` (a window of decision days, categories), or the live site's "
              "api/leaderboard.json?from=D&until=D&category=C.")
    out = []
    for title, what, note, table in (
            ("Skill by horizon: Brier − market by days from decision to resolution", "days to resolution",
             f"Horizon: {HORIZON_RULE}. A market whose rounds fall in two buckets is one observation in each. ",
             getattr(st, "by_horizon", None)),
            ("Skill by topic: Brier − market by market category", "category",
             f"Category: the market's own, as the venue lists it ('{UNCATEGORIZED}' when it has none). ",
             getattr(st, "by_category", None))):
        columns = tuple((k, label.format(what=what), f) for k, label, f in _BREAKDOWN_COLUMNS)
        out.append(StatsTable(title, note + common, columns, _records(table, keep)))
    return out


def _sequence_tables(st: Any) -> list[StatsTable]:
    """Anytime-valid comparisons vs the cohort's No. 1 and vs the market (`services.statistics.sequences`)."""
    seq = getattr(st, "sequences", None)
    if seq is None or not len(seq):
        return []
    return [StatsTable(
        "Anytime-valid comparisons: vs No. 1 and vs the market",
        "Forecast Brier on the cohort's shared questions, this forecaster minus the other (< 0: this one forecasts "
        "better), with a 95% confidence sequence updated as each question resolves. Unlike a fixed-sample interval "
        "it may be read every day without inflating false wins; 'first excluded 0' is the date the difference "
        "first became significant, and the verdict is the side it fell on then.",
        (("agent", "forecaster", ""), ("versus", "versus", ""), ("n", "questions", "integer"),
         ("estimate", "difference", "number"), ("lower", "CS low", "number"), ("upper", "CS high", "number"),
         ("first_date", "first excluded 0", ""), ("verdict", "verdict", "")),
        _records(seq, ["agent", "versus", "n", "estimate", "lower", "upper", "first_date", "verdict"]))]


def _ablation_tables(st: Any, n_boot: int) -> list[StatsTable]:
    """The cohort's ablation pairs (B − A per metric) and its replicated seats' run-to-run spread, when it has
    any (`services.statistics._ablations` computes them)."""
    out = []
    ablations = getattr(st, "ablations", None)
    if ablations is not None and len(ablations):
        out.append(StatsTable(
            "Ablations: variant vs base (B − A over shared questions)",
            f"Paired bootstrap over markets, {n_boot} draws. Brier rows: < 0 means the variant forecasts better; "
            "pnl: realized USD, > 0 means the variant earned more. With replicates each question counts the mean of "
            "its replicates (run-to-run noise averaged out; 'replicate noise' = the share of the per-question "
            "variance still due to it); 'executed' uses replicate 1 only, as the boards do. 'CS excluded 0' is the "
            "first date the anytime-valid 95% confidence sequence on the forecast-Brier difference excluded 0.",
            (("pair", "pair", ""), ("factor", "factor", ""), ("metric", "metric", ""), ("n", "questions", "integer"),
             ("estimate", "B − A", "number"), ("lo", "95% low", "number"), ("hi", "95% high", "number"),
             ("p_value", "p", "number"), ("executed", "executed B − A", "number"),
             ("replicate_share", "replicate noise", "fraction_percent"), ("first_date", "CS excluded 0", "")),
            _records(ablations, ["pair", "factor", "metric", "n", "estimate", "lo", "hi", "p_value", "executed",
                                 "replicate_share", "first_date"])))
    replicates = getattr(st, "replicates", None)
    if replicates is not None and len(replicates):
        out.append(StatsTable(
            "Replicates: run-to-run spread",
            "Seats asked k times per decision: the standard deviation across replicates of the stated P(YES) "
            "(mean over questions) and of the forecast Brier each replicate's forecasts would score.",
            (("agent", "agent", ""), ("replicates", "replicates", "integer"), ("questions", "questions", "integer"),
             ("p_sd", "SD of P(YES)", "number"), ("brier_sd", "SD of Brier", "number"),
             ("brier_min", "Brier min", "number"), ("brier_max", "Brier max", "number")),
            _records(replicates, ["agent", "replicates", "questions", "p_sd", "brier_sd", "brier_min",
                                  "brier_max"])))
    return out
