"""The requests of IQ-Stream's run API, built without I/O: the server's address and token (``Api``), each call's
method, path, headers and body (``Request``), the event lines a publish carries, and the settings both clients
hold (``ClientCore``).

One of the three sans-I/O parts the synchronous client (``client.py``, on ``http.client``) and the asyncio client
(``aio.py``, on ``_http``) share: these build what is sent, ``_results`` says what an answer comes to (a result or
the error to raise), ``_repair`` decides what a broken publish does next. The clients only send, read and sleep.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from typing import Any, Callable, Iterable, NamedTuple, Optional, Union

from ._repair import RestoreBuffer
from ._trace import with_trace_context

__all__ = ["Api", "ClientCore", "Request", "TokenSource", "DEFAULT_RESTORE_BUFFER_BYTES", "RUN_ID", "TERMINAL_TYPES",
           "check_run_id", "event_line", "is_terminal", "restore_header"]

DEFAULT_RESTORE_BUFFER_BYTES = 8 * 1024 * 1024
RUN_ID = re.compile(r"^[A-Za-z0-9._~:-]{1,128}$")
TERMINAL_TYPES = ("RUN_FINISHED", "RUN_ERROR")
NDJSON = "application/x-ndjson"
TokenSource = Union[str, Callable[[], str], None]


def check_run_id(run_id: str) -> str:
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


def is_terminal(line: bytes) -> bool:
    """The event line is a run's last (``RUN_FINISHED`` or ``RUN_ERROR``)."""
    if b'"RUN_FINISHED"' not in line and b'"RUN_ERROR"' not in line:
        return False
    try:
        return json.loads(line).get("type") in TERMINAL_TYPES
    except (ValueError, AttributeError):
        return False


def restore_header(restore_to: int) -> dict[str, str]:
    """``X-IQStream-Restore`` for a restore of the run's first ``restore_to`` events (none when 0)."""
    return {"X-IQStream-Restore": str(restore_to)} if restore_to > 0 else {}


class Request(NamedTuple):
    """One request to send as it is: ``body`` None streams the body in chunks (the sender adds
    ``Transfer-Encoding: chunked``)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Optional[bytes] = None


class Api:
    """One IQ-Stream server (``url``: ``http(s)://host[:port][/prefix]``) and the token its requests carry: a JWT,
    or a callable returning one, asked each time a request is built. ``url_name`` names the argument in the
    ``ValueError`` for a bad url."""

    def __init__(self, url: str, token: TokenSource, url_name: str = "url"):
        parsed = urllib.parse.urlsplit(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError(f"{url_name} must be http(s)://host[:port], got: {url!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.prefix = parsed.path.rstrip("/")
        self.token = token

    def headers(self) -> dict[str, str]:
        """Every request's headers: ``Authorization`` (when there is a token) and the trace context."""
        token = self.token() if callable(self.token) else self.token
        return with_trace_context({"Authorization": f"Bearer {token}"} if token else {})

    def run_path(self, run_id: str) -> str:
        return f"{self.prefix}/v1/runs/{run_id}"

    def events_path(self, run_id: str) -> str:
        return f"{self.prefix}/v1/runs/{run_id}/events"

    def publish(self, run_id: str, events: Iterable[Any]) -> Request:
        """A batch of events in one request (``POST .../events``, NDJSON)."""
        check_run_id(run_id)
        body = b"".join(event_line(e) for e in events)
        return Request("POST", self.events_path(run_id), {**self.headers(), "Content-Type": NDJSON}, body)

    def status(self, run_id: str) -> Request:
        return Request("GET", self.run_path(check_run_id(run_id)), self.headers())

    def delete(self, run_id: str) -> Request:
        return Request("DELETE", self.run_path(check_run_id(run_id)), self.headers())

    def stream(self, run_id: str, last_event_id: int, restore_to: int = 0) -> Request:
        """A streamed publish (chunked NDJSON). ``Last-Event-ID``: the run's event count this request starts at.
        The server refuses with 409 run_lost (no node holds the run) or event_id_mismatch (it holds another
        count) instead of starting a fresh run at id 1 or appending at the wrong place. ``restore_to`` > 0: a
        restore of the run's first ``restore_to`` events (resent first)."""
        return Request("POST", self.events_path(run_id), {
            **self.headers(), "Content-Type": NDJSON, "Last-Event-ID": str(last_event_id),
            **restore_header(restore_to)})

    def pipe(self, run_id: str, content_type: str) -> Request:
        """A streamed publish of an SSE (or other ``content_type``) byte stream, relayed as it comes."""
        return Request("POST", self.events_path(check_run_id(run_id)),
                       {**self.headers(), "Content-Type": content_type})

    def subscribe(self, run_id: str, last_event_id: Optional[int]) -> Request:
        """A read of the run (``GET .../events``, SSE), after ``last_event_id`` when given."""
        headers = {**self.headers(), "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        return Request("GET", self.events_path(run_id), headers)


class ClientCore:
    """What the synchronous and the asyncio client hold, without I/O: the server (``api``; ``scheme``, ``host``,
    ``port`` and ``prefix`` are its), the timeout of a request, and the settings of a broken publish's repair
    (``_repair.RetrySettings``: ``max_retries``, ``retry_delay``, ``max_retry_delay``) and its restore buffer
    (``restore_buffer_bytes``, validated here)."""

    def __init__(self, url: str, token: TokenSource, url_name: str, *, timeout: float, max_retries: int,
                 retry_delay: float, max_retry_delay: float, restore_buffer_bytes: int):
        self.api = Api(url, token, url_name)
        self.scheme = self.api.scheme
        self.host = self.api.host
        self.port = self.api.port
        self.prefix = self.api.prefix
        self.timeout = timeout
        self.max_retries = max_retries
        self.retry_delay = retry_delay
        self.max_retry_delay = max_retry_delay
        RestoreBuffer(restore_buffer_bytes, 0)  # validates
        self.restore_buffer_bytes = restore_buffer_bytes

    def headers(self) -> dict[str, str]:
        return self.api.headers()

    def events_path(self, run_id: str) -> str:
        return self.api.events_path(run_id)
