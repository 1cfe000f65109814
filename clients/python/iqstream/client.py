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
import re
import select
import socket
import ssl
import time
import urllib.parse
from typing import Any, BinaryIO, Callable, Iterable, NoReturn, Optional, Union

from . import _results
from ._repair import AskStatus, Done, Fail, Probe, Repair, RestoreBuffer, Step, Wait
from ._results import IqStreamError, IqStreamHttpError, PublishResult, RunStatus, RunStoppedError
from ._trace import with_trace_context

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

DEFAULT_RESTORE_BUFFER_BYTES = 8 * 1024 * 1024
RUN_ID = re.compile(r"^[A-Za-z0-9._~:-]{1,128}$")
TERMINAL_TYPES = ("RUN_FINISHED", "RUN_ERROR")

for _public in (IqStreamError, IqStreamHttpError, RunStoppedError, PublishResult, RunStatus):
    _public.__module__ = __name__  # defined in _results (below the repair step); their public home is here


def _check_run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID.match(run_id):
        raise ValueError(f"a run id is 1-128 characters of [A-Za-z0-9._~:-], got: {run_id!r}")
    return run_id


def event_line(event: Any) -> bytes:
    """One event as an NDJSON line. An ``ag_ui.core`` event (a pydantic model) is dumped the way
    ``ag_ui.encoder.EventEncoder`` does (camelCase aliases, no nulls); a dict (or anything json.dumps
    takes) is serialised; a str or bytes is JSON text, re-serialised compactly if it spans lines."""
    dump = getattr(event, "model_dump_json", None)
    if dump is not None:
        event = dump(by_alias=True, exclude_none=True)
    if isinstance(event, (bytes, bytearray)):
        event = bytes(event).decode("utf-8")
    if isinstance(event, str):
        text = event.strip()
        if "\n" in text or "\r" in text:
            try:
                text = json.dumps(json.loads(text), ensure_ascii=False, separators=(",", ":"))
            except ValueError as e:
                raise ValueError(f"not a JSON event: {e}") from e
    else:
        text = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    if not text.startswith("{"):
        raise ValueError(f"an event must be a JSON object, got: {text[:80]!r}")
    return text.encode("utf-8") + b"\n"


class IqStreamClient:
    """A client for one IQ-Stream server. Cheap to create; holds no connection between calls.

    ``token`` is a JWT with the publish right (``{"iqstream": {"publish": ["*"]}}``) or a callable
    returning one (asked before each request). ``max_retries`` / ``retry_delay`` / ``max_retry_delay``
    govern how a broken streamed publish is continued; keep their total under the server's
    ``--publisher-timeout`` (30 s by default). ``restore_buffer_bytes`` caps the event lines a publisher keeps
    per run to restore it on a new node if its node dies (8 MiB by default; 0 = off: a lost node fails the
    publisher with ``run_lost``).
    """

    def __init__(self, base_url: str, token: Union[str, Callable[[], str], None] = None, *,
                 timeout: float = 30.0, max_retries: int = 5, retry_delay: float = 0.2,
                 max_retry_delay: float = 5.0, ssl_context: Optional[ssl.SSLContext] = None,
                 restore_buffer_bytes: int = DEFAULT_RESTORE_BUFFER_BYTES):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"base_url must be http(s)://host[:port], got: {base_url!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.prefix = parsed.path.rstrip("/")
        self._token = token
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.max_retry_delay = max_retry_delay
        self.ssl_context = ssl_context
        RestoreBuffer(restore_buffer_bytes, 0)  # validates
        self.restore_buffer_bytes = restore_buffer_bytes

    # ---- plumbing ----

    def _connection(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        t = self.timeout if timeout is None else timeout
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=t, context=self.ssl_context)
        return http.client.HTTPConnection(self.host, self.port, timeout=t)

    def _headers(self) -> dict:
        token = self._token() if callable(self._token) else self._token
        return with_trace_context({"Authorization": f"Bearer {token}"} if token else {})

    def events_path(self, run_id: str) -> str:
        return f"{self.prefix}/v1/runs/{run_id}/events"

    def _request(self, method: str, path: str, body: Optional[bytes] = None,
                 headers: Optional[dict] = None, run_id: Optional[str] = None):
        conn = self._connection()
        try:
            all_headers = {**self._headers(), **(headers or {})}
            conn.request(method, path, body=body, headers=all_headers)
            response = conn.getresponse()
            return response.status, response.getheader("Retry-After"), response.read()
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
        return RunPublisher(self, _check_run_id(run_id))

    def publish(self, run_id: str, events: Iterable[Any]) -> PublishResult:
        """Publishes a batch of events in one (non-streamed) request."""
        _check_run_id(run_id)
        body = b"".join(event_line(e) for e in events)
        status, retry_after, reply = self._request(
            "POST", self.events_path(run_id), body, {"Content-Type": "application/x-ndjson"}, run_id)
        return _results.published(run_id, status, retry_after, reply)

    def status(self, run_id: str) -> Optional[RunStatus]:
        """The run's status, or None if the server has no such run (404)."""
        _check_run_id(run_id)
        status, retry_after, reply = self._request("GET", f"{self.prefix}/v1/runs/{run_id}", run_id=run_id)
        return _results.status_of(run_id, status, retry_after, reply)

    def delete(self, run_id: str) -> None:
        """Stops a running run (its readers get RUN_ERROR STOPPED, its open publisher a
        ``RunStoppedError``; it stays readable for the server's retention), or drops an ended run now."""
        _check_run_id(run_id)
        status, retry_after, reply = self._request("DELETE", f"{self.prefix}/v1/runs/{run_id}", run_id=run_id)
        _results.check_deleted(run_id, status, retry_after, reply)

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
        _check_run_id(run_id)
        conn = self._connection(timeout=None)
        try:
            conn.putrequest("POST", self.events_path(run_id))
            for k, v in {**self._headers(), "Content-Type": content_type, "Transfer-Encoding": "chunked"}.items():
                conn.putheader(k, v)
            conn.endheaders()
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
            response = conn.getresponse()
            reply = response.read()
            if response.status != 200:
                raise self.http_error(run_id, response.status, reply, response.getheader("Retry-After"))
            return self.parse_result(run_id, reply)
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


