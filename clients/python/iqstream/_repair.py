"""The repair of a broken publish, decided without I/O: one step that the synchronous ``RunPublisher`` and the
asyncio ``AsyncRunPublisher`` both drive, each performing the I/O the step names in its own way (blocking calls
or ``await``).

A publisher tells its ``Repair`` what happened (``broke``: the request broke, no HTTP answer; ``refused``: the
server answered it with a refusal) and gets back what to do next, a plain value:

- ``Wait(seconds)``: sleep, then call ``waited()``;
- ``AskStatus()``: ``GET /v1/runs/{id}``, then ``status_is(status)`` (None for a 404) or ``status_failed(error)``;
- ``Resend(last_event_id, lines, restore_to)``: a new request at the run's count ``last_event_id`` that carries
  ``lines`` (the events the server does not hold); ``restore_to`` > 0 makes it a restore of the run's first
  ``restore_to`` events on its new owner (``Last-Event-ID: 0``, ``X-IQStream-Restore``); once the lines are
  written the repair is done;
- ``Probe(last_event_id)``: a request with that ``Last-Event-ID`` and an empty body, for a run no node holds and
  whose events were not kept: the server refuses it (409 ``run_lost``) instead of starting the run again at id 1;
  its answer goes to ``probe_answered``;
- ``Done(result)``: the publish is complete (the server has every event);
- ``Fail(error)``: raise ``error``; the publish cannot go on.

A request that a ``Resend`` or a ``Probe`` names and that breaks before it is answered goes to
``request_broke``. Each sent event goes through ``sent`` and a 200 through ``confirmed``.

A publisher drives it with two calls. The answer to its open request (read early while it sends, or at the
body's end) goes to ``answered``, a break to ``broke``; each step's I/O, performed, goes to ``after(step,
outcome)`` (the status, the probe's ``Answer``, None, or ``Broken(error)`` when the I/O failed), which names the
next step, until ``Resumed`` (the run goes on over the request the last ``Resend`` opened), ``Done`` or ``Fail``.
Every request the publisher opens goes through ``started``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional, Protocol, Sequence, Union

from ._results import Answer, IqStreamError, IqStreamHttpError, PublishResult, RunStatus, http_error, parse_result

__all__ = ["Repair", "RestoreBuffer", "RetrySettings", "Step", "Wait", "AskStatus", "Resend", "Probe", "Resumed",
           "Done", "Fail", "Broken", "Outcome", "RepairCounts", "Settled", "settle_after_break", "is_run_lost"]


class RetrySettings(Protocol):
    """How many failed attempts in a row a repair makes, and the backoff between them (the client's settings,
    read at each attempt)."""

    max_retries: int
    retry_delay: float       # seconds before the first attempt, doubled at each next one
    max_retry_delay: float   # seconds, the most between two attempts


@dataclass(frozen=True)
class Wait:
    """Sleep ``seconds``, then call ``Repair.waited()``."""

    seconds: float


@dataclass(frozen=True)
class AskStatus:
    """Ask the server for the run's status: ``Repair.status_is(status)``, or ``status_failed(error)``."""


@dataclass(frozen=True)
class Resend:
    """Open a new publish request with ``Last-Event-ID: last_event_id`` (and ``X-IQStream-Restore: restore_to``
    when it is > 0: a restore) and write ``lines`` on it; the repair is done once they are written."""

    last_event_id: int
    lines: Sequence[bytes]
    restore_to: int = 0


@dataclass(frozen=True)
class Probe:
    """Open a publish request with ``Last-Event-ID: last_event_id``, end its body at once and hand its answer
    to ``Repair.probe_answered``."""

    last_event_id: int


@dataclass(frozen=True)
class Resumed:
    """The repair is done: the run goes on over the request the last ``Resend`` opened."""


@dataclass(frozen=True)
class Done:
    """The publish is complete: ``result`` is the publisher's result."""

    result: PublishResult


@dataclass(frozen=True)
class Fail:
    """The publish cannot go on: raise ``error``."""

    error: BaseException


Step = Union[Wait, AskStatus, Resend, Probe, Resumed, Done, Fail]


