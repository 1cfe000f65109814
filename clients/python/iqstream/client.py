"""The synchronous publisher: AG-UI runs into IQ-Stream from Python, with the standard library only.

    from iqstream import IqStreamClient            # (``from iqstream_client import ...`` works too)

    client = IqStreamClient("http://relay:8080", token=publish_jwt)
    with client.open_run("chat-42") as run:      # one chunked POST for the whole run
        run.send({"type": "RUN_STARTED", "threadId": "t1", "runId": "chat-42"})
        for token in model_stream():
            run.send({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": token})
        ...
    print(run.result)                              # PublishResult(run_id, last_event_id, ended)

    # or pipe an existing AG-UI agent's SSE response straight in:
    client.pipe_agent("chat-43", "http://agent:8000/awp", run_agent_input)

Each event is written to the socket the moment ``send`` is called (chunked transfer encoding,
TCP_NODELAY). If the connection breaks, ``RunPublisher`` asks the server how many events the run
holds (``GET /v1/runs/{id}``) and continues the same run over a new request with the events the
server does not have yet: nothing is lost or duplicated. If the node that held the run died, the
publisher restores the run on its new owner with the same event ids (``X-IQStream-Restore``, from the
lines it kept: ``restore_buffer_bytes``, 8 MiB by default). Refusals (4xx) raise ``IqStreamHttpError``
with the server's status, error code, message and event position.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import ssl
import time
import urllib.parse
from typing import Any, BinaryIO, Iterable, NoReturn, Optional, Union

from . import _results
from ._repair import AskStatus, Broken, Done, Fail, Outcome, Repair, RepairCounts, Resend, Resumed, Step, Wait
from ._requests import (
    DEFAULT_RESTORE_BUFFER_BYTES,
    RUN_ID,
    TERMINAL_TYPES,
    ClientCore,
    Request,
    TokenSource,
    check_run_id,
    event_line,
    restore_header,
)
from ._results import Answer, IqStreamError, IqStreamHttpError, PublishResult, RunStatus, RunStoppedError

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

# DEFAULT_RESTORE_BUFFER_BYTES, RUN_ID, TERMINAL_TYPES, event_line and restore_header are _requests' (the sans-I/O
# core both clients share), imported here under the names they always had here

for _public in (IqStreamError, IqStreamHttpError, RunStoppedError, PublishResult, RunStatus):
    _public.__module__ = __name__  # defined in _results (below the repair step); their public home is here
event_line.__module__ = __name__


class IqStreamClient(ClientCore):
    """A client for one IQ-Stream server. Cheap to create; holds no connection between calls.

    ``token`` is a JWT with the publish right (``{"iqstream": {"publish": ["*"]}}``) or a callable
    returning one (asked before each request). ``max_retries`` / ``retry_delay`` / ``max_retry_delay``
    govern how a broken streamed publish is continued; keep their total under the server's
    ``--publisher-timeout`` (30 s by default). ``restore_buffer_bytes`` caps the event lines a publisher keeps
    per run to restore it on a new node if its node dies (8 MiB by default; 0 = off: a lost node fails the
    publisher with ``run_lost``).
    """

    def __init__(self, base_url: str, token: TokenSource = None, *,
                 timeout: float = 30.0, max_retries: int = 5, retry_delay: float = 0.2,
                 max_retry_delay: float = 5.0, ssl_context: Optional[ssl.SSLContext] = None,
                 restore_buffer_bytes: int = DEFAULT_RESTORE_BUFFER_BYTES):
        super().__init__(base_url, token, "base_url", timeout=timeout, max_retries=max_retries,
                         retry_delay=retry_delay, max_retry_delay=max_retry_delay,
                         restore_buffer_bytes=restore_buffer_bytes)
        self.ssl_context = ssl_context

    # ---- plumbing ----

    def _connection(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        t = self.timeout if timeout is None else timeout
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=t, context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=t)

    def _request(self, request: Request, run_id: str) -> Answer:
        conn = self._connection()
        try:
            conn.request(request.method, request.path, body=request.body, headers=request.headers)
            return _read_answer(conn)
        except (OSError, http.client.HTTPException) as e:
            raise IqStreamError(f"request to IQ-Stream failed: {e!r}", run_id) from e
        finally:
            conn.close()

    # the reply's meaning, shared with the asyncio client (kept here as the names they always had)
    http_error = staticmethod(_results.http_error)
    parse_result = staticmethod(_results.parse_result)

    # ---- API ----

    def open_run(self, run_id: str) -> "RunPublisher":
        """Opens a streamed publish of ``run_id`` (created by its first event, or continued)."""
        return RunPublisher(self, check_run_id(run_id))

    def publish(self, run_id: str, events: Iterable[Any]) -> PublishResult:
        """Publishes a batch of events in one (non-streamed) request."""
        return _results.published(run_id, *self._request(self.api.publish(run_id, events), run_id))

    def status(self, run_id: str) -> Optional[RunStatus]:
        """The run's status, or None if the server has no such run (404)."""
        return _results.status_of(run_id, *self._request(self.api.status(run_id), run_id))

    def delete(self, run_id: str) -> None:
        """Stops a running run (its readers get RUN_ERROR STOPPED, its open publisher a
        ``RunStoppedError``; it stays readable for the server's retention), or drops an ended run now."""
        _results.check_deleted(run_id, *self._request(self.api.delete(run_id), run_id))

    def pipe_sse(self, run_id: str, source: Union[BinaryIO, Iterable[bytes]],
                 content_type: str = "text/event-stream") -> PublishResult:
        """Streams an AG-UI SSE byte stream (``data: {...}\\n\\n`` frames, as AG-UI agents emit
        them) into the run as it is read, over one chunked request with Content-Type
        text/event-stream; the server takes the data lines of each frame as one event.

        ``source`` is a binary file-like object (an ``http.client.HTTPResponse``,
        ``sys.stdin.buffer``; read with ``read1`` so bytes are forwarded as they arrive) or an
        iterable of bytes. Bytes are relayed as they come, so a broken pipe is not retried: the
        caller decides (the server ends the run with RUN_ERROR PUBLISHER_LOST after its timeout).
        """
        request = self.api.pipe(run_id, content_type)
        conn = self._connection(timeout=None)
        try:
            _put_streamed(conn, request)
            sock = conn.sock
            for chunk in _chunks(source):
                if not chunk:
                    continue
                if _readable(sock):  # the server answered early: a refusal
                    break
                conn.send(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            try:
                conn.send(b"0\r\n\r\n")
            except OSError:
                pass  # the server may already have answered and closed
            return _results.published(run_id, *_read_answer(conn))
        except (OSError, http.client.HTTPException) as e:
            raise IqStreamError(f"piping into run '{run_id}' failed: {e!r}", run_id) from e
        finally:
            conn.close()

    def pipe_agent(self, run_id: str, agent_url: str, run_agent_input: Any,
                   headers: Optional[dict] = None, timeout: Optional[float] = None) -> PublishResult:
        """Runs an AG-UI agent over its HTTP protocol (``POST agent_url`` with the RunAgentInput
        JSON, ``Accept: text/event-stream``) and pipes its SSE response into ``run_id`` as it
        streams. Returns the IQ-Stream reply once the agent's response has ended."""
        parsed = urllib.parse.urlsplit(agent_url)
        conn_type = http.client.HTTPSConnection if parsed.scheme == "https" else http.client.HTTPConnection
        if not parsed.hostname:
            raise ValueError(f"agent_url must be http(s)://host[:port]/path, got: {agent_url!r}")
        conn = conn_type(parsed.hostname, parsed.port or (443 if parsed.scheme == "https" else 80),
                         timeout=timeout or self.timeout)
        try:
            path = parsed.path or "/"
            if parsed.query:
                path += "?" + parsed.query
            body = run_agent_input if isinstance(run_agent_input, (bytes, str)) else json.dumps(run_agent_input)
            conn.request("POST", path, body=body, headers={
                "Content-Type": "application/json", "Accept": "text/event-stream", **(headers or {})})
            response = conn.getresponse()
            if response.status != 200:
                raise IqStreamError(f"the agent at {agent_url} answered {response.status}: {response.read()[:200]!r}", run_id)
            return self.pipe_sse(run_id, response)
        finally:
            conn.close()


def _put_streamed(conn: http.client.HTTPConnection, request: Request) -> None:
    """Writes ``request``'s head, its body to come in chunks."""
    conn.putrequest(request.method, request.path)
    for k, v in {**request.headers, "Transfer-Encoding": "chunked"}.items():
        conn.putheader(k, v)
    conn.endheaders()


def _read_answer(conn: http.client.HTTPConnection) -> Answer:
    response = conn.getresponse()
    return Answer(response.status, response.getheader("Retry-After"), response.read())


def _chunks(source: Union[BinaryIO, Iterable[bytes]]) -> Iterable[bytes]:
    read1 = getattr(source, "read1", None)
    if read1 is not None:
        while True:
            chunk = read1(65536)
            if not chunk:
                return
            yield chunk
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            chunk = read(65536)
            if not chunk:
                return
            yield chunk
    for chunk in source:  # an iterable of bytes (or str)
        yield chunk.encode("utf-8") if isinstance(chunk, str) else chunk


def _readable(sock: Optional[socket.socket]) -> bool:
    if sock is None:
        return False
    try:
        ready, _, _ = select.select([sock], [], [], 0)
        return bool(ready)
    except (OSError, ValueError):
        return True


class RunPublisher(RepairCounts):
    """Streams one run over one chunked ``POST /v1/runs/{runId}/events`` (application/x-ndjson).

    ``send(event)`` writes the event to the socket at once. ``finish()`` (or leaving the ``with``
    block) ends the body and returns the server's ``PublishResult``; an exception inside the
    ``with`` block leaves the run open (the server ends it with RUN_ERROR PUBLISHER_LOST after
    ``--publisher-timeout`` unless a new publish continues it).

    Every request carries ``Last-Event-ID`` (the count the publisher believes the run has): a run
    that no node holds any more fails the publisher with ``IqStreamHttpError`` code ``run_lost``, a
    run with another count with ``event_id_mismatch`` (409 both) — never a fresh run at id 1.

    Restore: a publisher that wrote the run from its first event keeps every line it sent (up to the client's
    ``restore_buffer_bytes``). When no node holds the run any more (status 404, or 409 ``run_lost``; never on a
    503) it restores it on its new owner: one request with ``Last-Event-ID: 0`` and ``X-IQStream-Restore: N``
    that resends events 1..N (the same ids), then carries the new ones. ``restores`` counts them. A restore that
    breaks is continued like any request (the run exists then), not restored twice.

    Invariant: each sent event is appended once, in order. The events of the current request are
    kept until the server confirms them; after a break the publisher asks the server how many the
    run holds and continues over a new request with the rest. The decisions of a repair are its ``Repair``'s
    (``iqstream/_repair.py``, shared with ``AsyncRunPublisher``); this class performs the I/O they name.
    Not thread-safe: one thread per run.
    """

    def __init__(self, client: IqStreamClient, run_id: str):
        self.client = client
        self.run_id = run_id
        self.result: Optional[PublishResult] = None
        self.events_sent = 0
        self._conn: Optional[http.client.HTTPConnection] = None
        self._failure: Optional[BaseException] = None
        status = client.status(run_id)
        if status is not None and status.ended:
            raise IqStreamHttpError(run_id, 409, "run_ended", "the run has already ended")
        self._repair = Repair(run_id, status.events if status else 0, client.restore_buffer_bytes, client)
        try:
            self._start_request(self._repair.base)
        except (OSError, http.client.HTTPException) as e:
            raise IqStreamError(f"could not open a publish of run '{run_id}': {e!r}", run_id) from e

    def __enter__(self) -> "RunPublisher":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish()
        else:
            self._close()

    @property
    def stopped(self) -> bool:
        """True once the server has answered that the run was stopped (``DELETE``): abort the agent;
        ``send`` and ``finish`` then raise ``RunStoppedError``. Does not wait for an answer."""
        if self._failure is None and self.result is None and self._conn is not None and _readable(self._open_conn.sock):
            try:
                self._handle_early_answer()
            except IqStreamError:
                pass  # kept in _failure
        return isinstance(self._failure, RunStoppedError)

    def send(self, event: Any) -> "RunPublisher":
        """Sends one event now (a dict, or JSON text). Raises ``RunStoppedError`` once the run was stopped."""
        line = event_line(event)
        self._ensure_open()
        self._repair.sent(line)
        self.events_sent += 1
        try:
            if _readable(self._open_conn.sock):  # the server answered before we finished: see why
                self._handle_early_answer()
                return self
            self._open_conn.send(b"%x\r\n" % len(line) + line + b"\r\n")
        except (OSError, http.client.HTTPException) as e:
            self._recover(e)
        return self

    def finish(self) -> PublishResult:
        """Ends the request body and returns the server's reply (idempotent)."""
        if self.result is not None:
            return self.result
        self._ensure_open()
        while self.result is None:
            try:
                try:
                    self._open_conn.send(b"0\r\n\r\n")
                except OSError:
                    pass  # an early answer is read below
                step = self._repair.answered(_read_answer(self._open_conn), finishing=True)
            except (OSError, http.client.HTTPException) as e:
                step = self._repair.broke(e, finishing=True)
            self._perform(step)
        return self.result

    # ---- internals ----

    @property
    def _open_conn(self) -> http.client.HTTPConnection:
        if self._conn is None:
            raise http.client.NotConnected("the publish request is closed")
        return self._conn

    def _ensure_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self.result is not None:
            raise RuntimeError(f"the publish of run '{self.run_id}' is finished")

    def _start_request(self, last_event_id: int, restore_to: int = 0) -> None:
        """``restore_to`` > 0: a restore of the run's first ``restore_to`` events (resent first)."""
        self._close()
        conn = self.client._connection(timeout=None)
        _put_streamed(conn, self.client.api.stream(self.run_id, last_event_id, restore_to))
        self._conn = conn
        self._repair.started()

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _handle_early_answer(self) -> None:
        try:
            step = self._repair.answered(_read_answer(self._open_conn))
        except (OSError, http.client.HTTPException) as e:
            step = self._repair.broke(e)
        self._perform(step)

    def _recover(self, cause: BaseException) -> None:
        self._perform(self._repair.broke(cause))

    def _fail(self, error: BaseException) -> NoReturn:
        if self._failure is None:
            self._failure = error
        self._close()
        raise error

    def _perform(self, step: Step) -> None:
        """Performs the I/O that each step of the repair names, until it is done (the run continues over a new
        request, or the publish is complete) or fails (raised)."""
        while not isinstance(step, Resumed):
            self._close()
            if isinstance(step, Fail):
                self._fail(step.error)
            if isinstance(step, Done):
                self.result = step.result
                return
            step = self._repair.after(step, self._io(step))

    def _io(self, step: Step) -> Outcome:
        """The I/O of a ``Wait``, ``AskStatus``, ``Probe`` or ``Resend``: what it came to, or ``Broken``."""
        if isinstance(step, Wait):
            time.sleep(step.seconds)
            return None
        if isinstance(step, AskStatus):
            try:
                return self.client.status(self.run_id)
            except IqStreamError as e:
                return Broken(e)
        assert not isinstance(step, (Done, Fail, Resumed))
        try:
            self._start_request(step.last_event_id, step.restore_to if isinstance(step, Resend) else 0)
            if not isinstance(step, Resend):  # a Probe: an empty body, then its answer
                self._open_conn.send(b"0\r\n\r\n")
                return _read_answer(self._open_conn)
            for line in step.lines:
                self._open_conn.send(b"%x\r\n" % len(line) + line + b"\r\n")
            return None
        except (OSError, http.client.HTTPException) as e:
            return Broken(e)
