"""The venue registry is the one place venues are named: the CLI's choices, the sync job and `arena sync` read it."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from arena.clock import FixedClock
from arena.errors import InputError
from arena.usecases import sync as sync_service
from arena.usecases import venue_registry
from arena.venues.manifold import ManifoldClient
from arena.venues.polymarket import PolymarketClient


def test_every_venue_has_a_client_and_a_sync():
    assert venue_registry.VENUE_NAMES == ("polymarket", "manifold", "replay")
    assert venue_registry.LIVE_VENUES == ("polymarket", "manifold")
    for v in venue_registry.VENUES.values():
        assert callable(getattr(sync_service, v.sync_name))
    clock = FixedClock(datetime(2026, 1, 4, tzinfo=timezone.utc))
    assert isinstance(venue_registry.client_for("polymarket", clock), PolymarketClient)
    assert isinstance(venue_registry.client_for("manifold", clock), ManifoldClient)


def test_unknown_venues_and_a_replay_without_its_file_are_refused_with_the_fix():
    with pytest.raises(InputError) as exc:
        venue_registry.client_for("kalshi", None)
    assert "polymarket, manifold, replay" in exc.value.fix
    with pytest.raises(InputError) as exc:
        venue_registry.client_for("replay", None)
    assert "--file" in exc.value.fix


def test_the_cli_offers_exactly_the_registered_venues():
    from arena.cli import parser

    p = parser()
    sync_parser = p._subparsers._group_actions[0].choices["sync"]  # type: ignore[union-attr]
    venue_action = next(a for a in sync_parser._actions if a.dest == "venue")
    assert tuple(venue_action.choices) == venue_registry.VENUE_NAMES
