"""IQ-Stream for Python: publish AG-UI runs into IQ-Stream, read them, stop them.

- :class:`IqStreamClient` / :class:`RunPublisher`: the synchronous publisher (standard library, threads).
- :class:`AsyncClient`: the same for asyncio, plus ``publish_events(run_id, events)`` over an async iterable.
- :class:`iqstream.asgi.ResumableAGUI`: the ASGI middleware that makes any AG-UI endpoint resumable and
  stoppable, whichever framework serves it (``app.add_middleware(ResumableAGUI)``).

No dependencies outside the standard library (see the package README for why).
"""

from .aio import AsyncClient, AsyncRunPublisher, RunEvents
from .client import (
    IqStreamClient,
    IqStreamError,
    IqStreamHttpError,
    PublishResult,
    RunPublisher,
    RunStatus,
    RunStoppedError,
    event_line,
)

__version__ = "0.1.0"

__all__ = [
    "AsyncClient",
    "AsyncRunPublisher",
    "RunEvents",
    "IqStreamClient",
    "RunPublisher",
    "PublishResult",
    "RunStatus",
    "IqStreamError",
    "IqStreamHttpError",
    "RunStoppedError",
    "event_line",
    "__version__",
]
