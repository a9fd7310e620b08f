"""Manifold parsers on the real samples: market kinds, settlement from `resolution`, bets → history."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest

from arena.domain.market import NO, YES, MarketKind, MarketStatus, ResolutionKind
from arena.errors import ParseError
from arena.money import Price
from arena.venues import UnsupportedMarket
from arena.venues import manifold_parse as mp

M = "manifold/"
LISTING_FETCHED = datetime(2026, 1, 31, 18, 0, tzinfo=timezone.utc)  # when markets_list.json was captured


@pytest.fixture(scope="module")
def listing(sample):
    page = mp.parse_manifold_markets(sample(M + "markets_list.json"), fetched_at=LISTING_FETCHED)
    return page, {vm.native_id: vm for vm in page.markets}


def test_listing_parses_supported_and_skips_the_rest(listing):
    page, by_id = listing
    assert page.rejected == ()
    assert {k: e.data["kind"] for k, e in page.skipped} == {
        "9EstERAcPA": "MULTI_NUMERIC", "I6UA98QESc": "DATE", "PAz52592cn": "POLL", "lZ9pCsU8nC": "STONK"}
    assert all(isinstance(e, UnsupportedMarket) and isinstance(e, ParseError) for _, e in page.skipped)
    assert len(by_id) == 9
    assert page.last_id == "lZ9pCsU8nC"


def test_open_binary(listing):
    vm = listing[1]["l6pOZSLngN"]
    assert vm.market.id == "manifold:l6pOZSLngN" and vm.market.kind is MarketKind.BINARY
    assert vm.market.status is MarketStatus.OPEN and vm.tradable
    assert vm.quote.yes_price() == Price.of("0.545930")
    assert vm.quote.observed_at == datetime.fromtimestamp(1769880977.059, tz=timezone.utc)
    assert vm.market.close_time == datetime.fromtimestamp(1770019140, tz=timezone.utc)
    assert vm.resolution is None and vm.pending_reason == mp.OPEN
    assert vm.token == "MANA"
    assert vm.market.url == "https://manifold.markets/StCredZero/fairly-odd-or-even-SUuNsdy6zQ"


def test_yes_settles_from_resolution_not_probability(listing):
    vm = listing[1]["ygtnI8ZQ5n"]
    assert vm.quote.yes_price() == Price.of("0.78")  # last pool probability, not the payout
    assert vm.resolution.kind is ResolutionKind.WINNER and vm.resolution.payout(YES) == Price.of(1)
    assert vm.resolution.resolved_at == datetime.fromtimestamp(1769881682.350, tz=timezone.utc)
    assert vm.market.status is MarketStatus.RESOLVED and not vm.tradable


def test_no_resolution_despite_high_probability(listing):
    vm = listing[1]["QlQRu9SQSh"]
    assert vm.quote.yes_price() > Price.of("0.6")
    assert vm.resolution.payout(NO) == Price.of(1) and vm.resolution.payout(YES) == Price.of(0)


def test_mkt_pays_resolution_probability(listing):
    vm = listing[1]["CdOdtZl9UI"]
    assert vm.resolution.kind is ResolutionKind.PROBABILISTIC
    assert vm.resolution.payout(YES) == Price.of("0.47") and vm.resolution.payout(NO) == Price.of("0.53")


def test_cancel_is_void(listing):
    vm = listing[1]["Qsys20dP9n"]
    assert vm.resolution.kind is ResolutionKind.VOID and vm.resolution.payout(YES) is None


def test_multiple_choice_listing_rows(listing):
    by_id = listing[1]
    open_mc = by_id["pQy680tq8U"]
    assert open_mc.market.kind is MarketKind.MULTI and open_mc.market.outcomes == ()
    assert not open_mc.tradable and open_mc.skip_reason == "answers_missing"
    answer_won = by_id["NRq2U6ARcn"]
    assert answer_won.resolution.kind is ResolutionKind.WINNER
    assert answer_won.resolution.payout("sqpZEU2NdL") == Price.of(1)
    assert answer_won.resolution.payout("someOtherAnswer") == Price.of(0)
    mkt = by_id["tOULLhnZPC"]
    assert mkt.resolution is None and mkt.pending_reason == mp.MC_MKT_WEIGHTS_UNAVAILABLE
    assert mkt.market.status is MarketStatus.CLOSED
    assert by_id["yCIpRQCCpg"].resolution.kind is ResolutionKind.VOID


def test_full_binary_resolved_no(sample):
    vm = mp.parse_manifold_market(sample(M + "market_full_binary_resolved_no.official_doc_2023.json"),
                                  fetched_at=LISTING_FETCHED)
    assert vm.resolution.payout(NO) == Price.of(1)
    assert vm.quote.yes_price() == Price.of("0.048039")
    assert vm.resolution_probability == Price.of("0.05")
    assert vm.market.description.startswith("https://www.opindia.com")
    assert vm.market.url.startswith("https://manifold.markets/frostmourn/")


def test_full_multiple_choice_answers_become_outcomes(sample):
    raw = sample(M + "market_full_multiple_choice.RECONSTRUCTED.json")
    vm = mp.parse_manifold_market(raw, fetched_at=datetime(2025, 9, 1, tzinfo=timezone.utc))
    assert vm.market.kind is MarketKind.MULTI
    assert vm.market.outcomes == ("Ncus9Qtty2", "CAqyQ8AOSn", "Pc86OAUEsn", "dn0gpUIzpq", "uq5uZd5O0A", "ACNE8CLyyS")
    assert vm.market.outcome_labels == ("a", "b", "c", "d", "e", "Other")
    assert vm.quote.price("Ncus9Qtty2") == Price.of("0.166667")
    assert vm.answers_sum_to_one is True and vm.answers[-1].is_other
    assert vm.tradable and vm.market.status is MarketStatus.OPEN
    # after closeTime it is closed and not tradable, but still unresolved
    later = mp.parse_manifold_market(raw, fetched_at=datetime(2026, 2, 1, tzinfo=timezone.utc))
    assert later.market.status is MarketStatus.CLOSED and later.pending_reason == mp.CLOSED_UNRESOLVED
    assert not later.tradable


def _resolved_mc(sample, resolution, answer_updates=None):
    raw = copy.deepcopy(sample(M + "market_full_multiple_choice.RECONSTRUCTED.json"))
    raw.update(isResolved=True, resolution=resolution, resolutionTime=1767254340000)
    for i, upd in (answer_updates or {}).items():
        raw["answers"][i].update(upd)
    return mp.parse_manifold_market(raw, fetched_at=datetime(2026, 2, 1, tzinfo=timezone.utc))


def test_mc_answer_id_resolution(sample):
    vm = _resolved_mc(sample, "CAqyQ8AOSn")
    assert vm.resolution.payouts["CAqyQ8AOSn"] == Price.of(1)
    assert vm.resolution.payouts["Ncus9Qtty2"] == Price.of(0)
    assert len(vm.resolution.payouts) == 6
    unknown = _resolved_mc(sample, "notAnAnswer")
    assert unknown.resolution is None and unknown.pending_reason == mp.UNKNOWN_ANSWER


def test_mc_mkt_with_per_answer_resolutions(sample):
    updates = {i: {"resolution": "NO"} for i in range(6)}
    updates[0] = {"resolution": "MKT", "resolutionProbability": 0.7}
    updates[1] = {"resolution": "MKT", "resolutionProbability": 0.3}
    vm = _resolved_mc(sample, "MKT", updates)
    assert vm.resolution.kind is ResolutionKind.PROBABILISTIC
    assert vm.resolution.payouts["Ncus9Qtty2"] == Price.of("0.7")
    assert vm.resolution.payouts["ACNE8CLyyS"] == Price.of(0)
    partial = _resolved_mc(sample, "MKT", {0: {"resolution": "YES"}})
    assert partial.resolution is None and partial.pending_reason == mp.MC_MKT_WEIGHTS_UNAVAILABLE
    cancelled = _resolved_mc(sample, "MKT", {i: {"resolution": "CANCEL"} for i in range(6)})
    assert cancelled.pending_reason == mp.MC_ANSWER_CANCELLED


def test_choose_multiple_is_pending(sample):
    vm = _resolved_mc(sample, "CHOOSE_MULTIPLE")
    assert vm.resolution is None and vm.pending_reason == mp.CHOOSE_MULTIPLE


def test_unresolved_market_ignores_a_stale_resolution_field(listing, sample):
    raw = next(m for m in sample(M + "markets_list.json") if m["id"] == "ygtnI8ZQ5n")
    raw = {**raw, "isResolved": False}  # unresolved by a moderator
    vm = mp.parse_manifold_market(raw, fetched_at=LISTING_FETCHED)
    assert vm.resolution is None


def test_binary_mkt_without_probability_and_missing_resolution(sample):
    raw = next(m for m in sample(M + "markets_list.json") if m["id"] == "CdOdtZl9UI")
    no_prob = {k: v for k, v in raw.items() if k != "resolutionProbability"}
    assert mp.parse_manifold_market(no_prob, fetched_at=LISTING_FETCHED).pending_reason == mp.MKT_WITHOUT_PROBABILITY
    no_res = {k: v for k, v in raw.items() if k != "resolution"}
    vm = mp.parse_manifold_market(no_res, fetched_at=LISTING_FETCHED)
    assert vm.resolution is None and vm.pending_reason == mp.RESOLVED_WITHOUT_RESOLUTION


def test_poll_is_unsupported_not_settled(sample):
    poll = next(m for m in sample(M + "markets_list.json") if m["outcomeType"] == "POLL")
    assert poll["isResolved"] is True and "resolution" not in poll
    with pytest.raises(UnsupportedMarket) as info:
        mp.parse_manifold_market(poll, fetched_at=LISTING_FETCHED)
    assert info.value.field == "outcomeType"


def test_legacy_free_response_is_unsupported(sample):
    with pytest.raises(UnsupportedMarket):
        mp.parse_manifold_market(sample(M + "market_full_free_response_dpm.official_doc.json"),
                                 fetched_at=LISTING_FETCHED)


@pytest.mark.parametrize("mutate, fld", [
    (lambda m: m.pop("id"), "id"),
    (lambda m: m.update(probability=1.7), "probability"),
    (lambda m: m.update(closeTime="soon"), "closeTime"),
    (lambda m: m.update(isResolved="no"), "isResolved"),
    (lambda m: m.pop("outcomeType"), "outcomeType"),
    (lambda m: m.update(question=None), "question"),
])
def test_malformed_markets(sample, mutate, fld):
    raw = copy.deepcopy(sample(M + "markets_list.json")[0])
    mutate(raw)
    with pytest.raises(ParseError) as info:
        mp.parse_manifold_market(raw, fetched_at=LISTING_FETCHED)
    assert info.value.field == fld


def test_malformed_answer_names_its_path(sample):
    raw = copy.deepcopy(sample(M + "market_full_multiple_choice.RECONSTRUCTED.json"))
    raw["answers"][2]["probability"] = "high"
    with pytest.raises(ParseError) as info:
        mp.parse_manifold_market(raw, fetched_at=LISTING_FETCHED)
    assert info.value.field == "answers[2].probability"


# ------------------------------------------------------------------------------------------- bets & probs


def test_bets_history_skips_unfilled_limit_orders(sample):
    bets = mp.parse_bets(sample(M + "bets.official_doc.json"))
    assert [b.is_filled for b in bets] == [False, True]
    points = mp.probability_history(bets)
    assert points == [(datetime.fromtimestamp(1659482757.271, tz=timezone.utc), Price.of("0.573075"))]
    start = datetime.fromtimestamp(1659482000, tz=timezone.utc)
    with_start = mp.probability_history(bets, created_at=start)
    assert with_start[0] == (start, Price.of("0.530436")) and len(with_start) == 2


def test_mc_bets_filtered_by_answer(sample):
    raw = sample(M + "multi_bet_response_mc.official_doc_2025.json")
    bets = mp.parse_bets(raw)
    assert {b.id for b in bets} == {"zl2cULd0yq5N", "hAnEpO2dOspd"}  # betId accepted as the id
    a = mp.probability_history(raw, answer_id="Ncus9Qtty2")
    b = mp.probability_history(raw, answer_id="CAqyQ8AOSn")
    assert len(a) == 1 and len(b) == 1 and a[0].price == Price.of("0.272115")
    assert mp.probability_history(raw, answer_id="nope") == []


def test_bets_dedupe_sort_and_skip_cancelled_and_redemptions():
    def bet(i, t, after, **kw):
        return {"id": i, "contractId": "c", "createdTime": t, "probBefore": 0.5, "probAfter": after,
                "amount": 10, "outcome": "YES", **kw}

    raw = [bet("b2", 2000, 0.6), bet("b1", 1000, 0.55), bet("b2", 2000, 0.6),
           bet("b3", 3000, 0.9, isCancelled=True), bet("b4", 4000, 0.1, isRedemption=True),
           bet("b5", 5000, 0.65, isFilled=True)]
    points = mp.probability_history(raw)
    assert [p.price for p in points] == [Price.of("0.55"), Price.of("0.6"), Price.of("0.65")]
    with pytest.raises(ParseError) as info:
        mp.parse_bets([bet("x", 1, 0.5), {"id": "y", "createdTime": 2, "probBefore": 0.5}])
    assert info.value.field == "bets[1].probAfter"


def test_prob_endpoints(sample):
    assert mp.parse_market_prob(sample(M + "market_prob_binary.official_doc.json")) == Price.of("0.62")
    multi = mp.parse_market_prob(sample(M + "market_prob_multi.official_doc.json"))
    assert multi == {"PI806hsqn2": Price.of("0.670157"), "tO5sp2SAlA": Price.of("0.329843")}
    batch = mp.parse_market_probs(sample(M + "market_probs_batch.official_doc.json"))
    assert batch["9t61v9e7x4"] == Price.of("0.62") and batch["ZNlNdzz690"]["answer2"] == Price.of("0.33")


def test_error_bodies(sample):
    assert mp.parse_error_message(sample(M + "error_404.RECONSTRUCTED.json")) == "Contract not found"
    text = mp.parse_error_message(sample(M + "error_400_validation.RECONSTRUCTED.json"))
    assert text.startswith("Error validating request.") and "'foo'" in text
    with pytest.raises(ParseError):
        mp.parse_manifold_market(sample(M + "error_404.RECONSTRUCTED.json"), fetched_at=LISTING_FETCHED)