@dataclass(frozen=True)
class Broken:
    """The I/O a step named failed: ``error`` is the transport's error (or, for ``AskStatus``, the status
    request's ``IqStreamError``)."""

    error: BaseException


# what a step's I/O came to: the run's status (AskStatus; None for a 404), the server's answer (Probe), None (Wait,
# Resend), or Broken
Outcome = Union[RunStatus, Answer, Broken, None]


class Repair:
    """The repair state of one publisher's run, and the decisions on it. Confined to its publisher (one thread, or
    one event loop); it does no I/O and never sleeps.

    Implementation notes. Invariant: each sent event is appended once, in order. ``base`` is the run's event
    count at which the current request started; ``unconfirmed`` holds the events sent since (the server has not
    confirmed them). After a break the server's count tells how many of them it holds (``settle_after_break``):
    the rest are resent over a new request at the new count. When no node holds the run any more (status 404,
    or 409 ``run_lost``; never on a 503) and the publisher kept every line from the run's first event
    (``RestoreBuffer``), the run is restored on its new owner with the same ids; without the lines, a request
    with ``Last-Event-ID`` (a ``Probe``) lets the server refuse with ``run_lost``, so the run is never restarted
    at id 1. ``failures_in_row`` counts the attempts since the server last took an event; past
    ``max_retries`` the repair fails. A restore that breaks is continued like any request (the run exists
    then), not restored twice.
    """

    def __init__(self, run_id: str, base: int, restore_buffer_bytes: int, settings: RetrySettings):
        self.run_id = run_id
        self.base = base
        self.unconfirmed: list[bytes] = []
        self.kept = RestoreBuffer(restore_buffer_bytes, base)
        self.settings = settings
        self.restores = 0
        self.failures_in_row = 0
        self.requests_started = 0  # the publish requests the publisher has opened
        # a request broke (no HTTP answer) after events were written and no status has confirmed the count
        # since: the run may hold events this publisher cannot count
        self.may_have_events = False
        # the repair under way: its request was the body's end (finish), the least delay (Retry-After), the
        # server said no node holds the run (restore without asking), the last error seen
        self._finishing = False
        self._min_delay_s = 0.0
        self._said_lost = False
        self._last: Optional[BaseException] = None

    # ---- what the publisher tells ----

    def sent(self, line: bytes) -> None:
        """An event line was written (or is about to be) on the current request."""
        self.unconfirmed.append(line)
        self.kept.keep(line)

    def confirmed(self) -> None:
        """The server answered the current request 200: it holds every event sent."""
        self.unconfirmed.clear()

    def started(self) -> None:
        """The publisher opened a publish request (the first, or one a ``Resend`` or a ``Probe`` named)."""
        self.requests_started += 1

    def answered(self, answer: Answer, finishing: bool = False) -> Step:
        """The server answered the current request: at the body's end (``finishing``) a 200 is the publish's result
        (``Done``; an unreadable one raises ``IqStreamError``); before it, a 200 means the server ended the request
        early (continued like a break); anything else is a refusal."""
        if answer.status == 200:
            if finishing:
                result = parse_result(self.run_id, answer.body)
                self.confirmed()
                return Done(result)
            return self.broke(IqStreamError("the server ended the publish request early", self.run_id))
        return self.refused(http_error(self.run_id, answer.status, answer.body, answer.retry_after),
                            self.requests_started, finishing)

    def after(self, step: Step, outcome: Outcome) -> Step:
        """The next step once the publisher has performed the I/O ``step`` named (``Wait``, ``AskStatus``,
        ``Probe`` or ``Resend``) and it came to ``outcome``."""
        if isinstance(outcome, Broken):
            if isinstance(step, AskStatus) and isinstance(outcome.error, IqStreamError):
                return self.status_failed(outcome.error)
            return self.request_broke(outcome.error)
        if isinstance(step, Wait):
            return self.waited()
        if isinstance(step, AskStatus):
            return self.status_is(outcome if isinstance(outcome, RunStatus) else None)
        if isinstance(step, Probe) and isinstance(outcome, Answer):
            error = None if outcome.status == 200 else http_error(
                self.run_id, outcome.status, outcome.body, outcome.retry_after)
            return self.probe_answered(error, self.requests_started)
        if isinstance(step, Resend):
            return Resumed()
        raise ValueError(f"no I/O of {step!r} comes to {outcome!r}")

    def broke(self, cause: BaseException, finishing: bool = False) -> Step:
        """The current request broke without an HTTP answer (or the server ended it early with a 200)."""
        return self._begin(cause, finishing, 0.0, said_lost=False)

    def refused(self, error: IqStreamHttpError, requests_started: int, finishing: bool = False) -> Step:
        """The server answered the current request with ``error`` (not 200). ``requests_started``: the publish
        requests this publisher has opened (a 409 ``publisher_active`` on a later one is its own broken request,
        not yet ended at the server)."""
        if is_run_lost(error) and self.kept.can_restore():
            return self._begin(error, finishing, 0.0, said_lost=True)
        retryable = error.status >= 500 or (error.status == 409 and error.code == "publisher_active"
                                            and requests_started > 1)
        if not retryable:
            return Fail(error)
        return self._begin(error, finishing, error.retry_after or 0.0, said_lost=False)

    def waited(self) -> Step:
        if self._said_lost:  # the server said no node holds the run: restore it without asking again
            self._said_lost = False
            return self._after_status(None, said_lost=True)
        return AskStatus()

    def status_is(self, status: Optional[RunStatus]) -> Step:
        """The run's status (None: no node holds it, 404)."""
        if status is not None and status.publishing:
            # the server has not seen the old request end yet: the count is not final
            return self._attempt(IqStreamError("the broken request is still open at the server", self.run_id))
        return self._after_status(status, said_lost=False)

    def status_failed(self, error: IqStreamError) -> Step:
        """The status could not be had: a refusal below 500 fails the publish, anything else is retried."""
        if isinstance(error, IqStreamHttpError) and error.status < 500:
            return Fail(error)
        return self._attempt(error)

    def request_broke(self, error: BaseException) -> Step:
        """The request a ``Resend`` or a ``Probe`` named broke before it was answered."""
        return self._attempt(error)

    def probe_answered(self, error: Optional[IqStreamHttpError], requests_started: int) -> Step:
        """The server's answer to a ``Probe``: ``error`` is its refusal (409 ``run_lost`` from a current server),
        None for a 200 (an older server that does not check: the run restarted at id 1)."""
        if error is None:
            return Fail(IqStreamError(f"run '{self.run_id}' was lost and restarted by the server", self.run_id))
        return self.refused(error, requests_started, self._finishing)

    # ---- the decisions ----

    def _begin(self, cause: BaseException, finishing: bool, min_delay_s: float, said_lost: bool) -> Step:
        self._finishing = finishing
        self._min_delay_s = min_delay_s
        self._said_lost = said_lost
        # a transport break after events were written: some may have reached the run; an IQ-Stream refusal
        # before any event (over_budget, draining: no lastEventId) took none; an answer from a proxy in between
        # (502/504, no IQ-Stream code) may have
        if self.unconfirmed and (not isinstance(cause, IqStreamHttpError) or cause.code is None
                                 or (cause.last_event_id or 0) > 0):
            self.may_have_events = True
        return self._attempt(cause)

    def _attempt(self, last: BaseException) -> Step:
        """One more attempt after ``last`` (the latest error): a wait with backoff, or the end of the retries."""
        self._last = last
        self.failures_in_row += 1
        settings = self.settings
        if self.failures_in_row > settings.max_retries:
            error = IqStreamError(f"publish of run '{self.run_id}' broke and could not be continued after "
                                  f"{settings.max_retries} attempts: {last!r}", self.run_id)
            error.__cause__ = last
            return Fail(error)
        delay_s = min(settings.max_retry_delay, settings.retry_delay * 2 ** (self.failures_in_row - 1))
        return Wait(max(delay_s, self._min_delay_s))

    def _after_status(self, status: Optional[RunStatus], said_lost: bool) -> Step:
        lost = status is None and (self.base > 0 or self.may_have_events or said_lost)
        lines = self.kept.lines
        if lost and lines:
            # no node holds the run any more (404 only once every live node said so; a 503 is asked again):
            # restore it from the kept lines on its new owner, from id 1 with the same ids, then go on
            self.restores += 1
            self.may_have_events = False
            self.base = 0
            self.unconfirmed[:] = lines
            return Resend(0, self.unconfirmed, restore_to=len(lines))
        if status is None and (self.base > 0 or self.may_have_events):
            # no node holds a run that had (or may have had) events: a request with Last-Event-ID (at least 1)
            # lets the server say so (409 run_lost), which fails the publisher with that code
            return Probe(max(self.base, 1))
        self.may_have_events = False
        settled = settle_after_break(self.run_id, status, self.base, self.unconfirmed, self._finishing)
        if settled.accepted > 0:
            self.failures_in_row = 0
        self.base = settled.base
        if settled.error is not None:
            return Fail(settled.error)
        if settled.result is not None:
            return Done(settled.result)
        return Resend(self.base, self.unconfirmed)


