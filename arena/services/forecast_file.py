"""The I/O edge of `arena score FILE`: read a file of forecasts, score it with arena.scoring.proxy, write a CSV.

Owns file formats, row cleaning and the command's messages; the scores themselves come from the pure scoring
package. Input columns: forecaster, question, probability (P(YES) in [0, 1]) and optionally outcome (YES
payout in [0, 1], normally 0 or 1) and batch. A missing or blank batch is the batch named "all".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd

from arena.errors import ArenaError
from arena.scoring.proxy import AGGREGATORS, proxy_scores, score_column

REQUIRED_COLUMNS = ("forecaster", "question", "probability")
DEFAULT_BATCH = "all"
OUTPUT_COLUMNS = ("batch", "forecaster", "n", "brier") + tuple(score_column(a) for a in AGGREGATORS)
FLOAT_FORMAT = "%.10g"  # ten significant digits: far beyond any forecast's precision, without float noise
_JSON_LINES_SUFFIXES = (".jsonl", ".json-lines", ".jsonlines", ".ndjson")

EXIT_OK = 0
EXIT_OUTPUT = 1  # the scores could not be written
EXIT_INPUT = 2  # the file could not be read or lacks required columns


class ForecastFileError(ArenaError):
    """A forecast file could not be read, or lacks a required column."""

    reason = "forecast_file"


def _format_of(path: Path) -> str:
    """'csv', 'jsonl' or 'json' (a JSON array of objects): by extension, else by the first non-blank character."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return "csv"
    if suffix in _JSON_LINES_SUFFIXES:
        return "jsonl"
    with path.open("r", encoding="utf-8-sig") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith("["):
        return "json"
    if head.startswith("{") or suffix == ".json":
        return "jsonl"
    return "csv"


def _read_raw(path: Path) -> pd.DataFrame:
    try:
        kind = _format_of(path)
        if kind == "csv":
            # everything as text: ids like "007" must stay as written; numbers are parsed per column below
            return pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True, encoding="utf-8-sig")
        if kind == "jsonl":
            rows = []
            with path.open("r", encoding="utf-8-sig") as fh:
                for number, line in enumerate(fh, start=1):
                    if line.strip():
                        row = json.loads(line)
                        if not isinstance(row, dict):
                            raise ValueError(f"line {number} is not a JSON object")
                        rows.append(row)
            return pd.DataFrame.from_records(rows)
        with path.open("r", encoding="utf-8-sig") as fh:
            data = json.load(fh)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError("a .json file must hold JSON lines or an array of objects")
        return pd.DataFrame.from_records(data)
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ForecastFileError(f"cannot read {path}: {exc}", path=str(path)) from exc


def _text(column: pd.Series) -> pd.Series:
    """Ids as stripped text; missing values become ''."""
    obj = column.astype(object)
    return obj.where(obj.notna(), "").astype(str).str.strip()


def _numbers(column: pd.Series) -> pd.Series:
    """Floats; blanks and anything that is not a number become NaN. JSON true/false are not numbers here."""
    if column.dtype == bool:
        return pd.Series(np.nan, index=column.index)
    if column.dtype == object:  # JSON values of mixed types; CSV columns are text and skip this per-value check
        column = column.where(~column.map(lambda v: isinstance(v, bool)), None)
    return pd.to_numeric(_text(column).replace("", np.nan), errors="coerce").astype(float)


def read_forecasts(path: str | Path) -> tuple[pd.DataFrame, list[str]]:
    """The valid forecasts of a file, and human-readable notes on what was dropped or ignored.

    Returns columns batch, forecaster, question (text), probability (float in [0, 1]) and outcome (float in
    [0, 1] or NaN). Rows whose probability is missing, not a number or outside [0, 1] are dropped, as are rows
    without a forecaster or question; when a (batch, question, forecaster) appears more than once the last row
    wins. An outcome that is not a number in [0, 1] is ignored (treated as unresolved). Raises ForecastFileError
    when the file cannot be read or lacks a required column.
    """
    path = Path(path)
    raw = _read_raw(path)
    raw.columns = [str(c).strip().lower() for c in raw.columns]
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise ForecastFileError(
            f"{path} lacks required column(s) {', '.join(missing)} (need {', '.join(REQUIRED_COLUMNS)})",
            path=str(path),
        )
    total = len(raw)
    frame = pd.DataFrame(
        {
            "batch": _text(raw["batch"]).replace("", DEFAULT_BATCH) if "batch" in raw else DEFAULT_BATCH,
            "forecaster": _text(raw["forecaster"]),
            "question": _text(raw["question"]),
            "probability": _numbers(raw["probability"]),
            "outcome": _numbers(raw["outcome"]) if "outcome" in raw else np.nan,
        },
        index=raw.index,
    )
    notes: list[str] = []
    p = frame["probability"]
    bad_p = ~((p >= 0.0) & (p <= 1.0))  # NaN fails both comparisons: missing and non-numeric land here too
    if bad_p.any():
        notes.append(f"dropped {int(bad_p.sum())} of {total} rows: probability missing or outside [0, 1]")
    no_id = ~bad_p & ((frame["forecaster"] == "") | (frame["question"] == ""))
    if no_id.any():
        notes.append(f"dropped {int(no_id.sum())} of {total} rows: forecaster or question missing")
    frame = frame[~(bad_p | no_id)]
    dup = frame.duplicated(["batch", "question", "forecaster"], keep="last")
    if dup.any():
        notes.append(f"dropped {int(dup.sum())} of {total} rows: repeated (batch, question, forecaster); kept the last")
        frame = frame[~dup]
    if "outcome" in raw:
        given = _text(raw["outcome"].loc[frame.index]) != ""
        o = frame["outcome"]
        bad_o = given & ~((o >= 0.0) & (o <= 1.0))
        if bad_o.any():
            notes.append(f"ignored the outcome of {int(bad_o.sum())} rows: not a number in [0, 1]")
            frame = frame.assign(outcome=o.where(~bad_o, np.nan))
    return frame.reset_index(drop=True), notes


