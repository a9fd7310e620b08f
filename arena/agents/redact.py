"""Keeping credentials out of what the arena stores and shows: a seat's own API key, and anything in a model's
text that looks like a bearer token or a provider key, replaced by a marker before it is recorded.

A model may echo its key (a prompt-injection, a proxy that reflects headers, a confused reply); whatever it
writes becomes a decision's reasoning, a bet's rationale, a tool call's arguments or an error, which the site,
the exports and the backups carry. Every such text passes through `scrub` first."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from arena.domain.decision import Decision, ModelCall

REDACTED = "[redacted]"

# What looks like a credential whoever's it is: an Authorization value, the common provider key prefixes
# (OpenAI/OpenRouter/Anthropic "sk-…", Google "AIza…", GitHub "ghp_…", Slack "xox…-…", Hugging Face "hf_…"),
# and a JSON Web Token.
TOKEN_LIKE = re.compile(
    r"(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
    r"|\bAIza[0-9A-Za-z_-]{30,}"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\bhf_[A-Za-z0-9]{30,}"
    r"|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}")


def scrub(text: str, *secrets: str) -> str:
    """`text` with every secret in `secrets` (the seat's key; empty ones ignored) and every token-like string
    replaced by REDACTED."""
    if not text:
        return text
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return TOKEN_LIKE.sub(REDACTED, text)


def scrub_value(value: Any, *secrets: str) -> Any:
    """`scrub` applied to every string inside a JSON-like value (mappings, lists, tuples), keys included."""
    if isinstance(value, str):
        return scrub(value, *secrets)
    if isinstance(value, Mapping):
        return {scrub(str(k), *secrets) if isinstance(k, str) else k: scrub_value(v, *secrets)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub_value(v, *secrets) for v in value)
    return value




def scrub_decision(decision: "Decision", *secrets: str) -> "Decision":
    """The decision with every text a model wrote scrubbed: its reasoning and error, each action's rationale,
    and each model call's prompt, reply, parsed object, error, reasoning and tool calls."""
    from dataclasses import replace

    def call(c: "ModelCall") -> "ModelCall":
        return replace(c, prompt=scrub(c.prompt, *secrets), raw_response=scrub(c.raw_response, *secrets),
                       parsed=scrub_value(dict(c.parsed), *secrets) if c.parsed is not None else None,
                       error=scrub(c.error, *secrets),
                       tool_calls=tuple(scrub_value(dict(t), *secrets) for t in c.tool_calls),
                       reasoning_content=scrub(c.reasoning_content, *secrets) if c.reasoning_content else
                       c.reasoning_content,
                       upstream_model=scrub(c.upstream_model, *secrets) if c.upstream_model else c.upstream_model,
                       upstream_base=scrub(c.upstream_base, *secrets) if c.upstream_base else c.upstream_base)

    return replace(decision, reasoning=scrub(decision.reasoning, *secrets), error=scrub(decision.error, *secrets),
                   actions=tuple(replace(a, rationale=scrub(a.rationale, *secrets)) for a in decision.actions),
                   calls=tuple(call(c) for c in decision.calls))


__all__ = ["REDACTED", "TOKEN_LIKE", "scrub", "scrub_decision", "scrub_value"]