class RepairCounts:
    """What both publishers show of their ``Repair`` (``_repair``)."""

    _repair: Repair

    @property
    def restores(self) -> int:
        """How many times the run was restored on a new owner (its node died)."""
        return self._repair.restores

    @property
    def requests_started(self) -> int:
        """The publish requests this publisher has opened."""
        return self._repair.requests_started


class Settled(NamedTuple):
    """What a broken request's events came to, by the server's count: see ``settle_after_break``."""

    base: int                            # the run's event count the next request starts at
    accepted: int                        # events of the broken request(s) the server had appended
    result: Optional[PublishResult]      # the publish is complete: nothing left to send
    error: Optional[IqStreamError]       # the run cannot be continued


def settle_after_break(run_id: str, status: Optional[RunStatus], base: int, unconfirmed: list[bytes],
                       finishing: bool) -> Settled:
    """After a break, with the run's status (not ``publishing``): drops from ``unconfirmed`` the events the server
    has (its count minus ``base``, the count the request started at). The rest are resent over a new request,
    unless the run is complete (``result``) or cannot go on (``error``): it changed under its publisher, or it
    ended with events still unsent. Shared by the synchronous and the asyncio publisher."""
    count = status.events if status else 0
    accepted = count - base
    if accepted < 0 or accepted > len(unconfirmed):
        return Settled(base, 0, None, IqStreamError(
            f"run '{run_id}' changed under its publisher: the server holds {count} events, this "
            f"request started at {base} and sent {len(unconfirmed)}", run_id))
    del unconfirmed[:accepted]
    if status is not None and status.ended:
        if not unconfirmed:
            return Settled(count, accepted, PublishResult(run_id, count, True), None)
        return Settled(count, accepted, None, IqStreamHttpError(
            run_id, 409, "run_ended", f"the run ended while its publisher reconnected "
                                      f"({len(unconfirmed)} events not appended)"))
    if finishing and not unconfirmed:
        return Settled(count, accepted, PublishResult(run_id, count, False), None)
    return Settled(count, accepted, None, None)


