"""Calibration of P(YES) forecasts: reliability-diagram bins, expected calibration error and the Murphy
decomposition of the Brier score, for one forecaster or for many groups at once.

Forecasts are P(YES) in [0, 1]; outcomes are the YES payout in [0, 1] (1 / 0, or a fraction for a probabilistic
resolution); rows with a NaN forecast or outcome are not scored. "Brier" is the binary Brier on P(YES), 0..1.
Pure and vectorised (bincount over group × bin codes, no loop per group); imports only numpy, pandas and the
registry.

Murphy decomposition. Group the forecasts into K groups with n_k rows, mean forecast f̄_k, mean outcome ō_k and
overall mean outcome ō. Then exactly

    BS = REL − RES + UNC + WBV − WBC
    REL = Σ n_k/N (f̄_k − ō_k)²          reliability (lower is better)
    RES = Σ n_k/N (ō_k − ō)²            resolution (higher is better)
    UNC = (1/N) Σ (o − ō)²              uncertainty: ō(1 − ō) for 0/1 outcomes (the variance of the outcome
                                         in general, so the identity also holds for fractional resolutions)
    WBV = Σ n_k/N var_k(f)              within-bin variance of the forecasts
    WBC = 2 Σ n_k/N cov_k(f, o)         within-bin covariance of forecast and outcome (Stephenson et al., 2008)

By default the groups are the 10 equal-width bins of the reliability diagram and all five terms are returned, so
the identity always closes exactly (to float rounding). The classic three-term identity BS = REL − RES + UNC is an
approximation whose error is exactly WBV − WBC: zero when every forecast sits on its bin's value. With
`n_bins=None` the groups are the *distinct forecast values*, WBV = WBC = 0 and the three-term identity is exact —
informative when forecasts lie on a grid (e.g. stated in whole percents), degenerate for continuous forecasts
(every value its own group: REL = BS, RES = UNC).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from arena.scoring.registry import register

DEFAULT_BINS = 10
STRATEGIES = ("uniform", "quantile")
_EDGE_TOL = 1e-9

register(
    "ece",
    higher_is_better=False,
    description="Expected calibration error: bin-count-weighted mean |observed frequency - mean forecast| (10 bins)",
    unit="probability, 0..1",
)
register(
    "reliability",
    higher_is_better=False,
    description="Murphy reliability: weighted mean squared gap between mean forecast and observed frequency",
    unit="squared probability, 0..1",
)
register(
    "resolution",
    higher_is_better=True,
    description="Murphy resolution: weighted variance of observed frequencies across forecast groups",
    unit="squared probability, 0..1",
)
register(
    "uncertainty",
    higher_is_better=False,
    description="Murphy uncertainty: variance of the outcomes (depends on the questions only, not a skill)",
    unit="squared probability, 0..1",
)
register(
    "within_bin_variance",
    higher_is_better=False,
    description="Murphy decomposition term: weighted variance of forecasts inside bins (0 over distinct values)",
    unit="squared probability, 0..1",
)
register(
    "within_bin_covariance",
    higher_is_better=True,
    description="Murphy decomposition term: 2 x weighted forecast-outcome covariance inside bins",
    unit="squared probability, 0..1",
)


def _clean(forecast: Any, outcome: Any, groups: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, pd.Index]:
    f = np.asarray(forecast, dtype=float).ravel()
    o = np.asarray(outcome, dtype=float).ravel()
    if f.shape != o.shape:
        raise ValueError(f"forecast has {f.size} values but outcome has {o.size}")
    for x, what in ((f, "forecast"), (o, "outcome")):
        bad = np.isfinite(x) & ((x < 0) | (x > 1))
        if bad.any() or np.isinf(x).any():
            raise ValueError(f"{what} must lie in [0, 1]; got {x[bad | np.isinf(x)][:5].tolist()}")
    if groups is None:
        g_codes, g_labels = np.zeros(f.size, dtype=np.int64), pd.Index([None])
    else:
        g = groups if isinstance(groups, pd.Series) else pd.Series(np.asarray(groups, dtype=object).ravel())
        if len(g) != f.size:
            raise ValueError(f"groups has {len(g)} values but forecast has {f.size}")
        codes, uniques = pd.factorize(g, sort=True, use_na_sentinel=False)
        g_codes, g_labels = codes.astype(np.int64), pd.Index(uniques)
    keep = ~(np.isnan(f) | np.isnan(o))
    return f[keep], o[keep], g_codes[keep], g_labels


def bin_edges(forecast: Any, n_bins: int = DEFAULT_BINS, strategy: str = "uniform") -> np.ndarray:
    """Bin edges in [0, 1]: "uniform" gives n_bins equal widths; "quantile" gives equal-mass bins at the
    forecasts' quantiles (duplicate edges from tied forecasts are merged, so there may be fewer bins)."""
    if n_bins < 1:
        raise ValueError("n_bins must be >= 1")
    if strategy == "uniform":
        return np.linspace(0.0, 1.0, n_bins + 1)
    if strategy != "quantile":
        raise ValueError(f"strategy must be one of {STRATEGIES}, not {strategy!r}")
    f = np.asarray(forecast, dtype=float)
    f = f[np.isfinite(f)]
    if f.size == 0:
        return np.linspace(0.0, 1.0, n_bins + 1)
    inner = np.quantile(f, np.linspace(0.0, 1.0, n_bins + 1)[1:-1])
    return np.unique(np.concatenate(([0.0], inner, [1.0])))


