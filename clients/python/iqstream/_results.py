"""What the client's calls come to: ``PublishResult`` and ``RunStatus``, and the errors they raise.

Defined here, below both the publishers and their repair step (``_repair``), so that each can use them without
importing the other; users import them from ``iqstream`` (or ``iqstream.client``, whose names they carry).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["IqStreamError", "IqStreamHttpError", "RunStoppedError", "PublishResult", "RunStatus"]


class IqStreamError(Exception):
    """A publish could not be completed (connection failures beyond the retries, bad replies)."""

    def __init__(self, message: str, run_id: Optional[str] = None):
        super().__init__(message)
        self.run_id = run_id


class IqStreamHttpError(IqStreamError):
    """The server refused a request: ``status`` >= 400 with its JSON ``error`` code and message.

    ``position`` is the 1-based index of the offending event within the refused request's body
    (0 if the error is not about one event); ``retry_after`` is the Retry-After of a 503, in seconds.
    """

    def __init__(self, run_id: Optional[str], status: int, code: Optional[str], message: Optional[str],
                 position: int = 0, retry_after: Optional[float] = None, last_event_id: Optional[int] = None):
        text = f"IQ-Stream answered {status}"
        if code:
            text += f" {code}"
        if run_id:
            text += f" for run '{run_id}'"
        if position:
            text += f" at event {position} of the request"
        if message:
            text += f": {message}"
        super().__init__(text, run_id)
        self.status = status
        self.code = code
        self.server_message = message
        self.position = position
        self.retry_after = retry_after
        self.last_event_id = last_event_id  # for a refused publish: the id of the run's last event


class RunStoppedError(IqStreamHttpError):
    """The run was stopped while it was being published: someone with the publish right sent
    ``DELETE /v1/runs/{runId}`` and the server answered the open request 409 ``run_stopped``.

    The run has ended (its readers got ``RUN_ERROR`` with code ``STOPPED``); abort the agent and send
    nothing more. ``last_event_id`` is the id of that ``RUN_ERROR``.
    """

    CODE = "run_stopped"


@dataclass(frozen=True)
class PublishResult:
    """The reply to a completed publish: ``200 {"runId", "lastEventId", "ended"}``."""

    run_id: str
    last_event_id: int
    ended: bool


@dataclass(frozen=True)
class RunStatus:
    """``GET /v1/runs/{runId}``."""

    run_id: str
    events: int
    bytes: int
    ended: bool
    subscribers: int
    age_ms: int
    publishing: bool = False  # a publish request is open on it now (False if the server does not say)
