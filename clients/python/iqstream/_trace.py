"""The active OpenTelemetry context as W3C ``traceparent`` (and ``baggage``) headers on a request to IQ-Stream, so
an agent's trace continues through the relay. ``opentelemetry-api`` is optional (``pip install iqstream[otel]``):
without it, or without a span active, nothing is added. The ASGI middleware's detached agent task is an asyncio
task, which copies the request's context when it is made, so its publish carries the request's trace."""

from __future__ import annotations

import importlib
from typing import Any

_propagate: Any = None
try:
    _propagate = importlib.import_module("opentelemetry.propagate")
except ImportError:  # not installed: no propagation
    _propagate = None


def with_trace_context(headers: dict[str, str]) -> dict[str, str]:
    """Adds the active context's propagation headers (the configured propagators') to ``headers``; returns it."""
    if _propagate is not None:
        _propagate.inject(headers)
    return headers
