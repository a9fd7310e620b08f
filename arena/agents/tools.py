"""Agent tools: the registry of tools a model may call (OpenAI-compatible function schemas) and their dispatch.

Owns which tools exist, what each takes and returns, the size cap on a result and the rule that web search runs
only in live rounds. The market tools read `AgentView.facts` (bound to the decision time, served by
`arena.usecases.market_facts`), so a tool can never show a fact recorded after the decision; this module must not
import the store, the services or httpx (web search arrives as an injected `WebSearcher`).

What is served: `price_history` — the market's recorded price snapshots (YES price, best bid/ask where the venue
gave them); `order_book` — the best bid and ask of the latest snapshot (the arena stores only top of book with
each price snapshot, not the CLOB depth); `related_markets` — the other markets of its event/group
(`group_id`) with their prices; `resolution_criteria` — the question, its description (the resolution rules),
outcomes and close time; `web_search` — results from a configured HTTP search endpoint, live rounds only;
`corpus_search` — documents of the seat's dated corpus (`arena.agents.corpus`) dated strictly before the decision
time (`view.as_of`, never the wall clock), ranked by SQLite FTS5's bm25.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

from arena.agents.corpus import MAX_QUERY_CHARS, MAX_RESULTS as MAX_CORPUS_RESULTS, Corpus
from arena.agents.view import AgentView

PRICE_HISTORY = "price_history"
ORDER_BOOK = "order_book"
RELATED_MARKETS = "related_markets"
RESOLUTION_CRITERIA = "resolution_criteria"
WEB_SEARCH = "web_search"
CORPUS_SEARCH = "corpus_search"
TOOL_NAMES = (PRICE_HISTORY, ORDER_BOOK, RELATED_MARKETS, RESOLUTION_CRITERIA, WEB_SEARCH, CORPUS_SEARCH)

DEFAULT_RESULT_CHARS = 8000  # characters of one tool result sent back and stored
MAX_HISTORY_POINTS = 200
MAX_SEARCH_RESULTS = 10
MAX_CALLS_PER_ROUND = 8  # tool calls answered in one model reply; further ones get an error result
ARGUMENT_CHARS = 2000  # characters of a call's arguments kept in the record
# Web search sees the world as it is now, so it may only run when the decision is being made now: a decision
# time further than this from the wall clock is a replay or a simulation (searching would leak the future).
WEB_SEARCH_MAX_LAG = timedelta(minutes=30)

_MARKET_ID = {"market_id": {"type": "string", "description": "the market id as listed in the prompt"}}

_SCHEMAS: Mapping[str, dict[str, Any]] = {
    PRICE_HISTORY: {
        "description": "The market's recorded price history up to now (the decision time): YES price, and the "
                       "best bid/ask where the venue reported them, oldest first.",
        "parameters": {"type": "object", "properties": {
            **_MARKET_ID,
            "max_points": {"type": "integer", "minimum": 1, "maximum": MAX_HISTORY_POINTS,
                           "description": f"newest points to return (default 50, at most {MAX_HISTORY_POINTS})"}},
            "required": ["market_id"], "additionalProperties": False},
    },
    ORDER_BOOK: {
        "description": "The market's best bid and ask (YES) in its latest recorded snapshot, with the spread. "
                       "Only the top of the book is recorded, not its depth.",
        "parameters": {"type": "object", "properties": dict(_MARKET_ID), "required": ["market_id"],
                       "additionalProperties": False},
    },
    RELATED_MARKETS: {
        "description": "The other markets of the same event or group (e.g. the other candidates of one race), "
                       "with their latest YES prices.",
        "parameters": {"type": "object", "properties": dict(_MARKET_ID), "required": ["market_id"],
                       "additionalProperties": False},
    },
    RESOLUTION_CRITERIA: {
        "description": "The market's question, full description (its resolution rules), outcomes and close time.",
        "parameters": {"type": "object", "properties": dict(_MARKET_ID), "required": ["market_id"],
                       "additionalProperties": False},
    },
    WEB_SEARCH: {
        "description": "Search the web; returns titles, URLs and snippets.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "the search query"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_RESULTS}},
            "required": ["query"], "additionalProperties": False},
    },
    CORPUS_SEARCH: {
        "description": "Search a fixed archive of dated documents (news, reports) for ones published before now "
                       "(the decision time); returns date, title, URL and an excerpt of each, best match first.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "maxLength": MAX_QUERY_CHARS,
                      "description": "words to look for (a plain query; no operators)"},
            "max_results": {"type": "integer", "minimum": 1, "maximum": MAX_CORPUS_RESULTS,
                            "description": f"documents to return (default 5, at most {MAX_CORPUS_RESULTS})"}},
            "required": ["query"], "additionalProperties": False},
    },
}


def tool_schema(name: str) -> dict[str, Any]:
    """The OpenAI-compatible `tools` entry of one tool."""
    spec = _SCHEMAS[name]
    return {"type": "function", "function": {"name": name, "description": spec["description"],
                                             "parameters": spec["parameters"]}}


class WebSearcher(Protocol):
    """A web search endpoint: results as dicts with title, url and snippet (strings)."""

    def search(self, query: str, max_results: int) -> list[dict[str, str]]: ...


class ToolError(Exception):
    """A tool call that cannot be answered: bad arguments, an unknown market, a refused tool. The message goes
    back to the model as the tool's result."""


