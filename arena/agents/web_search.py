"""Web search for the `web_search` tool: one HTTP endpoint, configured per agent (`web_search_url`, key from the
environment variable `web_search_key_env`).

The request is ``POST {url}`` with JSON ``{"query": ..., "max_results": n}`` and ``Authorization: Bearer <key>``
(Tavily's /search takes this form; a small proxy can adapt any other engine). The reply is JSON with a list of
results under ``results`` (or ``data``/``items``), each read for ``title``, ``url`` and ``snippet`` (or
``content``/``description``). The key is never recorded: errors name the status, never the request.
"""

from __future__ import annotations

from typing import Any

import httpx

SNIPPET_CHARS = 600


class HttpWebSearch:
    """A `arena.agents.tools.WebSearcher` over an HTTP endpoint. `timeout_s` seconds per request."""

    def __init__(self, url: str, api_key: str, *, timeout_s: float = 20.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.url = url
        self._key = api_key
        self.timeout_s = timeout_s
        self._transport = transport

    def __repr__(self) -> str:
        return f"HttpWebSearch(url={self.url!r})"

    def search(self, query: str, max_results: int) -> list[dict[str, str]]:
        with httpx.Client(transport=self._transport, timeout=self.timeout_s) as client:
            response = client.post(self.url, json={"query": query, "max_results": max_results},
                                   headers={"Authorization": f"Bearer {self._key}", "Accept": "application/json"})
        if response.status_code != 200:
            raise RuntimeError(f"the search endpoint answered HTTP {response.status_code}")
        try:
            body = response.json()
        except ValueError:
            raise RuntimeError("the search endpoint answered with a body that is not JSON") from None
        return parse_results(body)[:max_results]


def parse_results(body: Any) -> list[dict[str, str]]:
    """title, url and snippet of each result in a search reply (entries that are not objects are skipped)."""
    items: Any = body
    if isinstance(body, dict):
        items = next((body[k] for k in ("results", "data", "items") if isinstance(body.get(k), list)), [])
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        snippet = next((item[k] for k in ("snippet", "content", "description") if isinstance(item.get(k), str)), "")
        out.append({"title": str(item.get("title") or "")[:300], "url": str(item.get("url") or "")[:500],
                    "snippet": snippet[:SNIPPET_CHARS]})
    return out


__all__ = ["HttpWebSearch", "parse_results"]
