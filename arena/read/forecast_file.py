"""The I/O edge of `arena score FILE`: read a file of forecasts, score it with arena.scoring.proxy, write a CSV.

Owns file formats, row cleaning and the command's messages; the scores themselves come from the pure scoring
package. Input columns: forecaster, question, probability (P(YES) in [0, 1]) and optionally outcome (YES
payout in [0, 1]: 1/0, true/false or yes/no in any case, or a fraction; blank while unresolved) and batch. A
missing or blank batch is the batch named "all". Column names are not case-sensitive. A CSV row with more
fields than the header, an outcome that is none of those, two columns with one name, or two rows giving one
question different outcomes are refused with the line number: guessing would score the wrong thing.

Every forecaster of a batch is scored on every question of that batch (`complete`): a question it gave no
forecast for is scored as a stated 0.5, as the arena scores a seat that leaves a forecast-set question out, so
leaving a question out never ranks a forecaster better than stating 0.5 on it. `--answered-only` scores each
forecaster on its own rows alone (the behaviour before), and says so in every output row (`scored_on`).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from arena.read.csv_cells import safe_frame
from arena.errors import ArenaError
from arena.scoring.difficulty import difficulty_adjusted_brier
from arena.scoring.irt import irt_skill
from arena.scoring.proper import log_loss, spherical
from arena.scoring.provisional import PROVISIONAL_MIN_RESOLVED
from arena.scoring.proxy import AGGREGATORS, proxy_scores, score_column

REQUIRED_COLUMNS = ("forecaster", "question", "probability")
DEFAULT_BATCH = "all"
PROPER_COLUMNS = ("log_score", "spherical_score", "brier_adjusted", "irt_skill")
OUTPUT_COLUMNS = (("batch", "forecaster", "n", "n_forecasts", "n_answered", "scored_on", "brier")
                  + tuple(score_column(a) for a in AGGREGATORS) + PROPER_COLUMNS)
SCORED_ON_ALL = "every question (missing = 0.5)"
SCORED_ON_ANSWERED = "answered only"
MISSING_PROBABILITY = 0.5
FLOAT_FORMAT = "%.10g"  # ten significant digits: far beyond any forecast's precision, without float noise
_JSON_LINES_SUFFIXES = (".jsonl", ".json-lines", ".jsonlines", ".ndjson")

EXIT_OK = 0
EXIT_OUTPUT = 1  # the scores could not be written
EXIT_INPUT = 2  # the file could not be read or lacks required columns


class ForecastFileError(ArenaError):
    """A forecast file could not be read, or lacks a required column."""

    reason = "forecast_file"
    exit_code = 2


FORMAT_FIX = ("see `arena score --help`: a CSV with a header forecaster,question,probability[,outcome][,batch], "
              "or JSON lines with those keys")
OUTCOME_TRUE = frozenset({"1", "1.0", "true", "yes"})
OUTCOME_FALSE = frozenset({"0", "0.0", "false", "no"})


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


def _read_csv(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """Every cell as text (ids like "007" stay as written; numbers are parsed per column later), and each row's
    place ("line N") in the file."""
    with path.open("r", encoding="utf-8-sig", newline="") as fh:
        reader = csv.reader(fh, skipinitialspace=True)
        header = next(reader, None)
        if header is None or not any(h.strip() for h in header):
            raise ValueError("the file is empty (a CSV needs a header line)")
        names = [h.strip() for h in header]
        rows: list[list[str]] = []
        places: list[str] = []
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(names):
                raise ForecastFileError(
                    f"{path} line {reader.line_num}: {len(row)} fields but the header names {len(names)} columns",
                    fix="remove the extra field, or quote a value that contains a comma", path=str(path))
            rows.append(row + [""] * (len(names) - len(row)))
            places.append(f"line {reader.line_num}")
    return pd.DataFrame(rows, columns=names, dtype=object), places


def _read_raw(path: Path) -> tuple[pd.DataFrame, list[str]]:
    """The file's rows as a frame, and where each row is in the file ("line N" or "item N")."""
    try:
        kind = _format_of(path)
        if kind == "csv":
            return _read_csv(path)
        if kind == "jsonl":
            rows = []
            places = []
            with path.open("r", encoding="utf-8-sig") as fh:
                for number, line in enumerate(fh, start=1):
                    if line.strip():
                        try:
                            row = json.loads(line)
                        except json.JSONDecodeError as exc:  # its own position is within the line: say which line
                            raise ValueError(f"line {number} is not valid JSON ({exc.msg} at column {exc.colno})"
                                             ) from None
                        if not isinstance(row, dict):
                            raise ValueError(f"line {number} is not a JSON object")
                        rows.append(row)
                        places.append(f"line {number}")
            return pd.DataFrame.from_records(rows), places
        with path.open("r", encoding="utf-8-sig") as fh:
            data = json.load(fh)
        if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
            raise ValueError("a .json file must hold JSON lines or an array of objects")
        return pd.DataFrame.from_records(data), [f"item {i}" for i in range(1, len(data) + 1)]
    except RecursionError:
        raise ForecastFileError(f"cannot read {path}: its JSON is nested too deeply", fix=FORMAT_FIX,
                                path=str(path)) from None
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ForecastFileError(f"cannot read {path}: {exc}", fix=FORMAT_FIX, path=str(path)) from exc