@dataclass(frozen=True)
class ToolCallRecord:
    """One tool call a model asked for and what it was answered: `arguments` as the model sent them (JSON text,
    cut to ARGUMENT_CHARS), `result` the text sent back (cut to the agent's `tool_result_chars`), `error` why the
    call failed ("" when it did not), `truncated` whether the result was cut."""

    id: str
    name: str
    arguments: str
    result: str
    error: str = ""
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments, "result": self.result,
                "error": self.error, "truncated": self.truncated}


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


class ToolBox:
    """The tools one agent may call. `names` ⊆ TOOL_NAMES; `result_chars` caps each result; `web_search` is
    given only to agents of live rounds (None: web search is off); `corpus` is the seat's loaded dated corpus
    (None: corpus_search answers that there is none); `wall_clock` (UTC now) is injected for tests.
    """

    def __init__(self, names: Sequence[str], *, result_chars: int = DEFAULT_RESULT_CHARS,
                 web_search: WebSearcher | None = None, corpus: Corpus | None = None,
                 wall_clock: Callable[[], datetime] = _utc_now, max_lag: timedelta = WEB_SEARCH_MAX_LAG) -> None:
        unknown = [n for n in names if n not in TOOL_NAMES]
        if unknown:
            raise ValueError(f"unknown tool {unknown[0]!r} (known: {', '.join(TOOL_NAMES)})")
        self.names = tuple(names)
        self.result_chars = result_chars
        self.web_search = web_search
        self.corpus = corpus
        self._wall_clock = wall_clock
        self.max_lag = max_lag

    def web_search_refusal(self, view: AgentView) -> str:
        """Why web search may not run for this decision; "" when it may."""
        if WEB_SEARCH not in self.names:
            return "web_search is not one of this agent's tools"
        if self.web_search is None:
            return "web_search is disabled here (it runs only in live decision rounds, never in replays or simulations)"
        lag = abs(self._wall_clock() - view.as_of)
        if lag > self.max_lag:
            return (f"web_search is disabled: the decision time {view.as_of:%Y-%m-%d %H:%M} UTC is not now (a replay "
                    f"or simulation), and searching today's web would leak the future")
        return ""

    def offered(self, view: AgentView) -> tuple[str, ...]:
        """The tools offered for this decision (web search only when it may run, corpus search only with a
        corpus)."""
        return tuple(n for n in self.names if (n != WEB_SEARCH or not self.web_search_refusal(view))
                     and (n != CORPUS_SEARCH or self.corpus is not None))

    def schemas(self, view: AgentView) -> list[dict[str, Any]]:
        return [tool_schema(n) for n in self.offered(view)]

    def run(self, view: AgentView, call_id: str, name: str, arguments: str) -> ToolCallRecord:
        """Answer one tool call; never raises (a failure is an error result the model reads)."""
        args_kept = arguments[:ARGUMENT_CHARS]
        try:
            result = self._dispatch(view, name, arguments)
            error = ""
        except ToolError as exc:
            error = str(exc)
            result = {"error": error}
        except LookupError as exc:  # an unknown market, from the facts
            error = str(exc.args[0]) if exc.args else "not found"
            result = {"error": error}
        text = json.dumps(result, ensure_ascii=False, separators=(",", ":"), default=str)
        truncated = len(text) > self.result_chars
        if truncated:
            note = f" …[cut: {len(text)} characters, limit {self.result_chars}]"
            text = text[:max(0, self.result_chars - len(note))] + note
        return ToolCallRecord(call_id, name, args_kept, text, error, truncated)

    def refuse(self, call_id: str, name: str, arguments: str, why: str) -> ToolCallRecord:
        """A call answered with an error without running it (e.g. beyond MAX_CALLS_PER_ROUND)."""
        text = json.dumps({"error": why}, ensure_ascii=False)
        return ToolCallRecord(call_id, name, arguments[:ARGUMENT_CHARS], text, why)

    def _dispatch(self, view: AgentView, name: str, arguments: str) -> dict[str, Any]:
        if name not in self.names:
            raise ToolError(f"no tool named {name!r}; the tools are: {', '.join(self.offered(view))}")
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            raise ToolError("the arguments are not valid JSON") from None
        if not isinstance(args, dict):
            raise ToolError("the arguments must be a JSON object")
        if name == WEB_SEARCH:
            refusal = self.web_search_refusal(view)
            if refusal:
                raise ToolError(refusal)
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                raise ToolError("web_search needs a non-empty string `query`")
            n = _bounded_int(args, "max_results", 5, 1, MAX_SEARCH_RESULTS)
            try:
                results = self.web_search.search(query.strip()[:500], n)  # type: ignore[union-attr]
            except Exception as exc:  # the endpoint's failure is the call's result, not the decision's
                raise ToolError(f"web search failed: {type(exc).__name__}: {exc}") from None
            return {"query": query, "results": results[:n]}
        if name == CORPUS_SEARCH:
            return self._corpus_search(view, args)
        facts = view.facts
        if facts is None:
            raise ToolError("market facts are not available for this decision")
        market_id = args.get("market_id")
        if not isinstance(market_id, str) or not market_id:
            raise ToolError(f"{name} needs a string `market_id` (an id from the prompt)")
        if name == PRICE_HISTORY:
            return facts.price_history(market_id, _bounded_int(args, "max_points", 50, 1, MAX_HISTORY_POINTS))
        if name == ORDER_BOOK:
            return facts.order_book(market_id)
        if name == RELATED_MARKETS:
            return facts.related_markets(market_id)
        return facts.resolution_criteria(market_id)

    def _corpus_search(self, view: AgentView, args: Mapping[str, Any]) -> dict[str, Any]:
        """Documents dated strictly before the decision time `view.as_of` (never the wall clock)."""
        if self.corpus is None:
            raise ToolError("corpus_search has no corpus here (the seat's `corpus` file was not loaded)")
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ToolError("corpus_search needs a non-empty string `query`")
        n = _bounded_int(args, "max_results", 5, 1, MAX_CORPUS_RESULTS)
        query = query.strip()[:MAX_QUERY_CHARS]
        results = self.corpus.search(query, view.as_of, n)
        # `corpus`: the first 16 hex digits of the file's SHA-256, so a stored call names the corpus that answered
        return {"query": query, "before": view.as_of.isoformat(), "corpus": self.corpus.sha256[:16],
                "results": results}


def _bounded_int(args: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = args.get(key, default)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ToolError(f"`{key}` must be an integer from {low} to {high}")
    return min(max(value, low), high)


__all__ = ["CORPUS_SEARCH", "ORDER_BOOK", "PRICE_HISTORY", "RELATED_MARKETS", "RESOLUTION_CRITERIA", "TOOL_NAMES",
           "WEB_SEARCH", "ToolBox", "ToolCallRecord", "ToolError", "WebSearcher", "tool_schema"]
