"""Fixtures for the agent tests: a running stand-in chat endpoint on 127.0.0.1 and a hand-built view.

tests/agents has no __init__.py (like tests/venues): pytest puts this folder on sys.path, so the tests import
the helpers as `from standin import ...` and `from agent_views import ...`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agent_views import standard_view
from standin import StandinServer

from arena.agents.view import AgentView


@pytest.fixture
def standin() -> Iterator[StandinServer]:
    """A started stand-in server with an empty script; stopped after the test."""
    server = StandinServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def view() -> AgentView:
    return standard_view()