def assign_bins(forecast: Any, edges: Any) -> np.ndarray:
    """Bin index per forecast: bins are [e_i, e_{i+1}) and the last is closed, so 1.0 falls in the last bin.

    A forecast within 1e-9 below an edge counts as on it, so float noise in the edges (linspace gives
    0.30000000000000004) never drops a forecast of exactly 0.3 into the bin below.
    """
    e = np.asarray(edges, dtype=float)
    idx = np.searchsorted(e, np.asarray(forecast, dtype=float) + _EDGE_TOL, side="right") - 1
    return np.clip(idx, 0, e.size - 2)


def _cell_sums(f: np.ndarray, o: np.ndarray, g: np.ndarray, b: np.ndarray, n_bins: int) -> dict[str, np.ndarray]:
    """Sums per occupied (group, bin) cell, plus each cell's group and bin.

    n, Σf, Σo, Σ(f − o)² and the centred sums Σ(f − f̄_cell)², Σ(f − f̄_cell)(o − ō_cell), Σ(o − ō_group)².
    Centring (a second pass) keeps a term that is exactly zero — e.g. the within-bin variance of forecasts that
    sit on their bin's value — at exactly zero instead of float noise. Only occupied cells are materialised, so
    grouping by distinct forecast values (up to one bin per row) stays linear in the number of rows.
    """
    cells, inverse = np.unique(g * np.int64(n_bins) + b, return_inverse=True)
    inverse = inverse.ravel()
    groups = cells // n_bins

    def s(w: np.ndarray | None) -> np.ndarray:
        return np.bincount(inverse, weights=w, minlength=cells.size).astype(float)

    n, sf, so = s(None), s(f), s(o)
    fbar, obar = sf / n, so / n  # occupied cells: n > 0
    n_group = np.bincount(groups, weights=n)
    o_group = np.bincount(groups, weights=so) / np.where(n_group > 0, n_group, 1.0)
    df, do = f - fbar[inverse], o - obar[inverse]
    return {"n": n, "f": sf, "o": so, "sq": s((f - o) ** 2), "dff": s(df * df), "dfo": s(df * do),
            "doo_group": s((o - o_group[groups[inverse]]) ** 2), "group": groups, "bin": cells % n_bins}


