"""What the client's calls come to: ``PublishResult`` and ``RunStatus``, the errors they raise, and how an answer
(``Answer``: status, Retry-After, body) becomes one of them (``http_error``, ``parse_result``, ``published``,
``status_of``, ``check_deleted``, ``stop_in``), without I/O and the same for the synchronous and the asyncio client
(with ``_requests``, what they send, and ``_repair``, what a broken publish does next).

Defined here, below both the publishers and their repair step (``_repair``), so that each can use them without
importing the other; users import them from ``iqstream`` (or ``iqstream.client``, whose names they carry).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import NamedTuple, Optional

__all__ = ["IqStreamError", "IqStreamHttpError", "RunStoppedError", "PublishResult", "RunStatus", "Answer"]


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


class Answer(NamedTuple):
    """An HTTP answer as the clients read it: the status, the Retry-After header (None without one), the body."""

    status: int
    retry_after: Optional[str]
    body: bytes


def http_error(run_id: Optional[str], status: int, body: bytes, retry_after: Optional[str]) -> IqStreamHttpError:
    """The error for a refusal: its JSON ``error``, ``message``, ``position`` and ``lastEventId``, and Retry-After."""
    code = message = last_event_id = None
    position = 0
    try:
        doc = json.loads(body.decode("utf-8"))
        if isinstance(doc, dict):
            code = doc.get("error")
            message = doc.get("message")
            position = int(doc.get("position") or 0)
            if isinstance(doc.get("lastEventId"), int):
                last_event_id = doc["lastEventId"]
    except (ValueError, UnicodeDecodeError):
        message = body[:200].decode("utf-8", "replace") or None
    after = None
    if retry_after and retry_after.strip().isdigit():
        after = float(retry_after.strip())
    kind = RunStoppedError if status == 409 and code == RunStoppedError.CODE else IqStreamHttpError
    return kind(run_id, status, code, message, position, after, last_event_id)


def parse_result(run_id: str, body: bytes) -> PublishResult:
    """A completed publish's reply, ``{"runId", "lastEventId", "ended"}``."""
    try:
        doc = json.loads(body.decode("utf-8"))
        return PublishResult(doc.get("runId", run_id), int(doc["lastEventId"]), bool(doc["ended"]))
    except (ValueError, KeyError, TypeError) as e:
        raise IqStreamError(f"unreadable publish reply: {body[:200]!r}", run_id) from e


def published(run_id: str, status: int, retry_after: Optional[str], body: bytes) -> PublishResult:
    """A whole publish's answer: 200 with its result, the refusal raised for anything else."""
    if status != 200:
        raise http_error(run_id, status, body, retry_after)
    return parse_result(run_id, body)


def status_of(run_id: str, status: int, retry_after: Optional[str], body: bytes) -> Optional[RunStatus]:
    """``GET /v1/runs/{runId}``'s answer: its status, None for 404, the refusal raised for anything else."""
    if status == 404:
        return None
    if status != 200:
        raise http_error(run_id, status, body, retry_after)
    try:
        doc = json.loads(body.decode("utf-8"))
        return RunStatus(doc.get("runId", run_id), int(doc.get("events", 0)), int(doc.get("bytes", 0)),
                         bool(doc.get("ended")), int(doc.get("subscribers", 0)), int(doc.get("ageMs", 0)),
                         bool(doc.get("publishing", False)))
    except (ValueError, TypeError, AttributeError) as e:
        raise IqStreamError(f"unreadable run status: {body[:200]!r}", run_id) from e


def check_deleted(run_id: str, status: int, retry_after: Optional[str], body: bytes) -> None:
    """``DELETE /v1/runs/{runId}``'s answer: 200 (stopped) or 204 (dropped), the refusal raised for anything else."""
    if status not in (200, 204):
        raise http_error(run_id, status, body, retry_after)


def stop_in(run_id: str, answer: Answer) -> Optional[RunStoppedError]:
    """The ``RunStoppedError`` when ``answer`` says the run was stopped (409 ``run_stopped``), else None."""
    if answer.status != 409:
        return None
    error = http_error(run_id, answer.status, answer.body, answer.retry_after)
    return error if isinstance(error, RunStoppedError) else None
