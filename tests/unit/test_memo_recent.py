"""`cache.memo.Recent` and `Memory`: what a process keeps in memory, by kind and key, in one memory whose least
recently used values go first once their rows pass its budget, whatever their kind."""

import dataclasses

import numpy as np
import pandas as pd
import pytest

from arena.cache.memo import Memory, Recent, forget_all, rows_of


def test_get_or_make_makes_once_keeps_none_and_drops_the_least_recent():
    made: list[str] = []

    def make(value):  # type: ignore[no-untyped-def]
        def inner():  # type: ignore[no-untyped-def]
            made.append(str(value))
            return value
        return inner

    memo: Recent[object] = Recent("test", memory=Memory(2))
    assert memo.get_or_make("a", make(1)) == 1 and memo.get_or_make("a", make(99)) == 1
    assert memo.get_or_make("n", make(None)) is None and memo.get_or_make("n", make(5)) is None  # None is kept
    assert made == ["1", "None"]
    memo.get_or_make("a", make(99))  # "a" used last: "n" goes when "b" comes
    memo.get_or_make("b", make(2))
    assert memo.get_or_make("n", make(7)) == 7 and memo.get_or_make("b", make(0)) == 2
    forget_all()
    assert memo.get_or_make("b", make(3)) == 3


def test_kinds_share_one_budget_in_rows_and_keep_their_keys_apart():
    memory = Memory(25)
    frames: Recent[pd.DataFrame] = Recent("frames", memory=memory)
    boards: Recent[pd.DataFrame] = Recent("boards", memory=memory)
    frames.put_many({"k": pd.DataFrame({"x": np.arange(10)})})  # 11 rows' worth
    boards.put_many({"k": pd.DataFrame({"y": np.arange(5)})})  # 6: the same key, another kind
    assert len(frames.get_many(["k"])["k"]) == 10 and len(boards.get_many(["k"])["k"]) == 5
    assert memory.used == 17
    boards.put_many({"big": pd.DataFrame({"y": np.arange(9)})})  # 10 more: 27 > 25, the least recent goes
    assert frames.get_many(["k"]) == {} and set(boards.get_many(["k", "big"])) == {"k", "big"}
    assert memory.used == 16
    boards.clear()  # one kind forgotten, the others kept
    assert boards.get_many(["k", "big"]) == {} and memory.used == 0
    frames.put_many({"k": pd.DataFrame({"x": np.arange(3)})})
    boards.put_many({"k": pd.DataFrame({"y": np.arange(3)})})
    frames.clear()
    assert frames.get_many(["k"]) == {} and len(boards.get_many(["k"])["k"]) == 3 and memory.used == 4


def test_a_value_is_sized_by_its_rows():
    frame = pd.DataFrame({"x": np.arange(4)})
    assert rows_of(frame) == 5 and rows_of(None) == 1 and rows_of([frame, frame]) == 3  # (containers: their items)

    @dataclasses.dataclass
    class Part:
        table: pd.DataFrame
        tiers: dict

    assert rows_of(Part(frame, {"a": 1, "b": 2})) == 1 + 4 + 2  # a dataclass: its fields' rows


def test_a_kind_is_named_once_in_the_process_memory():
    Recent("a kind named once")
    with pytest.raises(ValueError, match="two kinds"):
        Recent("a kind named once")