def _outcomes(column: pd.Series, places: list[str], path: Path) -> pd.Series:
    """YES payouts: 1/0, true/false, yes/no (any case; JSON booleans too) or a number in [0, 1]; blank is NaN
    (unresolved). Anything else raises ForecastFileError naming the first bad row's line."""
    text = _text(column).str.lower()
    named = text.map(lambda v: 1.0 if v in OUTCOME_TRUE else 0.0 if v in OUTCOME_FALSE else np.nan)
    numeric = pd.to_numeric(text.replace("", np.nan), errors="coerce").astype(float)
    numeric = numeric.where((numeric >= 0.0) & (numeric <= 1.0))
    values = named.astype(float).fillna(numeric)
    bad = (text != "") & values.isna()
    if bad.any():
        positions = np.flatnonzero(bad.to_numpy())
        first = int(positions[0])
        more = f" (and {len(positions) - 1} more rows)" if len(positions) > 1 else ""
        raise ForecastFileError(
            f"{path} {places[first]}: outcome {column.iloc[first]!r} is not 1/0, true/false, yes/no or a number "
            f"in [0, 1]{more}", fix="write the YES outcome as 1 or 0 (or true/false, yes/no), or leave it blank "
                                    "while the question is unresolved", path=str(path))
    return values


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
    wins. Raises ForecastFileError when the file cannot be read, lacks a required column, names a column twice
    (in any case), has a CSV row with too many fields or an outcome that is not 1/0, true/false or yes/no.
    """
    path = Path(path)
    raw, places = _read_raw(path)
    given = [str(c).strip() for c in raw.columns]
    seen: dict[str, str] = {}
    for name in given:
        if name.lower() in seen:
            raise ForecastFileError(
                f"{path}: columns {seen[name.lower()]!r} and {name!r} are the same column (names are not "
                f"case-sensitive)", fix="keep only one of them", path=str(path))
        seen[name.lower()] = name
    raw.columns = [name.lower() for name in given]
    missing = [c for c in REQUIRED_COLUMNS if c not in raw.columns]
    if missing:
        raise ForecastFileError(
            f"{path} lacks required column(s) {', '.join(missing)} (need {', '.join(REQUIRED_COLUMNS)})",
            fix=f"add a header row naming the columns {', '.join(REQUIRED_COLUMNS)} (outcome and batch optional)",
            path=str(path),
        )
    total = len(raw)
    frame = pd.DataFrame(
        {
            "batch": _text(raw["batch"]).replace("", DEFAULT_BATCH) if "batch" in raw else DEFAULT_BATCH,
            "forecaster": _text(raw["forecaster"]),
            "question": _text(raw["question"]),
            "probability": _numbers(raw["probability"]),
            "outcome": _outcomes(raw["outcome"], places, path) if "outcome" in raw else np.nan,
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
    _check_one_outcome(frame, places, path)
    return frame.reset_index(drop=True), notes


def _check_one_outcome(frame: pd.DataFrame, places: list[str], path: Path) -> None:
    """ForecastFileError naming the first question (of a batch) whose scored rows give two different outcomes."""
    known = frame[frame["outcome"].notna()]
    if not len(known):
        return
    spread = known.groupby(["batch", "question"], sort=False)["outcome"].nunique()
    bad = spread[spread > 1]
    if not len(bad):
        return
    batch, question = bad.index[0]
    rows = known[(known["batch"] == batch) & (known["question"] == question)]
    first = rows.drop_duplicates("outcome").head(2)
    where = " and ".join(f"{places[i]} ({o:g})" for i, o in zip(first.index, first["outcome"]))
    more = f" (and {len(bad) - 1} more questions)" if len(bad) > 1 else ""
    in_batch = f" in batch {batch!r}" if batch != DEFAULT_BATCH else ""
    raise ForecastFileError(
        f"{path}: question {question!r}{in_batch} has two different outcomes, {where}{more}",
        fix="give every row of a question the same outcome (or leave it blank on all but one)", path=str(path))


def complete(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` (`read_forecasts`) with one row per forecaster of each batch and question of that batch: a
    question a forecaster gave no forecast for gets probability 0.5 and `answered` False; every row of a question
    carries the question's outcome (the one its rows give; NaN when none does). Rows in a fixed order: batch,
    question, forecaster."""
    keys = ["batch", "question", "forecaster"]
    if not len(frame):
        return frame.assign(answered=pd.Series(dtype=bool))
    outcome = frame.groupby(["batch", "question"], sort=False)["outcome"].first()  # (the first one given)
    grid = frame[["batch", "forecaster"]].drop_duplicates().merge(
        frame[["batch", "question"]].drop_duplicates(), on="batch")
    out = grid.merge(frame[keys + ["probability"]], on=keys, how="left")
    out["answered"] = out["probability"].notna()
    out["probability"] = out["probability"].fillna(MISSING_PROBABILITY).astype(float)
    out["outcome"] = pd.MultiIndex.from_frame(out[["batch", "question"]]).map(outcome).astype(float)
    out = out.sort_values(keys, kind="stable").reset_index(drop=True)
    return out[["batch", "forecaster", "question", "probability", "outcome", "answered"]]


