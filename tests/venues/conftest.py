"""Fixtures for the venue tests: the shared API samples and replay snapshot (skipped cleanly when absent)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
SAMPLES = SHARED / "data" / "api-samples"
REPLAY_FILE = SHARED / "data" / "replay" / "replay_markets.jsonl"

# a fixed "fetch" instant for parsers: after every sample was captured
FETCHED_AT = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def shared_available() -> bool:
    return SAMPLES.is_dir()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    if not SHARED.is_dir():
        pytest.skip("../shared is not available")
    return SHARED


@pytest.fixture(scope="session")
def samples_dir(shared_dir: Path) -> Path:
    if not SAMPLES.is_dir():
        pytest.skip("../shared/data/api-samples is not available")
    return SAMPLES


@pytest.fixture(scope="session")
def sample(samples_dir: Path) -> Callable[[str], Any]:
    """``sample("polymarket/clob_midpoint.RECONSTRUCTED.json")`` → the decoded JSON."""

    def load(name: str) -> Any:
        return json.loads((samples_dir / name).read_text(encoding="utf-8"))

    return load


@pytest.fixture(scope="session")
def sample_text(samples_dir: Path) -> Callable[[str], str]:
    def load(name: str) -> str:
        return (samples_dir / name).read_text(encoding="utf-8")

    return load


@pytest.fixture(scope="session")
def replay_file(shared_dir: Path) -> Path:
    if not REPLAY_FILE.is_file():
        pytest.skip("../shared/data/replay/replay_markets.jsonl is not available")
    return REPLAY_FILE


@pytest.fixture
def fetched_at() -> datetime:
    return FETCHED_AT


class FakeTime:
    """An injected monotonic clock whose ``sleep`` advances it instead of waiting."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


_SHARED_FIXTURES = {"shared_dir", "samples_dir", "sample", "sample_text", "replay_file"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the venue tests that read ../shared with the project's ``shared`` marker (``-m "not shared"``)."""
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents and _SHARED_FIXTURES & set(
                getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.shared)
