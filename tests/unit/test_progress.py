"""Progress lines on a pipe: counts in plain English, and a run that ends early says where it ended."""

import io

from arena.progress import Progress


def test_units_are_plural_in_english_and_an_early_end_is_the_total():
    out = io.StringIO()
    with Progress(1, "score", stream=out, unit="batch", tty=False) as bar:
        bar.update(1, "all")
    assert out.getvalue() == "score: 1/1 batch — all\n"
    out = io.StringIO()
    with Progress(10, "demo", stream=out, unit="day", every=4, tty=False) as bar:
        for _ in range(6):
            bar.update(1)
        bar.finish("stopped early")
    assert out.getvalue().splitlines() == ["demo: 4/10 days", "demo: 6/6 days — stopped early"]
    assert Progress(0, "x", stream=io.StringIO(), unit="batch", tty=False).units(2) == "batches"