def score_forecasts(frame: pd.DataFrame, *, leave_one_out: bool = False, answered_only: bool = False
                    ) -> pd.DataFrame:
    """One row per (batch, forecaster) with OUTPUT_COLUMNS, sorted by batch then forecaster.

    Every forecaster is scored on every question of its batch (`complete`: a missing forecast is a stated 0.5)
    unless `answered_only`, which scores its own rows alone; `scored_on` says which. A frame that went through
    `complete` already is scored as it is. n counts the forecaster's forecasts with an outcome — those `brier` and
    the proper scores average over — n_forecasts all its forecasts (resolved or not: the crowd proxy scores them
    all) and n_answered those the file gave (the rest are imputed as 0.5); brier is the mean
    (probability − outcome)² over those with an outcome (NaN when none has one); proxy_* are the crowd-proxy scores against each aggregator, with questions pooled
    within their batch; log_score, spherical_score (means over the forecasts with an outcome), brier_adjusted and
    irt_skill (fitted per batch on those forecasts' Brier: arena.scoring.difficulty and arena.scoring.irt) are NaN
    where the forecaster has no outcome in the batch.
    """
    keys = ["batch", "forecaster"]
    frame = scoring_frame(frame, answered_only=answered_only)
    scores = proxy_scores(frame, leave_one_out=leave_one_out, by=keys).rename(columns={"n": "n_forecasts"})
    sq = (frame["probability"] - frame["outcome"]) ** 2
    groups = sq.groupby([frame["batch"], frame["forecaster"]], sort=False)
    brier = pd.DataFrame({"brier": groups.mean(), "n": groups.count()}).reset_index()  # count: non-NaN only
    given = frame.groupby(keys, sort=False)["answered"].sum().rename("n_answered").reset_index()
    out = (scores.merge(brier, on=keys, how="left").merge(given, on=keys, how="left")
           .merge(_proper_scores(frame), on=keys, how="left"))
    out["n_answered"] = out["n_answered"].fillna(0).astype(np.int64)
    out["scored_on"] = SCORED_ON_ANSWERED if answered_only else SCORED_ON_ALL
    return out[list(OUTPUT_COLUMNS)].sort_values(["batch", "forecaster"], kind="stable").reset_index(drop=True)


