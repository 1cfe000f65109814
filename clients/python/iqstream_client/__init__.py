"""The name IQ-Stream's Python publisher had before it became the ``iqstream`` package.

``from iqstream_client import IqStreamClient`` keeps working: this module re-exports the synchronous client
of :mod:`iqstream.client` unchanged. New code imports ``iqstream``.
"""

from iqstream.client import (
    IqStreamClient,
    IqStreamError,
    IqStreamHttpError,
    PublishResult,
    RunPublisher,
    RunStatus,
    RunStoppedError,
    event_line,
)

__all__ = [
    "IqStreamClient",
    "RunPublisher",
    "PublishResult",
    "RunStatus",
    "IqStreamError",
    "IqStreamHttpError",
    "RunStoppedError",
    "event_line",
]