def _decompose(t: dict[str, np.ndarray], n_groups: int) -> pd.DataFrame:
    """Murphy terms and ECE per group from per-cell sums (see the module docstring for the identity)."""
    g = t["group"]
    n = t["n"]

    def per_group(x: np.ndarray) -> np.ndarray:
        return np.bincount(g, weights=x, minlength=n_groups).astype(float)

    total = per_group(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        fbar = t["f"] / n  # cells are occupied: n > 0
        obar = t["o"] / n
        o_all = per_group(t["o"]) / total
        rel = per_group(n * (fbar - obar) ** 2) / total
        res = per_group(n * (obar - o_all[g]) ** 2) / total
        unc = per_group(t["doo_group"]) / total
        wbv = per_group(t["dff"]) / total
        wbc = 2.0 * per_group(t["dfo"]) / total
        brier = per_group(t["sq"]) / total
        ece = per_group(n * np.abs(obar - fbar)) / total
    out = pd.DataFrame({"n": total.astype(np.int64), "brier": brier, "reliability": rel, "resolution": res,
                        "uncertainty": unc, "within_bin_variance": wbv, "within_bin_covariance": wbc, "ece": ece})
    out.loc[total == 0, out.columns[1:]] = np.nan
    return out


def reliability_table(forecast: Any, outcome: Any, *, n_bins: int = DEFAULT_BINS, strategy: str = "uniform",
                      groups: Any = None) -> pd.DataFrame:
    """Reliability-diagram data: one row per bin (per group and bin when `groups` labels each row).

    Columns: group (only with `groups`), bin (0-based), lo, hi (the bin's edges), count (scored rows),
    mean_forecast and observed_freq (mean outcome) in [0, 1] — NaN for an empty bin, which is kept so a diagram
    shows every bin. Equal-mass ("quantile") edges are computed over all rows together.
    """
    f, o, g, labels = _clean(forecast, outcome, groups)
    edges = bin_edges(f, n_bins, strategy)
    k = edges.size - 1
    t = _cell_sums(f, o, g, assign_bins(f, edges), k)
    flat = t["group"] * k + t["bin"]
    size = len(labels) * k
    n = np.bincount(flat, weights=t["n"], minlength=size)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_f = np.where(n > 0, np.bincount(flat, weights=t["f"], minlength=size) / n, np.nan)
        freq = np.where(n > 0, np.bincount(flat, weights=t["o"], minlength=size) / n, np.nan)
    out = pd.DataFrame({
        "group": np.repeat(np.asarray(labels, dtype=object), k),
        "bin": np.tile(np.arange(k), len(labels)),
        "lo": np.tile(edges[:-1], len(labels)),
        "hi": np.tile(edges[1:], len(labels)),
        "count": n.ravel().astype(np.int64),
        "mean_forecast": mean_f.ravel(),
        "observed_freq": freq.ravel(),
    })
    return out.drop(columns="group") if groups is None else out


def expected_calibration_error(forecast: Any, outcome: Any, *, n_bins: int = DEFAULT_BINS,
                               strategy: str = "uniform") -> float:
    """ECE in [0, 1]: Σ (count_k / N) · |observed_freq_k − mean_forecast_k| over non-empty bins; NaN when empty."""
    f, o, g, _ = _clean(forecast, outcome)
    if f.size == 0:
        return float("nan")
    edges = bin_edges(f, n_bins, strategy)
    t = _cell_sums(f, o, g, assign_bins(f, edges), edges.size - 1)
    return float(_decompose(t, 1)["ece"].iloc[0])


def _value_codes(f: np.ndarray) -> tuple[np.ndarray, int]:
    """Per row, the code of its distinct forecast value (a 'bin' per distinct value) and the number of codes."""
    _, inverse = np.unique(f, return_inverse=True)
    return inverse.ravel().astype(np.int64), max(int(inverse.max()) + 1 if inverse.size else 1, 1)


def murphy_decomposition(forecast: Any, outcome: Any, *, n_bins: int | None = DEFAULT_BINS,
                         strategy: str = "uniform") -> dict[str, float]:
    """Murphy decomposition of the Brier score (see the module docstring), as a dict of floats.

    Keys: n, brier, reliability, resolution, uncertainty, within_bin_variance, within_bin_covariance, ece
    (all squared probability except ece, a probability; n a count). Always
    brier = reliability − resolution + uncertainty + within_bin_variance − within_bin_covariance (to float
    rounding); the last two are 0 when forecasts sit on their bin's value and with n_bins=None (groups = distinct
    forecast values). NaN everywhere (n = 0) when nothing is scored.
    """
    frame = murphy_by_group(forecast, outcome, np.zeros(np.size(forecast)), n_bins=n_bins, strategy=strategy)
    row = frame.iloc[0] if len(frame) else None
    keys = ["n", "brier", "reliability", "resolution", "uncertainty", "within_bin_variance",
            "within_bin_covariance", "ece"]
    if row is None:
        return {k: (0 if k == "n" else float("nan")) for k in keys}
    return {k: (int(row[k]) if k == "n" else float(row[k])) for k in keys}


def murphy_by_group(forecast: Any, outcome: Any, groups: Any, *, n_bins: int | None = DEFAULT_BINS,
                    strategy: str = "uniform") -> pd.DataFrame:
    """Calibration per group (e.g. per agent): one row per group label with n, brier, reliability, resolution,
    uncertainty, within_bin_variance, within_bin_covariance and ece (squared probability; ece a probability).

    n_bins=None groups by distinct forecast values (exact three-term identity; ece is then the weighted mean
    |gap| per distinct value). With bins, "quantile" edges are taken over all rows together so every group is
    binned alike. A group whose rows are all unscored gets n = 0 and NaN.
    """
    f, o, g, labels = _clean(forecast, outcome, groups)
    if n_bins is None:
        b, k = _value_codes(f)
    else:
        edges = bin_edges(f, n_bins, strategy)
        b, k = assign_bins(f, edges), edges.size - 1
    out = _decompose(_cell_sums(f, o, g, b, k), len(labels))
    out.insert(0, "group", np.asarray(labels, dtype=object))
    return out


__all__ = [
    "DEFAULT_BINS",
    "STRATEGIES",
    "assign_bins",
    "bin_edges",
    "expected_calibration_error",
    "murphy_by_group",
    "murphy_decomposition",
    "reliability_table",
]