def scoring_frame(frame: pd.DataFrame, *, answered_only: bool = False) -> pd.DataFrame:
    """The rows a file is scored on: `complete(frame)`, or with `answered_only` the file's own rows (each
    `answered`), in a fixed order (batch, question, forecaster) either way, so the sums do not depend on the
    order of the file's lines."""
    if "answered" in frame.columns:
        return frame
    if not answered_only:
        return complete(frame)
    return (frame.assign(answered=True).sort_values(["batch", "question", "forecaster"], kind="stable")
            .reset_index(drop=True))


def _proper_scores(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (batch, forecaster) with an outcome: PROPER_COLUMNS."""
    known = frame[frame["outcome"].notna()]
    if not len(known):
        return pd.DataFrame(columns=["batch", "forecaster", *PROPER_COLUMNS])
    p, o = known["probability"].to_numpy(float), known["outcome"].to_numpy(float)
    known = known.assign(brier=(p - o) ** 2, log_loss=log_loss(p, o), spherical=spherical(p, o))
    parts = []
    for batch, g in known.groupby("batch", sort=True):
        rows = g.rename(columns={"forecaster": "agent"})
        fitted = difficulty_adjusted_brier(rows)[["agent", "brier_adjusted"]].merge(
            irt_skill(rows)[["agent", "irt_skill"]], on="agent", how="outer")
        means = rows.groupby("agent").agg(log_score=("log_loss", "mean"), spherical_score=("spherical", "mean"))
        parts.append(means.reset_index().merge(fitted, on="agent", how="outer").assign(batch=batch))
    return pd.concat(parts, ignore_index=True).rename(columns={"agent": "forecaster"})[
        ["batch", "forecaster", *PROPER_COLUMNS]]


STATS_COLUMNS = ("brier_ci_low", "brier_ci_high", "tier", "p_first", "pct_beat_first", "p_vs_first_adj",
                 "provisional", "ece", "reliability", "resolution", "uncertainty")


def forecast_statistics(frame: pd.DataFrame, *, n_boot: int = 1000, seed: int = 0,
                        min_resolved: int = PROVISIONAL_MIN_RESOLVED, on_batch: Any = None) -> pd.DataFrame:
    """Per (batch, forecaster) with outcomes: the Brier score's paired-bootstrap 95 % interval (questions
    resampled, every forecaster scored on the same draws), its significance tier, P(ranked first), % of
    questions where it beat No. 1, the BH-adjusted p-value against No. 1, the provisional flag, and the
    calibration (ECE and Murphy decomposition). `on_batch(batch)` is called after each batch (progress).

    The tier is the boards' exact rule (`scoring.evidence.paired_tiers`: paired t-tests on the questions a pair
    shares, Benjamini–Hochberg, a minimum of evidence, the leader rule), with each question of a file its own unit
    of evidence: it does not move with the seed or the number of draws. Provisional rows get no tier."""
    from arena.scoring.calibration import murphy_by_group
    from arena.scoring.evidence import paired_tiers
    from arena.scoring.stats import paired_bootstrap

    known = frame[frame["outcome"].notna()] if "outcome" in frame.columns else frame.iloc[0:0]
    rows = []
    for batch, g in known.groupby("batch", sort=True):
        g = g.assign(brier=(g["probability"] - g["outcome"]) ** 2)
        res = paired_bootstrap(g, "brier", metric="brier", agent="forecaster", market="question", stratum="batch",
                               n_boot=n_boot, seed=seed, min_resolved=min_resolved)
        cal = murphy_by_group(g["probability"].to_numpy(float), g["outcome"].to_numpy(float),
                              g["forecaster"].to_numpy()).set_index("group")
        table = res.table
        settled = table.loc[~table["provisional"].astype(bool), "agent"].tolist()
        tier = paired_tiers(g, value="brier", agent="forecaster", unit=("question",), cluster="question",
                            eligible=settled, intervals=table[["agent", "ci_low", "ci_high"]]).series()
        for rec in table.to_dict("records"):
            rec["tier"] = tier.get(rec["agent"], float("nan"))
            c = cal.loc[rec["agent"]] if rec["agent"] in cal.index else None
            rows.append({"batch": batch, "forecaster": rec["agent"], "brier_ci_low": rec["ci_low"],
                         "brier_ci_high": rec["ci_high"], "tier": rec["tier"], "p_first": rec["p_first"],
                         "pct_beat_first": rec["pct_beat_first"], "p_vs_first_adj": rec["p_vs_first_adj"],
                         "provisional": rec["provisional"],
                         **{k: (c[k] if c is not None else float("nan"))
                            for k in ("ece", "reliability", "resolution", "uncertainty")}})
        if on_batch is not None:
            on_batch(batch)
    return pd.DataFrame(rows, columns=["batch", "forecaster", *STATS_COLUMNS])


def score_command(path: str, out: str | None, leave_one_out: bool, stdout: TextIO, stderr: TextIO,
                  bootstrap: int = 0, seed: int = 0, answered_only: bool = False) -> int:
    """`arena score FILE [--out F] [--leave-one-out] [--bootstrap N] [--answered-only]`: write per-forecaster
    scores as CSV to `out` or stdout. With `--bootstrap N` the statistics columns (`STATS_COLUMNS`, from N paired
    draws) follow the standard ones. Every forecaster is scored on every question of its batch, a missing
    forecast as 0.5, unless `answered_only` (module docstring).

    Notes on dropped rows go to stderr. Exit code 0 when scored, 2 when the file cannot be read or lacks a
    required column, 1 when the output cannot be written.
    """
    try:
        frame, notes = read_forecasts(path)
    except ForecastFileError as exc:
        print(f"arena score: {exc.message}" + (f" — {exc.fix}" if exc.fix else ""), file=stderr)
        return EXIT_INPUT
    for note in notes:
        print(note, file=stderr)
    frame = scoring_frame(frame, answered_only=answered_only)
    imputed = int((~frame["answered"]).sum())
    if answered_only:
        print("scored on each forecaster's own forecasts only (--answered-only): one that leaves hard questions "
              "out can rank better than it should", file=stderr)
    elif imputed:
        print(f"scored {imputed} missing forecasts as 0.5: every forecaster on every question of its batch "
              "(--answered-only scores the given ones alone)", file=stderr)
    table = score_forecasts(frame, leave_one_out=leave_one_out, answered_only=answered_only)
    if bootstrap > 0:
        from arena.progress import Progress

        known = frame[frame["outcome"].notna()] if "outcome" in frame.columns else frame.iloc[0:0]
        with Progress(int(known["batch"].nunique()), f"arena score: {bootstrap} bootstrap draws", stream=stderr,
                      unit="batch") as bar:
            extra = forecast_statistics(frame, n_boot=bootstrap, seed=seed,
                                        on_batch=lambda batch: bar.update(1, str(batch)))
        table = table.merge(extra, on=["batch", "forecaster"], how="left")
    table = safe_frame(table)  # forecaster names and questions are the file's text: no formula runs from them
    try:
        if out is None:
            table.to_csv(stdout, index=False, na_rep="", float_format=FLOAT_FORMAT, lineterminator="\n")
        else:
            with open(out, "w", encoding="utf-8", newline="") as fh:
                table.to_csv(fh, index=False, na_rep="", float_format=FLOAT_FORMAT, lineterminator="\n")
    except OSError as exc:
        print(f"arena score: cannot write {out}: {exc.strerror or exc} — check that its folder exists and is "
              f"writable", file=stderr)
        return EXIT_OUTPUT
    if out is not None:
        print(f"wrote {len(table)} rows to {out}", file=stderr)
    return EXIT_OK


__all__ = [
    "DEFAULT_BATCH",
    "SCORED_ON_ALL",
    "SCORED_ON_ANSWERED",
    "complete",
    "scoring_frame",
    "ForecastFileError",
    "OUTPUT_COLUMNS",
    "PROPER_COLUMNS",
    "read_forecasts",
    "STATS_COLUMNS",
    "forecast_statistics",
    "score_command",
    "score_forecasts",
]
