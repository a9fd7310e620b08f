"""`store.memo.Recent`: what a process keeps in memory by key, least recently used dropped first."""

from arena.store.memo import Recent, forget_all


def test_get_or_make_makes_once_keeps_none_and_drops_the_least_recent():
    made: list[str] = []

    def make(value):  # type: ignore[no-untyped-def]
        def inner():  # type: ignore[no-untyped-def]
            made.append(str(value))
            return value
        return inner

    memo: Recent[object] = Recent(2)
    assert memo.get_or_make("a", make(1)) == 1 and memo.get_or_make("a", make(99)) == 1
    assert memo.get_or_make("n", make(None)) is None and memo.get_or_make("n", make(5)) is None  # None is kept
    assert made == ["1", "None"]
    memo.get_or_make("a", make(99))  # "a" used last: "n" goes when "b" comes
    memo.get_or_make("b", make(2))
    assert memo.get_or_make("n", make(7)) == 7 and memo.get_or_make("b", make(0)) == 2
    forget_all()
    assert memo.get_or_make("b", make(3)) == 3