def score_forecasts(frame: pd.DataFrame, *, leave_one_out: bool = False) -> pd.DataFrame:
    """One row per (batch, forecaster) with OUTPUT_COLUMNS, sorted by batch then forecaster.

    n counts the forecaster's forecasts; brier is the mean (probability − outcome)² over those with an outcome
    (NaN when none has one); proxy_* are the crowd-proxy scores against each aggregator, with questions pooled
    within their batch.
    """
    scores = proxy_scores(frame, leave_one_out=leave_one_out, by=["batch", "forecaster"])
    sq = (frame["probability"] - frame["outcome"]) ** 2
    brier = sq.groupby([frame["batch"], frame["forecaster"]], sort=False).mean().rename("brier").reset_index()
    out = scores.merge(brier, on=["batch", "forecaster"], how="left")
    return out[list(OUTPUT_COLUMNS)].sort_values(["batch", "forecaster"], kind="stable").reset_index(drop=True)


STATS_COLUMNS = ("brier_ci_low", "brier_ci_high", "tier", "p_first", "pct_beat_first", "p_vs_first_adj",
                 "provisional", "ece", "reliability", "resolution", "uncertainty")


def forecast_statistics(frame: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                        min_resolved: int = 20) -> pd.DataFrame:
    """Per (batch, forecaster) with outcomes: the Brier score's paired-bootstrap 95 % interval (questions
    resampled, every forecaster scored on the same draws), its significance tier, P(ranked first), % of
    questions where it beat No. 1, the BH-adjusted p-value against No. 1, the provisional flag, and the
    calibration (ECE and Murphy decomposition)."""
    from arena.scoring.calibration import murphy_by_group
    from arena.scoring.stats import paired_bootstrap

    known = frame[frame["outcome"].notna()] if "outcome" in frame.columns else frame.iloc[0:0]
    rows = []
    for batch, g in known.groupby("batch", sort=True):
        g = g.assign(brier=(g["probability"] - g["outcome"]) ** 2)
        res = paired_bootstrap(g, "brier", metric="brier", agent="forecaster", market="question", stratum="batch",
                               n_boot=n_boot, seed=seed, min_resolved=min_resolved)
        cal = murphy_by_group(g["probability"].to_numpy(float), g["outcome"].to_numpy(float),
                              g["forecaster"].to_numpy()).set_index("group")
        for rec in res.table.to_dict("records"):
            c = cal.loc[rec["agent"]] if rec["agent"] in cal.index else None
            rows.append({"batch": batch, "forecaster": rec["agent"], "brier_ci_low": rec["ci_low"],
                         "brier_ci_high": rec["ci_high"], "tier": rec["tier"], "p_first": rec["p_first"],
                         "pct_beat_first": rec["pct_beat_first"], "p_vs_first_adj": rec["p_vs_first_adj"],
                         "provisional": rec["provisional"],
                         **{k: (c[k] if c is not None else float("nan"))
                            for k in ("ece", "reliability", "resolution", "uncertainty")}})
    return pd.DataFrame(rows, columns=["batch", "forecaster", *STATS_COLUMNS])


def score_command(path: str, out: str | None, leave_one_out: bool, stdout: TextIO, stderr: TextIO,
                  bootstrap: int = 0, seed: int = 0) -> int:
    """`arena score FILE [--out F] [--leave-one-out] [--bootstrap N]`: write per-forecaster scores as CSV to
    `out` or stdout. With `--bootstrap N` the statistics columns (`STATS_COLUMNS`, from N paired draws) follow
    the standard ones.

    Notes on dropped rows go to stderr. Exit code 0 when scored, 2 when the file cannot be read or lacks a
    required column, 1 when the output cannot be written.
    """
    try:
        frame, notes = read_forecasts(path)
    except ForecastFileError as exc:
        print(f"arena score: {exc.message}", file=stderr)
        return EXIT_INPUT
    for note in notes:
        print(note, file=stderr)
    table = score_forecasts(frame, leave_one_out=leave_one_out)
    if bootstrap > 0:
        extra = forecast_statistics(frame, n_boot=bootstrap, seed=seed)
        table = table.merge(extra, on=["batch", "forecaster"], how="left")
    try:
        if out is None:
            table.to_csv(stdout, index=False, na_rep="", float_format=FLOAT_FORMAT, lineterminator="\n")
        else:
            with open(out, "w", encoding="utf-8", newline="") as fh:
                table.to_csv(fh, index=False, na_rep="", float_format=FLOAT_FORMAT, lineterminator="\n")
    except OSError as exc:
        print(f"arena score: cannot write {out}: {exc}", file=stderr)
        return EXIT_OUTPUT
    if out is not None:
        print(f"wrote {len(table)} rows to {out}", file=stderr)
    return EXIT_OK


__all__ = [
    "DEFAULT_BATCH",
    "ForecastFileError",
    "OUTPUT_COLUMNS",
    "read_forecasts",
    "STATS_COLUMNS",
    "forecast_statistics",
    "score_command",
    "score_forecasts",
]