class RestoreBuffer:
    """Every event line of a run since its first event, kept to restore the run on a new node if the node
    holding it dies (``X-IQStream-Restore``). ``lines`` is None when the publisher cannot restore: it joined a
    run begun elsewhere (``base`` > 0), the cap is 0 (off), or the lines passed the cap (then a lost node
    ends the run with ``run_lost``, as without a buffer). Shared by the synchronous and the asyncio publisher."""

    def __init__(self, cap_bytes: int, base: int):
        if cap_bytes < 0:
            raise ValueError(f"restore_buffer_bytes must be >= 0 (0 = off), got: {cap_bytes}")
        self.cap_bytes = cap_bytes
        self.kept_bytes = 0
        self.lines: Optional[list[bytes]] = [] if base == 0 and cap_bytes > 0 else None

    def keep(self, line: bytes) -> None:
        if self.lines is None:
            return
        self.kept_bytes += len(line)
        if self.kept_bytes > self.cap_bytes:
            self.lines = None  # past the cap: stop keeping
        else:
            self.lines.append(line)

    def can_restore(self) -> bool:
        return bool(self.lines)


def is_run_lost(error: IqStreamHttpError) -> bool:
    """409 ``run_lost``: the continuation names a run no node holds (its node died)."""
    return error.status == 409 and error.code == "run_lost"