def restore_header(restore_to: int) -> dict[str, str]:
    return {"X-IQStream-Restore": str(restore_to)} if restore_to > 0 else {}


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


class RunPublisher:
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
        self.requests_started = 0
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
    def restores(self) -> int:
        """How many times the run was restored on a new owner (its node died)."""
        return self._repair.restores

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
                response = self._open_conn.getresponse()
                reply = response.read()
                if response.status == 200:
                    self.result = self.client.parse_result(self.run_id, reply)
                    self._repair.confirmed()
                    self._close()
                    return self.result
                self._refused(response.status, reply, response.getheader("Retry-After"), finishing=True)
            except (OSError, http.client.HTTPException) as e:
                self._recover(e, finishing=True)
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
        conn.putrequest("POST", self.client.events_path(self.run_id))
        # Last-Event-ID: the run's event count this request starts at. The server refuses with 409
        # run_lost (no node holds the run) or event_id_mismatch (it holds another count) instead of
        # starting a fresh run at id 1 or appending at the wrong place.
        for k, v in {**self.client._headers(), "Content-Type": "application/x-ndjson",
                     "Transfer-Encoding": "chunked", "Last-Event-ID": str(last_event_id),
                     **restore_header(restore_to)}.items():
            conn.putheader(k, v)
        conn.endheaders()
        self._conn = conn
        self.requests_started += 1

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _handle_early_answer(self) -> None:
        try:
            response = self._open_conn.getresponse()
            reply = response.read()
        except (OSError, http.client.HTTPException) as e:
            self._recover(e)
            return
        if response.status == 200:  # the server closed our request early: continue over a new one
            self._recover(IqStreamError("the server ended the publish request early", self.run_id))
            return
        self._refused(response.status, reply, response.getheader("Retry-After"))

    def _refused(self, status: int, reply: bytes, retry_after: Optional[str], finishing: bool = False) -> None:
        error = self.client.http_error(self.run_id, status, reply, retry_after)
        self._perform(self._repair.refused(error, self.requests_started, finishing))

    def _recover(self, cause: BaseException, finishing: bool = False) -> None:
        self._perform(self._repair.broke(cause, finishing))

    def _fail(self, error: BaseException) -> NoReturn:
        if self._failure is None:
            self._failure = error
        self._close()
        raise error

    def _perform(self, step: Step) -> None:
        """Performs the I/O that each step of the repair names, until it is done (the run continues over a new
        request, or the publish is complete) or fails (raised)."""
        while True:
            self._close()
            if isinstance(step, Fail):
                self._fail(step.error)
            if isinstance(step, Done):
                self.result = step.result
                return
            if isinstance(step, Wait):
                time.sleep(step.seconds)
                step = self._repair.waited()
            elif isinstance(step, AskStatus):
                try:
                    status = self.client.status(self.run_id)
                except IqStreamError as e:
                    step = self._repair.status_failed(e)
                    continue
                step = self._repair.status_is(status)
            else:
                try:
                    if isinstance(step, Probe):
                        self._start_request(step.last_event_id)
                        self._open_conn.send(b"0\r\n\r\n")
                        response = self._open_conn.getresponse()
                        reply = response.read()
                        error = None if response.status == 200 else self.client.http_error(
                            self.run_id, response.status, reply, response.getheader("Retry-After"))
                        step = self._repair.probe_answered(error, self.requests_started)
                        continue
                    self._start_request(step.last_event_id, step.restore_to)
                    for line in step.lines:
                        self._open_conn.send(b"%x\r\n" % len(line) + line + b"\r\n")
                    return
                except (OSError, http.client.HTTPException) as e:
                    step = self._repair.request_broke(e)
