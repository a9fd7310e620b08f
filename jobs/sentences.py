"""How a job's outcome reads: one plain sentence per job run, for `arena jobs run`, the scheduler's log and
`arena worker` — the counts in words, never a Python dict."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _n(count: Any, one: str, many: str | None = None) -> str:
    """'1 market', '3 markets' (`many` for irregular plurals)."""
    try:
        k = int(count)
    except (TypeError, ValueError):
        return f"{count} {many or one + 's'}"
    return f"{k} {one if k == 1 else (many or one + 's')}"


def _mark(c: Mapping[str, Any]) -> str:
    unpriced = f", {c['unpriced']} of them unpriced (valued at cost)" if c.get("unpriced") else ""
    return (f"marked {_n(c.get('agents', 0), 'portfolio')} to market ({_n(c.get('positions', 0), 'open position')}"
            f"{unpriced}); {_n(c.get('snapshots', 0), 'snapshot')} written")


def _settle(c: Mapping[str, Any]) -> str:
    done = c.get("completed_cohorts") or []
    done_text = (f"; completed {', '.join(map(str, done))}" if isinstance(done, (list, tuple)) and done
                 else "; no cohort completed")
    return (f"settled {_n(c.get('settled', 0), 'position')} and refunded {c.get('refunded', 0)} (voided) in "
            f"{_n(c.get('markets', 0), 'resolved market')}, reversed {c.get('reversed', 0)}{done_text}")


def _sync(c: Mapping[str, Any]) -> str:
    return "; ".join(f"{venue}: {line}" for venue, line in c.items()) or "no venue to sync"


def _cohort_start(c: Mapping[str, Any]) -> str:
    what = "opened" if c.get("created") else "was already open"
    return f"{c.get('cohort', 'the cohort')} {what} on a universe of {_n(c.get('universe', 0), 'market')}"


def _decision_round(c: Mapping[str, Any]) -> str:
    parts = []
    for cohort, statuses in c.items():
        if cohort == "pending" or not isinstance(statuses, Mapping):
            continue
        inner = ", ".join(f"{n} {status}" for status, n in sorted(statuses.items())) or "nothing to do"
        parts.append(f"{cohort}: {inner}")
    text = "; ".join(parts) or "no cohort is in its decision window"
    pending = c.get("pending") or 0
    return text + (f"; {_n(pending, 'decision')} left to retry" if pending else "")


def _backup(c: Mapping[str, Any]) -> str:
    if c.get("status") == "skipped":
        return f"no backup: {c.get('reason', '')}"
    return f"wrote {c.get('file')} ({_n(c.get('bytes', 0), 'byte')}); keeping the newest {c.get('kept')}"


def _compact(c: Mapping[str, Any]) -> str:
    return (f"deleted {_n(c.get('deleted', 0), 'old snapshot')}, kept {c.get('kept_used', 0)} that a fill or "
            f"score used; {_n(c.get('partitions_created', 0), 'partition')} created")


def _render(c: Mapping[str, Any]) -> str:
    if not c.get("rendered"):
        return f"nothing rendered ({c.get('reason', 'no site directory')})"
    pages = c.get("pages")
    return f"rendered {_n(pages, 'page') if pages is not None else 'the site'} into {c.get('dir')}"


_SENTENCES = {"mark": _mark, "settle": _settle, "sync": _sync, "cohort_start": _cohort_start,
              "decision_round": _decision_round, "backup": _backup, "compact": _compact, "render": _render}


def counts_sentence(job: str, counts: Any) -> str:
    """The counts a run of `job` returned, in words ("" when there are none)."""
    if not counts:
        return ""
    if not isinstance(counts, Mapping):
        return str(counts)
    say = _SENTENCES.get(job)
    if say is not None:
        try:
            return say(counts)
        except (KeyError, TypeError, ValueError, AttributeError):
            pass
    return ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in counts.items())


_STATUS = {"ok": "done", "skipped": "skipped: this period already ran (or is running elsewhere)",
           "incomplete": "done, with work left for its next tick", "failed": "failed",
           "lost": "lost its claim (another process took the run over)"}


def outcome_sentence(outcome: Any) -> str:
    """'mark (period 2026-01-05T00:00:00+00:00): done — marked 12 portfolios …' for a JobOutcome."""
    status = getattr(outcome, "status", "done")
    what = counts_sentence(outcome.job, getattr(outcome, "counts", None)) if status != "skipped" else ""
    error = getattr(outcome, "error", "") or ""
    line = f"{outcome.job} (period {outcome.period_key}): {_STATUS.get(status, status)}"
    if what:
        line += f" — {what}"
    if error:
        line += f" — {error.splitlines()[0]}"
    return line


__all__ = ["counts_sentence", "outcome_sentence"]
