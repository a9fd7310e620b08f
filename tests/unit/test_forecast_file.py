"""`arena score FILE`: reading CSV / JSON lines, dropping bad rows, the exact output, and exit codes."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest

from arena.read.forecast_file import OUTPUT_COLUMNS, read_forecasts, score_command

HEADER = ("batch,forecaster,n,n_forecasts,n_answered,scored_on,brier,proxy_mean,proxy_median,proxy_ext_mean,"
          "proxy_logit_pool,log_score,spherical_score,brier_adjusted,irt_skill")

# q1: a 0.2, b 0.6, c 0.7 (all resolve NO); q2: a 0.9, b 0.5 (resolve YES); q3: b 0.4 (unresolved).
# The hand-worked values below score each forecaster on its own rows (`--answered-only`, the tests that say
# so); by default a, b and c are each scored on q1, q2 and q3, a missing forecast as 0.5 (EXPECTED_ALL).
# Three more rows are bad: c's q2 probability is missing, c's q3 is "abc", a's q3 is 1.5.
ROWS = [
    ("a", "q1", "0.2", "0"),
    ("b", "q1", "0.6", "0"),
    ("c", "q1", "0.7", "0"),
    ("a", "q2", "0.9", "1"),
    ("b", "q2", "0.5", "1"),
    ("c", "q2", "", "1"),
    ("c", "q3", "abc", ""),
    ("a", "q3", "1.5", ""),
    ("b", "q3", "0.4", ""),
]
# By hand (own forecast included): means q1 0.5, q2 0.7, q3 0.4; medians q1 0.6, q2 0.7, q3 0.4.
EXPECTED = {
    #     n (with an outcome), brier,  proxy_mean,                proxy_median
    "a": (2, (0.04 + 0.01) / 2, (0.09 + 0.04) / 2, (0.16 + 0.04) / 2),
    "b": (2, (0.36 + 0.25) / 2, (0.01 + 0.04 + 0.0) / 3, (0.0 + 0.04 + 0.0) / 3),
    "c": (1, 0.49, 0.04, 0.01),
}
N_FORECASTS = {"a": 2, "b": 3, "c": 1}  # every valid forecast, resolved or not (b's q3 is unresolved)
# Leave-one-out means: q1 a→0.65, b→0.45, c→0.4; q2 a→0.5, b→0.9; q3 b alone → excluded.
EXPECTED_LOO_MEAN = {"a": (0.2025 + 0.16) / 2, "b": (0.0225 + 0.16) / 2, "c": 0.09}
# Every question for everyone: a states 0.5 on q3 (unresolved), c 0.5 on q2 (YES) and q3.
#            n, n_forecasts, n_answered, brier
EXPECTED_ALL = {"a": (2, 3, 2, (0.04 + 0.01) / 2), "b": (2, 3, 3, (0.36 + 0.25) / 2), "c": (2, 3, 1, (0.49 + 0.25) / 2)}


def write_csv(path: Path, rows: list[tuple[str, ...]], header: str = "forecaster,question,probability,outcome") -> Path:
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows), encoding="utf-8")
    return path


def write_jsonl(path: Path, rows: list[tuple[str, ...]]) -> Path:
    lines = []
    for f, q, p, o in rows:
        rec: dict[str, object] = {"forecaster": f, "question": q}
        try:
            rec["probability"] = float(p)
        except ValueError:
            rec["probability"] = p if p else None  # "abc" stays text, "" becomes null
        if o:
            rec["outcome"] = int(o)
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run(path: Path, out: Path | None = None, leave_one_out: bool = False, answered_only: bool = False
        ) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = score_command(str(path), None if out is None else str(out), leave_one_out, stdout, stderr,
                         answered_only=answered_only)
    return code, stdout.getvalue(), stderr.getvalue()


def parse(text: str) -> dict[str, dict[str, str]]:
    return {row["forecaster"]: row for row in csv.DictReader(io.StringIO(text))}


def check_expected(rows: dict[str, dict[str, str]]) -> None:
    assert set(rows) == {"a", "b", "c"}
    for name, (n, brier, proxy_mean, proxy_median) in EXPECTED.items():
        row = rows[name]
        assert row["batch"] == "all" and row["scored_on"] == "answered only"
        assert int(row["n"]) == n and int(row["n_forecasts"]) == N_FORECASTS[name]
        assert float(row["brier"]) == pytest.approx(brier, rel=1e-9)
        assert float(row["proxy_mean"]) == pytest.approx(proxy_mean, rel=1e-9, abs=1e-12)
        assert float(row["proxy_median"]) == pytest.approx(proxy_median, rel=1e-9, abs=1e-12)
        assert 0.0 <= float(row["proxy_ext_mean"]) <= 1.0
        assert 0.0 <= float(row["proxy_logit_pool"]) <= 1.0


def test_csv_scores_and_reports_dropped_rows(tmp_path: Path) -> None:
    code, out, err = run(write_csv(tmp_path / "f.csv", ROWS), answered_only=True)
    assert code == 0
    assert out.splitlines()[0] == HEADER
    assert tuple(HEADER.split(",")) == OUTPUT_COLUMNS
    assert "dropped 3 of 9 rows: probability missing or outside [0, 1]" in err
    check_expected(parse(out))
    assert [r for r in parse(out)] == ["a", "b", "c"]  # sorted by batch, then forecaster


def test_jsonl_gives_the_same_scores_as_csv(tmp_path: Path) -> None:
    _, csv_out, _ = run(write_csv(tmp_path / "f.csv", ROWS), answered_only=True)
    code, out, err = run(write_jsonl(tmp_path / "f.jsonl", ROWS), answered_only=True)
    assert code == 0
    assert "dropped 3 of 9 rows" in err
    assert out == csv_out


@pytest.mark.parametrize("name", ["f.json-lines", "f.json", "forecasts.txt"])
def test_json_lines_by_other_extension_or_by_sniffing(tmp_path: Path, name: str) -> None:
    code, out, _ = run(write_jsonl(tmp_path / name, ROWS), answered_only=True)
    assert code == 0
    check_expected(parse(out))


def test_csv_without_extension_is_sniffed(tmp_path: Path) -> None:
    code, out, _ = run(write_csv(tmp_path / "forecasts", ROWS), answered_only=True)
    assert code == 0
    check_expected(parse(out))


def test_leave_one_out(tmp_path: Path) -> None:
    code, out, _ = run(write_csv(tmp_path / "f.csv", ROWS), leave_one_out=True, answered_only=True)
    assert code == 0
    rows = parse(out)
    for name, value in EXPECTED_LOO_MEAN.items():
        assert float(rows[name]["proxy_mean"]) == pytest.approx(value, rel=1e-9)
    # n counts the forecasts the Brier averages (with an outcome); n_forecasts every one, the unresolved too
    assert int(rows["b"]["n"]) == 2 and int(rows["b"]["n_forecasts"]) == 3


def test_out_file_is_written(tmp_path: Path) -> None:
    target = tmp_path / "scores.csv"
    code, out, err = run(write_csv(tmp_path / "f.csv", ROWS), out=target, answered_only=True)
    assert code == 0 and out == ""
    assert "wrote 3 rows" in err
    text = target.read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER
    check_expected(parse(text))


def test_batches_are_scored_separately(tmp_path: Path) -> None:
    rows = [
        ("b1", "x", "q", "0.2", "1"),
        ("b1", "y", "q", "0.4", "1"),
        ("b2", "x", "q", "0.8", ""),
        ("", "y", "q", "0.6", ""),
    ]
    path = write_csv(tmp_path / "f.csv", rows, header="batch,forecaster,question,probability,outcome")
    code, out, _ = run(path)
    assert code == 0
    got = [(r["batch"], r["forecaster"], r["proxy_mean"], r["brier"]) for r in csv.DictReader(io.StringIO(out))]
    # b1: mean 0.3 → 0.01 each; Brier (0.2−1)² = 0.64, (0.4−1)² = 0.36. A blank batch is "all".
    # b2 and all each hold one forecast: it is its own consensus, and nothing resolved → brier left empty
    assert [(b, f) for b, f, _, _ in got] == [("all", "y"), ("b1", "x"), ("b1", "y"), ("b2", "x")]
    assert [float(p) for _, _, p, _ in got] == pytest.approx([0.0, 0.01, 0.01, 0.0])
    assert [b for _, _, _, b in got][0] == "" and got[3][3] == ""
    assert float(got[1][3]) == pytest.approx(0.64) and float(got[2][3]) == pytest.approx(0.36)


def test_missing_outcome_column_leaves_brier_empty(tmp_path: Path) -> None:
    rows = [("a", "q", "0.3"), ("b", "q", "0.5")]
    path = write_csv(tmp_path / "f.csv", rows, header="forecaster,question,probability")
    code, out, _ = run(path)
    assert code == 0
    assert [r["brier"] for r in csv.DictReader(io.StringIO(out))] == ["", ""]


def test_repeated_forecasts_keep_the_last(tmp_path: Path) -> None:
    rows = [("a", "q", "0.9", "1"), ("b", "q", "0.5", "1"), ("a", "q", "0.3", "1")]
    code, out, err = run(write_csv(tmp_path / "f.csv", rows))
    assert code == 0
    assert "dropped 1 of 3 rows: repeated (batch, question, forecaster); kept the last" in err
    a = parse(out)["a"]
    assert int(a["n"]) == 1 and float(a["brier"]) == pytest.approx(0.49)  # (0.3 − 1)²


@pytest.mark.parametrize("yes, no", [("1", "0"), ("true", "false"), ("True", "FALSE"), ("yes", "No"),
                                     ("YES", "no"), ("1.0", "0.0")])
def test_outcomes_may_be_written_as_words_in_any_case(tmp_path: Path, yes: str, no: str) -> None:
    rows = [("a", "q1", "0.3", yes), ("a", "q2", "0.4", no), ("b", "q1", "0.5", yes), ("b", "q2", "0.5", "")]
    code, out, err = run(write_csv(tmp_path / "f.csv", rows), answered_only=True)
    assert code == 0, err
    got = parse(out)
    assert float(got["a"]["brier"]) == pytest.approx((0.7**2 + 0.4**2) / 2)
    assert float(got["b"]["brier"]) == pytest.approx(0.25) and int(got["b"]["n"]) == 1  # q2 is unresolved
    assert int(got["b"]["n_forecasts"]) == 2


def test_a_bad_outcome_is_refused_with_its_line_number(tmp_path: Path) -> None:
    rows = [("a", "q", "0.3", "1"), ("b", "q", "0.5", "maybe"), ("c", "q", "0.5", "2")]
    code, out, err = run(write_csv(tmp_path / "f.csv", rows))
    assert code == 2 and out == ""
    assert "line 3: outcome 'maybe' is not 1/0, true/false, yes/no" in err and "(and 1 more rows)" in err


def test_all_rows_dropped_gives_just_the_header(tmp_path: Path) -> None:
    code, out, err = run(write_csv(tmp_path / "f.csv", [("a", "q", "2", "1"), ("b", "q", "-0.1", "1")]))
    assert code == 0
    assert out.strip() == HEADER
    assert "dropped 2 of 2 rows" in err


def test_read_forecasts_columns_and_notes(tmp_path: Path) -> None:
    frame, notes = read_forecasts(write_csv(tmp_path / "f.csv", ROWS))
    assert list(frame.columns) == ["batch", "forecaster", "question", "probability", "outcome"]
    assert len(frame) == 6
    assert notes == ["dropped 3 of 9 rows: probability missing or outside [0, 1]"]
    assert math.isnan(frame.loc[frame["question"] == "q3", "outcome"].iloc[0])


def test_missing_required_column_exits_2(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", [("a", "q")], header="forecaster,question")
    code, out, err = run(path)
    assert code == 2 and out == ""
    assert "probability" in err and "column" in err


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.csv", ""),
        ("broken.jsonl", '{"forecaster": "a", "question": "q", "probability": 0.5}\n{not json\n'),
        ("scalar.jsonl", "[1, 2]\n"),
    ],
)
def test_unreadable_files_exit_2(tmp_path: Path, name: str, content: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    code, out, err = run(path)
    assert code == 2 and out == ""
    assert err.startswith("arena score:")


def test_missing_file_exits_2(tmp_path: Path) -> None:
    code, _, err = run(tmp_path / "nope.csv")
    assert code == 2 and "cannot read" in err


def test_unwritable_output_exits_1(tmp_path: Path) -> None:
    code, _, err = run(write_csv(tmp_path / "f.csv", ROWS), out=tmp_path / "no-such-dir" / "s.csv")
    assert code == 1 and "cannot write" in err


def test_json_array_file(tmp_path: Path) -> None:
    records = [
        {"forecaster": "a", "question": 1, "probability": 0.2, "outcome": 0},
        {"forecaster": "b", "question": 1, "probability": 0.6, "outcome": 0},
        {"forecaster": "b", "question": 2, "probability": True},  # a boolean is not a probability
    ]
    path = tmp_path / "f.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    code, out, err = run(path)
    assert code == 0
    assert "dropped 1 of 3 rows" in err
    rows = parse(out)
    # question 1: mean 0.4 → a (0.2−0.4)² = 0.04, b (0.6−0.4)² = 0.04; Briers 0.04 and 0.36
    assert float(rows["a"]["proxy_mean"]) == pytest.approx(0.04)
    assert float(rows["b"]["brier"]) == pytest.approx(0.36)


def test_proper_and_difficulty_adjusted_columns_per_batch(tmp_path: Path) -> None:
    # batch A: f1 and f2 answer both questions, f3 only an unresolved one. Batch B: "good" answers the easy and
    # the hard question, "lucky" only the easy one — lucky's raw Brier is better, the adjusted one is not.
    path = tmp_path / "f.csv"
    path.write_text("batch,forecaster,question,probability,outcome\n"
                    "A,f1,q1,0.8,1\nA,f1,q2,0.3,0\nA,f2,q1,0.6,1\nA,f2,q2,0.5,0\nA,f3,q3,0.4,\n"
                    "B,good,easy,0.9,1\nB,good,hard,0.6,1\nB,lucky,easy,0.8,1\nB,other,hard,0.5,1\n",
                    encoding="utf-8")
    code, out, _ = run(path, answered_only=True)
    assert code == 0
    rows = {(r["batch"], r["forecaster"]): r for r in csv.DictReader(io.StringIO(out))}
    f1, f2, f3 = rows[("A", "f1")], rows[("A", "f2")], rows[("A", "f3")]
    assert float(f1["log_score"]) == pytest.approx(-(math.log(0.8) + math.log(0.7)) / 2)
    assert float(f2["spherical_score"]) == pytest.approx((0.6 / math.sqrt(0.52) + 0.5 / math.sqrt(0.5)) / 2)
    assert float(f1["brier_adjusted"]) == pytest.approx(float(f1["brier"]), abs=1e-8)  # same questions: raw
    assert float(f1["irt_skill"]) > float(f2["irt_skill"])
    assert all(f3[c] == "" for c in ("brier", "log_score", "spherical_score", "brier_adjusted", "irt_skill"))
    good, lucky = rows[("B", "good")], rows[("B", "lucky")]
    assert float(lucky["brier"]) < float(good["brier"])
    # on the shared easy question good is 0.03 better: so is its adjusted score
    assert float(lucky["brier_adjusted"]) - float(good["brier_adjusted"]) == pytest.approx(0.03, abs=1e-8)


def test_a_bad_json_line_is_reported_with_its_own_line_number(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_text('{"forecaster": "a", "question": "q", "probability": 0.5}\n\n'
                    '{"forecaster": "b", "question": "q", probability: 0.5}\n', encoding="utf-8")
    code, out, err = run(path)
    assert code == 2 and out == ""
    assert "line 3 is not valid JSON" in err and "column 38" in err and "line 1" not in err


def test_the_bootstrap_progress_counts_batches_in_english(tmp_path: Path) -> None:
    rows = [(f, f"q{i}", "0.6", str(i % 2)) for i in range(30) for f in ("a", "b")]
    stdout, stderr = io.StringIO(), io.StringIO()
    assert score_command(str(write_csv(tmp_path / "f.csv", rows)), None, False, stdout, stderr, bootstrap=20) == 0
    assert "1/1 batch — all" in stderr.getvalue() and "batchs" not in stderr.getvalue()


def test_by_default_every_forecaster_is_scored_on_every_question_of_its_batch(tmp_path: Path) -> None:
    code, out, err = run(write_csv(tmp_path / "f.csv", ROWS))
    assert code == 0
    assert out.splitlines()[0] == HEADER
    assert "scored 3 missing forecasts as 0.5" in err  # a's q3, c's q2 and q3
    rows = parse(out)
    for name, (n, n_forecasts, n_answered, brier) in EXPECTED_ALL.items():
        row = rows[name]
        assert row["scored_on"] == "every question (missing = 0.5)"
        assert (int(row["n"]), int(row["n_forecasts"]), int(row["n_answered"])) == (n, n_forecasts, n_answered)
        assert float(row["brier"]) == pytest.approx(brier, rel=1e-12)
    # the crowd proxy pools the imputed 0.5s too: q1 mean 0.5, q2 (0.9 + 0.5 + 0.5) / 3, q3 (0.5 + 0.4 + 0.5) / 3
    q2, q3 = 1.9 / 3, 1.4 / 3
    assert float(rows["c"]["proxy_mean"]) == pytest.approx((0.2**2 + (0.5 - q2) ** 2 + (0.5 - q3) ** 2) / 3)


def test_a_market_copier_that_leaves_the_hard_questions_out_does_not_rank_first(tmp_path: Path) -> None:
    """The forecaster of issue 26: the market's price where it is ≤ 0.10 or ≥ 0.90, nothing elsewhere, against an
    honest forecaster that beats the market everywhere. Scored on its answers alone the copier leads with P(first)
    near 1; scored on every question it ranks second, as stating 0.5 on the hard ones would."""
    rows = []
    for i in range(60):
        yes = i % 2 == 0
        if i < 20:  # near-certain: priced 0.05 / 0.95, resolving as priced
            price = 0.95 if yes else 0.05
            rows += [("copier", f"q{i}", f"{price}", str(int(yes))),
                     ("honest", f"q{i}", "0.97" if yes else "0.03", str(int(yes)))]
        else:  # in band: the honest forecaster leans the right way
            rows.append(("honest", f"q{i}", "0.7" if yes else "0.3", str(int(yes))))
    path = write_csv(tmp_path / "f.csv", rows)

    def first(answered_only: bool) -> tuple[str, dict[str, dict[str, str]]]:
        stdout, stderr = io.StringIO(), io.StringIO()
        assert score_command(str(path), None, False, stdout, stderr, bootstrap=300,
                             answered_only=answered_only) == 0
        got = parse(stdout.getvalue())
        return min(got, key=lambda f: float(got[f]["brier"])), got

    leader, alone = first(answered_only=True)
    assert leader == "copier" and float(alone["copier"]["p_first"]) > 0.95
    assert alone["copier"]["n_answered"] == alone["copier"]["n_forecasts"] == "20"
    leader, every = first(answered_only=False)
    assert leader == "honest" and float(every["honest"]["p_first"]) > 0.95
    assert (every["copier"]["n_answered"], every["copier"]["n_forecasts"]) == ("20", "60")
    assert float(every["copier"]["brier"]) == pytest.approx((20 * 0.05**2 + 40 * 0.25) / 60)
    assert float(every["honest"]["brier"]) == pytest.approx((20 * 0.03**2 + 40 * 0.09) / 60)
    assert float(every["copier"]["brier_adjusted"]) > float(every["honest"]["brier_adjusted"])
    assert float(every["copier"]["irt_skill"]) < float(every["honest"]["irt_skill"])


def test_the_scores_do_not_depend_on_the_order_of_the_lines(tmp_path: Path) -> None:
    rows = [(f, f"q{i}", f"{(i * 7 + len(f)) % 97 / 100 + 0.01:.2f}", str(i % 2)) for i in range(25)
            for f in ("a", "bb", "ccc")]
    _, forward, _ = run(write_csv(tmp_path / "f.csv", rows))
    _, backward, _ = run(write_csv(tmp_path / "r.csv", rows[::-1]))
    assert forward == backward


def test_two_outcomes_for_one_question_are_refused(tmp_path: Path) -> None:
    rows = [("a", "q1", "0.3", "1"), ("b", "q1", "0.5", ""), ("c", "q1", "0.5", "0"), ("a", "q2", "0.5", "1")]
    code, out, err = run(write_csv(tmp_path / "f.csv", rows))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("arena score: ")
    assert "question 'q1' has two different outcomes, line 2 (1) and line 4 (0) — give every row" in err
    # a blank outcome on another row of the question is no contradiction; nor is one question in two batches
    ok = [("a", "q1", "0.3", "1"), ("b", "q1", "0.5", "")]
    assert run(write_csv(tmp_path / "ok.csv", ok))[0] == 0
    batches = write_csv(tmp_path / "b.csv", [("x", "a", "q", "0.3", "1"), ("y", "a", "q", "0.3", "0")],
                        header="batch,forecaster,question,probability,outcome")
    assert run(batches)[0] == 0


def test_bootstrap_tiers_do_not_move_with_the_seed_or_the_draws(tmp_path: Path) -> None:
    """`arena score --bootstrap`: the tiers are the boards' exact paired rule — equal across seeds and draw counts
    — and a clearly worse forecaster is never in the best one's tier."""
    import random

    rng = random.Random(4)
    rows = []
    for i in range(80):
        outcome = rng.random() < 0.5
        truth = 0.8 if outcome else 0.2
        for name, noise in (("sharp", 0.05), ("fair", 0.15), ("poor", 0.45)):
            p = min(0.99, max(0.01, truth + rng.uniform(-noise, noise)))
            rows.append((name, f"q{i}", f"{p:.3f}", str(int(outcome))))
    path = write_csv(tmp_path / "f.csv", rows)
    tiers = []
    for seed, draws in ((0, 200), (1, 200), (2, 200), (0, 2000)):
        stdout, stderr = io.StringIO(), io.StringIO()
        assert score_command(str(path), None, False, stdout, stderr, bootstrap=draws, seed=seed) == 0
        tiers.append({r["forecaster"]: r["tier"] for r in csv.DictReader(io.StringIO(stdout.getvalue()))})
    assert all(t == tiers[0] for t in tiers)
    assert float(tiers[0]["poor"]) > float(tiers[0]["sharp"])
