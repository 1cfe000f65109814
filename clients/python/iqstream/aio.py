"""The asyncio client: publish a run from an async iterable of AG-UI events, read a run, stop one.

    from iqstream import AsyncClient

    iq = AsyncClient()                                  # $IQSTREAM_URL, $IQSTREAM_TOKEN
    result = await iq.publish_events(run_id, adapter.run_stream())   # one streamed request for the run

The guarantees are the synchronous ``RunPublisher``'s: every event is on the wire when ``send`` returns
(chunked NDJSON, TCP_NODELAY); a broken connection is repaired by asking the server how many events the run
holds and continuing the same run over a new request with the rest (``Last-Event-ID`` on every request, so a
run no node holds is restored on its new owner with the same ids from the lines the publisher kept, or fails
with ``run_lost`` where it kept none, instead of restarting at id 1); refusals raise ``IqStreamHttpError``
with the server's code. The response is read while the body is still being written, so a stop
(``DELETE /v1/runs/{id}`` from anywhere: the server answers the open request ``409 run_stopped``) is seen the
moment it comes, even while the agent is silent: ``publish_events`` cancels the task producing the events and
raises ``RunStoppedError``. Confined to one event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
from typing import Any, AsyncIterable, AsyncIterator, Callable, Iterable, NoReturn, Optional, Union

from . import _results
from ._http import Endpoint, HttpExchange, HttpResponse
from ._repair import AskStatus, Broken, Done, Fail, Outcome, Repair, RepairCounts, Resend, Resumed, Step, Wait
from ._requests import (
    DEFAULT_RESTORE_BUFFER_BYTES,
    ClientCore,
    Request,
    TokenSource,
    check_run_id,
    event_line,
    is_terminal,
)
from ._sse import SseParser
from .client import IqStreamError, IqStreamHttpError, PublishResult, RunStatus, RunStoppedError

__all__ = ["AsyncClient", "AsyncRunPublisher", "RunEvents"]

TRANSPORT_ERRORS = (OSError, EOFError, asyncio.TimeoutError)
DEFAULT_URL = "http://127.0.0.1:8080"


class AsyncClient(ClientCore):
    """A client for one IQ-Stream server, for asyncio. Cheap to create; holds no connection between calls.

    ``url`` defaults to ``$IQSTREAM_URL`` (else ``http://127.0.0.1:8080``), ``token`` to ``$IQSTREAM_TOKEN``: a
    JWT with the publish right (and subscribe, to read runs), or a callable returning one, asked before each
    request. ``max_retries`` / ``retry_delay`` / ``max_retry_delay`` govern how a broken streamed publish is
    continued; keep their total under the server's ``--publisher-timeout`` (30 s by default).
    ``restore_buffer_bytes`` caps the event lines a publisher keeps per run to restore it on a new node if its
    node dies (8 MiB by default; 0 = off: a lost node fails the publisher with ``run_lost``).
    """

    def __init__(self, url: Optional[str] = None, token: TokenSource = None, *, timeout: float = 30.0,
                 max_retries: int = 5, retry_delay: float = 0.2, max_retry_delay: float = 5.0,
                 ssl_context: Optional[ssl.SSLContext] = None,
                 restore_buffer_bytes: int = DEFAULT_RESTORE_BUFFER_BYTES):
        url = url or os.environ.get("IQSTREAM_URL") or DEFAULT_URL
        super().__init__(url, token if token is not None else os.environ.get("IQSTREAM_TOKEN"), "url",
                         timeout=timeout, max_retries=max_retries, retry_delay=retry_delay,
                         max_retry_delay=max_retry_delay, restore_buffer_bytes=restore_buffer_bytes)
        self.url = url
        self.endpoint = Endpoint(self.scheme, self.host, self.port, ssl_context)

    # ---- plumbing ----

    async def start(self, method: str, path: str, headers: Optional[dict] = None,
                    body: Optional[bytes] = None) -> HttpExchange:
        return await self.send(Request(method, path, {**self.headers(), **(headers or {})}, body))

    async def send(self, request: Request) -> HttpExchange:
        """Connects and writes ``request`` (its body to come in chunks when it has none)."""
        return await HttpExchange.start(self.endpoint, *request, connect_timeout_s=self.timeout)

    async def _request(self, request: Request, run_id: str) -> _results.Answer:
        exchange: Optional[HttpExchange] = None
        try:
            async def exchange_once() -> _results.Answer:
                nonlocal exchange
                exchange = await self.send(request._replace(body=request.body if request.body is not None else b""))
                return await _read_answer(exchange)
            return await asyncio.wait_for(exchange_once(), self.timeout)
        except TRANSPORT_ERRORS as e:
            raise IqStreamError(f"request to IQ-Stream failed: {e!r}", run_id) from e
        finally:
            if exchange is not None:
                exchange.close()

    # ---- API ----

    def open_run(self, run_id: str, *, on_stop: Optional[Callable[[], Any]] = None) -> "AsyncRunPublisher":
        """A streamed publish of ``run_id`` (``async with``): ``await run.send(event)``, then the block's end
        finishes it. ``on_stop`` is called (on the loop) the moment the server says the run was stopped."""
        return AsyncRunPublisher(self, check_run_id(run_id), on_stop=on_stop)

    async def publish_events(self, run_id: str, events: Union[AsyncIterable[Any], Iterable[Any]]) -> PublishResult:
        """Publishes ``events`` (``ag_ui.core`` events, dicts or JSON text; an async or plain iterable) as one
        streamed request, each event sent as it is produced.

        A stop raises ``RunStoppedError`` after cancelling the task iterating ``events`` (the agent's stream
        gets ``CancelledError`` where it waits). If ``events`` raises before a terminal event, the run is ended
        with ``RUN_ERROR`` (code ``AGENT_ERROR``) so its readers are not left waiting, and the error re-raised.
        """
        run = self.open_run(run_id)
        await run.open()
        pump = _Pump(run, events)
        try:
            await asyncio.wait({pump.task})
        except asyncio.CancelledError:
            pump.stop()
            run.close()
            raise
        if pump.task.cancelled():  # only a stop cancels it
            run.close()
            raise run.failure or RunStoppedError(run_id, 409, RunStoppedError.CODE, "the run was stopped")
        error = pump.task.exception()
        if error is not None:
            if isinstance(error, IqStreamError) or run.failure is not None:
                run.close()
                raise error
            if not run.ended:
                await run.send({"type": "RUN_ERROR", "message": f"the agent failed: {error!r}"[:500],
                                "code": "AGENT_ERROR"})
                await run.finish()
            raise error
        return await run.finish()  # after a stop the producer did not notice: raises RunStoppedError

    async def publish(self, run_id: str, events: Iterable[Any]) -> PublishResult:
        """Publishes a batch of events in one (non-streamed) request."""
        return _results.published(run_id, *await self._request(self.api.publish(run_id, events), run_id))

    async def status(self, run_id: str) -> Optional[RunStatus]:
        """The run's status, or None if the server has no such run (404)."""
        return _results.status_of(run_id, *await self._request(self.api.status(run_id), run_id))

    async def delete(self, run_id: str) -> None:
        """Stops a running run (readers get RUN_ERROR STOPPED, its publisher ``RunStoppedError``), or drops an ended one."""
        _results.check_deleted(run_id, *await self._request(self.api.delete(run_id), run_id))

    def subscribe(self, run_id: str, last_event_id: Optional[int] = None) -> "RunEvents":
        """Reads the run as IQ-Stream serves it (``async with iq.subscribe(run_id) as stream``): ``stream.raw()``
        its SSE bytes (``id:`` lines included), ``stream.events()`` its ``(id, event)`` pairs. Needs the
        subscribe right. ``last_event_id``: resume after that event."""
        return RunEvents(self, check_run_id(run_id), last_event_id)


class _Pump:
    """Iterates a producer's events into a publisher on a task of its own. A stop cancels that task where the
    producer awaits, never inside ``send``: a CancelledError raised while the task is in ``send`` would leave the
    producer's async generators suspended at their ``yield`` (a framework's inner streams, or a graph running on
    a task of its own, would go on), so inside ``send`` the cancel waits for ``send`` to return, and nothing more
    is sent once the run is stopped."""

    def __init__(self, run: "AsyncRunPublisher", events: Union[AsyncIterable[Any], Iterable[Any]]):
        self.run = run
        self.events = events
        self.in_send = False
        self.stop_asked = False
        self.cancelled = False
        run.on_stop = self.stop
        self.task: asyncio.Task[None] = asyncio.ensure_future(self._iterate())

    def stop(self) -> None:
        self.stop_asked = True
        if self.in_send or self.cancelled:
            return
        self.cancelled = True
        self.task.cancel()

    async def _send(self, event: Any) -> None:
        if self.stop_asked:
            return
        self.in_send = True
        try:
            await self.run.send(event)
        except RunStoppedError:
            self.stop_asked = True
        finally:
            self.in_send = False
            if self.stop_asked and not self.cancelled:
                self.cancelled = True
                asyncio.get_running_loop().call_soon(self.task.cancel)  # lands at the producer's next await

    async def _iterate(self) -> None:
        events = self.events
        if isinstance(events, AsyncIterable):
            iterator = events.__aiter__()
            try:
                async for event in iterator:
                    await self._send(event)
            finally:
                aclose = getattr(iterator, "aclose", None)
                if aclose is not None:
                    await aclose()
        else:
            for event in events:
                if self.stop_asked:
                    return
                await self._send(event)


class RunEvents:
    """One ``GET /v1/runs/{id}/events``: ``response`` (status 200, or 204 for an ended run read to its end),
    ``raw()`` the SSE bytes, ``events()`` the parsed ``(id, event)`` pairs. Refusals raise ``IqStreamHttpError``."""

    def __init__(self, client: AsyncClient, run_id: str, last_event_id: Optional[int]):
        self.client = client
        self.run_id = run_id
        self.last_event_id = last_event_id
        self.response: Optional[HttpResponse] = None
        self._exchange: Optional[HttpExchange] = None

    async def __aenter__(self) -> "RunEvents":
        try:
            self._exchange = await self.client.send(self.client.api.subscribe(self.run_id, self.last_event_id))
            self.response = await self._exchange.response()
            if self.response.status not in (200, 204):
                body = await self._exchange.read_body()
                raise _results.http_error(self.run_id, self.response.status, body,
                                          self.response.header("retry-after"))
        except TRANSPORT_ERRORS as e:
            self.close()
            raise IqStreamError(f"reading run '{self.run_id}' failed: {e!r}", self.run_id) from e
        except BaseException:
            self.close()
            raise
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

    async def raw(self) -> AsyncIterator[bytes]:
        assert self._exchange is not None, "use RunEvents with async with"
        async for chunk in self._exchange.body_chunks():
            yield chunk

    async def events(self) -> AsyncIterator[tuple[int, dict]]:
        parser = SseParser()
        async for chunk in self.raw():
            for frame in parser.feed(chunk):
                yield int(frame.id or 0), json.loads(frame.data)

    def close(self) -> None:
        if self._exchange is not None:
            self._exchange.close()
            self._exchange = None


class AsyncRunPublisher(RepairCounts):
    """Streams one run over one chunked ``POST /v1/runs/{runId}/events`` (application/x-ndjson), for asyncio.

    The server's answer is read by a task of its own while events are written, so an early answer (a stop, a
    refusal) is known at once: ``stopped`` turns true and ``on_stop`` is called without waiting for the next
    ``send``. Invariant as the synchronous ``RunPublisher``'s: each sent event is appended once, in order; the
    events of the current request are kept until the server confirms them, and after a break the run is
    continued over a new request with the rest, or restored on its new owner when its node died (``restores``
    counts them; see RunPublisher). The repair's decisions are the same ``Repair``'s (``iqstream/_repair.py``);
    this class performs the I/O they name, with ``await``. One task sends at a time.
    """

    def __init__(self, client: AsyncClient, run_id: str, on_stop: Optional[Callable[[], Any]] = None):
        self.client = client
        self.run_id = run_id
        self.on_stop = on_stop
        self.result: Optional[PublishResult] = None
        self.failure: Optional[BaseException] = None
        self.events_sent = 0
        self.ended = False  # a terminal event (RUN_FINISHED / RUN_ERROR) was sent
        self._exchange: Optional[HttpExchange] = None
        self._answer: Optional[asyncio.Task] = None
        self._opened = False
        self._repair = Repair(run_id, 0, 0, client)  # until open() knows the run's count

    async def open(self) -> "AsyncRunPublisher":
        if self._opened:
            return self
        status = await self.client.status(self.run_id)
        if status is not None and status.ended:
            raise IqStreamHttpError(self.run_id, 409, "run_ended", "the run has already ended")
        self._repair = Repair(self.run_id, status.events if status else 0, self.client.restore_buffer_bytes,
                              self.client)
        try:
            await self._start_request(self._repair.base)
        except TRANSPORT_ERRORS as e:
            raise IqStreamError(f"could not open a publish of run '{self.run_id}': {e!r}", self.run_id) from e
        self._opened = True
        return self

    async def __aenter__(self) -> "AsyncRunPublisher":
        return await self.open()

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            await self.finish()
        else:
            self.close()

    @property
    def opened(self) -> bool:
        """The publish request is open (``open()`` succeeded)."""
        return self._opened

    @property
    def stopped(self) -> bool:
        """True once the server has answered that the run was stopped (``DELETE``)."""
        return isinstance(self.failure, RunStoppedError)

    async def send(self, event: Any) -> None:
        """Sends one event now. Raises ``RunStoppedError`` once the run was stopped, ``IqStreamHttpError`` on a refusal."""
        line = event_line(event)
        self._ensure_open()
        self._repair.sent(line)
        self.events_sent += 1
        if is_terminal(line):
            self.ended = True
        try:
            assert self._answer is not None and self._exchange is not None
            if self._answer.done():  # the server answered before the body's end: see why
                await self._handle_early_answer()
                return
            self._exchange.write_chunk(line)
            await self._exchange.drain()
        except TRANSPORT_ERRORS as e:
            await self._recover(e)

    async def finish(self) -> PublishResult:
        """Ends the request body and returns the server's reply (idempotent)."""
        if self.result is not None:
            return self.result
        self._ensure_open()
        while self.result is None:
            try:
                assert self._answer is not None and self._exchange is not None
                try:
                    await self._exchange.end_body()
                except TRANSPORT_ERRORS:
                    pass  # an early answer is read below
                step = self._repair.answered(await self._answer, finishing=True)
            except TRANSPORT_ERRORS as e:
                step = self._repair.broke(e, finishing=True)
            await self._perform(step)
        return self.result

    def close(self) -> None:
        """Drops the connection (the server ends the run with PUBLISHER_LOST after its timeout unless a new
        publish continues it)."""
        if self._answer is not None:
            self._answer.remove_done_callback(self._answered)
            if self._answer.done() and not self._answer.cancelled():
                self._answer.exception()  # retrieved: no "exception was never retrieved" at GC
            self._answer.cancel()
            self._answer = None
        if self._exchange is not None:
            self._exchange.close()
            self._exchange = None

    # ---- internals ----

    def _ensure_open(self) -> None:
        if self.failure is not None:
            raise self.failure
        if self.result is not None:
            raise RuntimeError(f"the publish of run '{self.run_id}' is finished")
        if not self._opened and self._exchange is None:
            raise RuntimeError("open the publisher first (async with client.open_run(...))")

    async def _start_request(self, last_event_id: int, restore_to: int = 0) -> None:
        """``restore_to`` > 0: a restore of the run's first ``restore_to`` events (resent first)."""
        self.close()
        exchange = await self.client.send(self.client.api.stream(self.run_id, last_event_id, restore_to))
        self._exchange = exchange
        self._answer = asyncio.ensure_future(_read_answer(exchange))
        self._answer.add_done_callback(self._answered)
        self._repair.started()

    def _answered(self, task: asyncio.Task) -> None:
        """On the loop, the moment the answer is read: a stop is known here, without waiting for a send."""
        if task.cancelled() or task.exception() is not None:
            return
        error = _results.stop_in(self.run_id, task.result())
        if error is not None and self.failure is None:
            self.failure = error
            if self.on_stop is not None:
                self.on_stop()

    async def _handle_early_answer(self) -> None:
        assert self._answer is not None
        try:
            step = self._repair.answered(self._answer.result())
        except TRANSPORT_ERRORS as e:
            step = self._repair.broke(e)
        await self._perform(step)

    async def _recover(self, cause: BaseException) -> None:
        await self._perform(self._repair.broke(cause))

    def _fail(self, error: BaseException) -> NoReturn:
        if self.failure is None:
            self.failure = error
        self.close()
        raise self.failure

    async def _perform(self, step: Step) -> None:
        """Performs the I/O that each step of the repair names, until it is done (the run continues over a new
        request, or the publish is complete) or fails (raised; a stop seen by the answer task first)."""
        if self.failure is not None:  # a stop seen by the answer task
            self.close()
            raise self.failure
        while not isinstance(step, Resumed):
            self.close()
            if isinstance(step, Fail):
                self._fail(step.error)
            if isinstance(step, Done):
                self.result = step.result
                return
            step = self._repair.after(step, await self._io(step))

    async def _io(self, step: Step) -> Outcome:
        """The I/O of a ``Wait``, ``AskStatus``, ``Probe`` or ``Resend``: what it came to, or ``Broken``."""
        if isinstance(step, Wait):
            await asyncio.sleep(step.seconds)
            return None
        if isinstance(step, AskStatus):
            try:
                return await self.client.status(self.run_id)
            except IqStreamError as e:
                return Broken(e)
        assert not isinstance(step, (Done, Fail, Resumed))
        try:
            await self._start_request(step.last_event_id, step.restore_to if isinstance(step, Resend) else 0)
            assert self._exchange is not None and self._answer is not None
            if not isinstance(step, Resend):  # a Probe: an empty body, then its answer
                await self._exchange.end_body()
                return await self._answer
            for line in step.lines:
                self._exchange.write_chunk(line)
            await self._exchange.drain()
            return None
        except TRANSPORT_ERRORS as e:
            return Broken(e)


async def _read_answer(exchange: HttpExchange) -> _results.Answer:
    response = await exchange.response()
    return _results.Answer(response.status, response.header("retry-after"), await exchange.read_body())
