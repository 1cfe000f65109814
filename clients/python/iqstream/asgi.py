"""``ResumableAGUI``: one line makes any AG-UI endpoint of an ASGI app resumable and stoppable through IQ-Stream.

    from iqstream.asgi import ResumableAGUI

    app.add_middleware(ResumableAGUI)          # url=$IQSTREAM_URL, token=$IQSTREAM_TOKEN

An AG-UI endpoint is a POST of a ``RunAgentInput`` (JSON with ``threadId`` and ``runId``) answered
``200 text/event-stream``, whichever framework serves it (pydantic-ai's ``AGUIAdapter``, ag-ui-langgraph,
agent-framework-ag-ui, ...). For each such POST the middleware:

1. runs the app's handler on a task of its own, detached from the request: the app never sees the browser's
   disconnect (its ``receive`` reports none), so the agent runs to its end;
2. publishes the app's SSE events into IQ-Stream as run ``{threadId}:{runId}`` (``run_id=`` maps otherwise),
   over one streamed request repaired after a broken connection (:class:`iqstream.AsyncRunPublisher`);
3. answers the POST with the run as IQ-Stream serves it (``GET /v1/runs/{id}/events``): the same events, each
   with its ``id:`` line, and header ``IQStream-Run-Id``;
4. cancels the handler's task the moment the run is stopped (``DELETE /v1/runs/{id}`` from any instance, any
   language: IQ-Stream answers the open publish ``409 run_stopped``); readers get ``RUN_ERROR`` ``STOPPED``;
5. joins instead of starting the agent twice: a POST of a run that IQ-Stream already holds (running, or ended
   and still retained) is answered from IQ-Stream without calling the app, from ``Last-Event-ID`` when the
   request carries one. That is the resume: the same POST again, on any app instance, with ``Last-Event-ID``.
   A POST of a run this process is still starting (a double submit, a retry) waits for the app's answer to the
   first: a stream is joined as above, without the app's headers (they are the first caller's); any other answer
   is the first request's alone, and the second gets ``409 run_in_progress``.

Any other request, and any answer of the app that is not ``200 text/event-stream``, passes through unchanged.
The token needs the publish and the subscribe right on the run ids (``{"iqstream": {"publish": ["*"],
"subscribe": ["*"]}}``). The middleware calls no app code for a join: put authentication in front of it
(added after it, so it runs first). Confined to the app's event loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Awaitable, Callable, Iterable, MutableMapping, Optional

from .aio import AsyncClient, AsyncRunPublisher, TokenSource
from .client import RUN_ID, IqStreamError, IqStreamHttpError
from ._sse import SseParser

__all__ = ["ResumableAGUI", "default_run_id"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("iqstream.asgi")

# the app's response headers not copied onto the answer (it is IQ-Stream's stream, not the app's body)
_NOT_COPIED = {b"content-length", b"content-type", b"transfer-encoding", b"connection", b"content-encoding",
               b"cache-control", b"x-accel-buffering"}


def default_run_id(run_input: dict) -> str:
    """``{threadId}:{runId}``: a run's id in IQ-Stream, unique per thread and readable with a ``thread:*`` pattern."""
    return f"{run_input['threadId']}:{run_input['runId']}"


class _Decision:
    """How the POST that started a run is answered: from IQ-Stream, by the app itself, or with an error."""

    SSE = "sse"
    PASS = "pass"
    ERROR = "error"

    def __init__(self, kind: str, status: int = 200, error: Optional[dict] = None,
                 headers: Optional[list] = None, queue: Optional[asyncio.Queue] = None):
        self.kind = kind
        self.status = status
        self.error = error
        self.headers = headers or []
        self.queue = queue


class _DriveState:
    """What the app's answer turned out to be: ``mode`` None until its start, then "sse" (published) or "pass"."""

    def __init__(self) -> None:
        self.mode: Optional[str] = None
        self.body_sent = False
        self.headers: list[tuple[bytes, bytes]] = []


class _Run:
    """A run this process is driving (or deciding about): its task and how its first POST is answered."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.decision: asyncio.Future = asyncio.get_running_loop().create_future()
        self.task: Optional[asyncio.Task] = None
        self.publisher: Optional[AsyncRunPublisher] = None

    def decide(self, decision: _Decision) -> None:
        if not self.decision.done():
            self.decision.set_result(decision)


class ResumableAGUI:
    """ASGI middleware: every AG-UI endpoint of ``app`` becomes an IQ-Stream run (see the module's doc).

    Options: ``url`` / ``token`` (default ``$IQSTREAM_URL`` / ``$IQSTREAM_TOKEN``; the token a string or a
    callable), ``paths`` (the endpoints' paths; default every POST whose JSON body is a ``RunAgentInput``),
    ``run_id`` (``RunAgentInput`` dict -> IQ-Stream run id; default ``{threadId}:{runId}``), ``client`` (an
    :class:`AsyncClient` instead of url/token), ``max_body_bytes`` (8 MiB: a larger body is answered 413),
    ``max_runs`` (runs driven at once by this process, 1000: beyond, 503 with ``Retry-After``).
    """

    def __init__(self, app: ASGIApp, url: Optional[str] = None, token: TokenSource = None, *,
                 paths: Optional[Iterable[str]] = None, run_id: Callable[[dict], str] = default_run_id,
                 client: Optional[AsyncClient] = None, max_body_bytes: int = 8 * 1024 * 1024,
                 max_runs: int = 1000):
        self.app = app
        self.client = client or AsyncClient(url, token)
        self.paths = None if paths is None else frozenset(paths)
        self.run_id = run_id
        self.max_body_bytes = max_body_bytes
        self.max_runs = max_runs
        self.runs: dict[str, _Run] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not self._may_be_agui(scope):
            await self.app(scope, receive, send)
            return
        body, complete, more = await _read_body(receive, self.max_body_bytes)
        if not complete:
            if self.paths is None:  # not known to be an endpoint of ours: the app decides about a large body
                await self.app(scope, _replay(body, receive, partial=more), send)
            else:
                await _answer_error(send, 413, "body_too_large",
                                    f"a RunAgentInput over {self.max_body_bytes} bytes (max_body_bytes)")
            return
        run_input = _run_input(body)
        if run_input is None:
            await self.app(scope, _replay(body, receive), send)
            return
        try:
            run_id = self.run_id(run_input)
        except Exception as e:  # noqa: BLE001 - the user's mapping: its failure is the request's
            await _answer_error(send, 400, "bad_run_id", f"the run_id mapping failed: {e!r}")
            return
        if not isinstance(run_id, str) or not RUN_ID.match(run_id):
            await _answer_error(send, 400, "bad_run_id",
                                f"the run id {run_id!r} is not 1-128 characters of [A-Za-z0-9._~:-]")
            return
        last_event_id = _last_event_id(_header(scope, b"last-event-id"))
        if last_event_id == _MALFORMED:
            await _answer_error(send, 400, "bad_last_event_id",
                                f"Last-Event-ID must be an event id: ASCII digits, 0 to {_MAX_EVENT_ID}")
            return
        run = self.runs.get(run_id)
        if run is not None:  # a second request for a run this process is deciding about or driving: a join
            decision: _Decision = await asyncio.shield(run.decision)
            if decision.kind == _Decision.SSE:  # the run is streamed: read it from IQ-Stream, without the
                await self._serve(run_id, last_event_id, [], receive, send)  # first caller's headers
            else:  # the app's answer, or the error, is the first request's alone
                await _answer_error(send, 409, "run_in_progress",
                                    "another request for this run is in progress and its answer is not a stream; "
                                    "send it again once that request is answered")
            return
        if len(self.runs) >= self.max_runs:
            await _answer_error(send, 503, "too_many_runs",
                                f"this instance drives {self.max_runs} runs (max_runs)", retry_after="1")
            return
        run = _Run(run_id)
        self.runs[run_id] = run
        run.task = asyncio.ensure_future(self._start(run, scope, body))
        decision = await asyncio.shield(run.decision)
        if decision.kind == _Decision.PASS and decision.queue is not None:
            await _relay(decision.queue, send)
        elif decision.kind == _Decision.ERROR:
            error = decision.error or {"error": "error", "message": ""}
            await _answer_error(send, decision.status, error["error"], error["message"])
        else:
            await self._serve(run_id, last_event_id, decision.headers, receive, send)

    def _may_be_agui(self, scope: Scope) -> bool:
        if self.paths is not None:
            return scope["path"] in self.paths
        content_type = _header(scope, b"content-type") or "application/json"
        return content_type.split(";", 1)[0].strip().lower() == "application/json"

    # ---- the run's task ----

    async def _start(self, run: _Run, scope: Scope, body: bytes) -> None:
        try:
            try:
                status = await self.client.status(run.run_id)
            except IqStreamHttpError as e:
                run.decide(_Decision(_Decision.ERROR, e.status, {"error": e.code or "iqstream_error", "message": str(e)}))
                return
            except IqStreamError as e:
                run.decide(_Decision(_Decision.ERROR, 502, {"error": "iqstream_unreachable", "message": str(e)}))
                return
            if status is not None:  # IQ-Stream holds the run (driven by another instance, or ended): join it
                run.decide(_Decision(_Decision.SSE))
                return
            await self._drive(run, scope, body)
        except Exception:  # noqa: BLE001 - the app's own failure, on a task nobody awaits: logged here
            log.exception("run %s: the AG-UI endpoint failed", run.run_id)
        finally:
            if self.runs.get(run.run_id) is run:
                del self.runs[run.run_id]
            run.decide(_Decision(_Decision.ERROR, 500, {"error": "agent_failed",
                                                         "message": "the agent ended before it answered"}))

    async def _drive(self, run: _Run, scope: Scope, body: bytes) -> None:
        """Runs the app's handler, its SSE answer published into the run. The handler's task is this task."""
        task = asyncio.current_task()
        stop = {"asked": False, "in_send": False, "cancelled": False}

        def cancel_agent() -> None:
            """The run was stopped (or cannot be published): cancel the agent's task. The cancel has to land
            where the app awaits its agent, inside the framework's stream: a CancelledError raised in app_send
            would leave the framework's generator suspended, and a framework that runs its graph on a task of
            its own (LangGraph's astream_events) would go on producing. So inside app_send it is deferred to
            app_send's way out, and app_send does nothing more once the run is stopped."""
            stop["asked"] = True
            if stop["cancelled"] or stop["in_send"] or task is None:
                return
            stop["cancelled"] = True
            task.cancel()

        publisher = self.client.open_run(run.run_id, on_stop=cancel_agent)
        run.publisher = publisher
        parser = SseParser()
        finished = asyncio.Event()
        state = _DriveState()

        async def app_receive() -> Message:
            if not state.body_sent:
                state.body_sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            await finished.wait()  # the browser's disconnect is not the agent's business
            return {"type": "http.disconnect"}

        async def app_send(message: Message) -> None:
            if stop["asked"]:
                return  # stopped: what the agent still says goes nowhere; its cancel is on its way
            stop["in_send"] = True
            try:
                await publish(message)
            except IqStreamError as e:  # a stop, or IQ-Stream refused or is gone for good: nobody can read more
                if not publisher.stopped:
                    log.warning("run %s: publishing failed, the agent is cancelled: %r", run.run_id, e)
                stop["asked"] = True
            finally:
                stop["in_send"] = False
                if stop["asked"] and not stop["cancelled"] and task is not None:
                    stop["cancelled"] = True
                    asyncio.get_running_loop().call_soon(task.cancel)  # lands at the app's next await

        async def publish(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                headers = list(message.get("headers") or [])
                content_type = next((v for k, v in headers if k.lower() == b"content-type"), b"").decode("latin-1")
                if message["status"] == 200 and content_type.split(";", 1)[0].strip().lower() == "text/event-stream":
                    state.mode = "sse"
                    state.headers = [(k, v) for k, v in headers if k.lower() not in _NOT_COPIED]
                    try:
                        await publisher.open()
                    except IqStreamHttpError as e:
                        run.decide(_Decision(_Decision.ERROR, e.status if e.status < 500 else 502,
                                             {"error": e.code or "iqstream_refused", "message": str(e)}))
                        raise
                    except IqStreamError as e:
                        run.decide(_Decision(_Decision.ERROR, 502, {"error": "iqstream_unreachable", "message": str(e)}))
                        raise
                else:
                    state.mode = "pass"
                    queue: asyncio.Queue = asyncio.Queue()
                    run.decide(_Decision(_Decision.PASS, queue=queue))
                    await queue.put(message)
            elif kind == "http.response.body":
                if state.mode == "sse":
                    chunk = message.get("body") or b""
                    if chunk:
                        for frame in parser.feed(chunk):
                            await publisher.send(frame.data)
                            if not run.decision.done():
                                run.decide(_Decision(_Decision.SSE, headers=state.headers))
                    if not message.get("more_body", False):
                        await self._finish(publisher)
                elif state.mode == "pass":
                    await run.decision.result().queue.put(message)

        # ASGI 2.4 for the app: a disconnect would show as an OSError from send, and it never comes. Starlette's
        # StreamingResponse then streams on this task instead of under an anyio task group, whose level-triggered
        # cancellation would also cancel the framework's own clean-up (LangGraph's astream_events cancelling its
        # graph's task) and leave the graph running after a stop.
        app_scope = {**scope, "asgi": {**(scope.get("asgi") or {}), "spec_version": "2.4"}}
        try:
            await self.app(app_scope, app_receive, app_send)
            if state.mode == "sse":
                await self._finish(publisher)
        except asyncio.CancelledError:
            if not stop["cancelled"]:
                raise
            log.info("run %s %s: the agent's task was cancelled", run.run_id,
                     "stopped" if publisher.stopped else "not publishable")
        except Exception as e:  # noqa: BLE001 - the agent failed: its readers get the run's end
            if state.mode == "sse" and publisher.opened and publisher.failure is None and publisher.result is None:
                log.warning("run %s: the agent failed: %r", run.run_id, e)
                await self._end_with(publisher, "AGENT_ERROR", f"the agent failed: {e!r}")
            elif state.mode != "pass":
                log.warning("run %s: not published: %r", run.run_id, e)
            else:
                raise
        finally:
            finished.set()
            publisher.close()
            if state.mode == "pass":  # the app's answer ends here even if the app did not end it
                await run.decision.result().queue.put({"type": "http.response.body", "body": b"", "more_body": False})

    async def _finish(self, publisher: AsyncRunPublisher) -> None:
        if publisher.result is not None or publisher.failure is not None:
            return
        if publisher.events_sent == 0 or not publisher.ended:
            await self._end_with(publisher, "INCOMPLETE", "the agent's answer ended without RUN_FINISHED")
        else:
            await publisher.finish()

    @staticmethod
    async def _end_with(publisher: AsyncRunPublisher, code: str, message: str) -> None:
        try:
            if not publisher.ended:
                await publisher.send({"type": "RUN_ERROR", "message": message[:500], "code": code})
            await publisher.finish()
        except IqStreamError as e:
            log.warning("run %s: could not end the run: %r", publisher.run_id, e)

    # ---- the answer: the run as IQ-Stream serves it ----

    async def _serve(self, run_id: str, last_event_id: Optional[int], app_headers: list,
                     receive: Receive, send: Send) -> None:
        started = False

        async def forward() -> None:
            nonlocal started
            async with self.client.subscribe(run_id, last_event_id) as stream:
                assert stream.response is not None
                if stream.response.status == 204:  # an ended run read to its end: nothing is left
                    started = True
                    await send({"type": "http.response.start", "status": 204,
                                "headers": [(b"iqstream-run-id", run_id.encode())]})
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                    return
                started = True
                await send({"type": "http.response.start", "status": 200, "headers": [
                    *app_headers,
                    (b"content-type", b"text/event-stream; charset=utf-8"),
                    (b"cache-control", b"no-cache"),
                    (b"x-accel-buffering", b"no"),
                    (b"iqstream-run-id", run_id.encode())]})
                async for chunk in stream.raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b"", "more_body": False})

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        forwarding = asyncio.ensure_future(forward())
        watching = asyncio.ensure_future(disconnected())
        try:
            done, _ = await asyncio.wait({forwarding, watching}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (forwarding, watching):
                task.cancel()
            await asyncio.gather(forwarding, watching, return_exceptions=True)
        if forwarding not in done or forwarding.cancelled():
            return  # the browser went: the run goes on; it resumes with Last-Event-ID
        error = forwarding.exception()
        if error is None:
            return
        if started:  # the stream broke after its start (an IQ-Stream node went): the browser resumes
            log.info("run %s: the answer's stream broke: %r", run_id, error)
            return
        if isinstance(error, IqStreamHttpError):
            await _answer_error(send, error.status, error.code or "iqstream_refused", str(error))
        elif isinstance(error, IqStreamError):
            await _answer_error(send, 502, "iqstream_unreachable", str(error))
        else:
            raise error


# Last-Event-ID as IQ-Stream takes it (server/.../wire/LastEventId.java): blank is none; else, once trimmed of
# control characters and spaces, ASCII decimal digits of a value from 0 to 2^31 - 1 (leading zeros allowed)
_MAX_EVENT_ID = 2**31 - 1
_MALFORMED = -1
_TRIMMED = "".join(chr(c) for c in range(0x21))


def _last_event_id(text: Optional[str]) -> Optional[int]:
    """The header's event id, None when absent or blank, ``_MALFORMED`` when it is not an event id. Never raises:
    ``str.isdigit`` takes "²" and any length, which ``int`` refuses or converts slowly."""
    if text is None:
        return None
    trimmed = text.strip(_TRIMMED)
    if not trimmed:
        return None if text.isspace() or not text else _MALFORMED
    if not (trimmed.isascii() and trimmed.isdigit()):
        return _MALFORMED
    significant = trimmed.lstrip("0")
    if len(significant) > len(str(_MAX_EVENT_ID)):
        return _MALFORMED
    value = int(significant or "0")
    return value if value <= _MAX_EVENT_ID else _MALFORMED


def _header(scope: Scope, name: bytes) -> Optional[str]:
    for key, value in scope.get("headers") or ():
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def _read_body(receive: Receive, limit_bytes: int) -> tuple[bytes, bool, bool]:
    """The request body: (bytes read, whether they are all of it within ``limit_bytes``, whether more is to come).
    Reading stops once it passes the limit; a body over it that came whole is not followed by more."""
    parts: list[bytes] = []
    total = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(parts), True, False
        chunk = message.get("body") or b""
        parts.append(chunk)
        total += len(chunk)
        more = bool(message.get("more_body", False))
        if total > limit_bytes:
            return b"".join(parts), False, more
        if not more:
            return b"".join(parts), True, False


def _replay(body: bytes, receive: Receive, partial: bool = False) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": partial}
        return await receive()
    return replayed


def _run_input(body: bytes) -> Optional[dict]:
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("threadId"), str) and isinstance(doc.get("runId"), str):
        return doc
    return None


async def _relay(queue: asyncio.Queue, send: Send) -> None:
    while True:
        message = await queue.get()
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            return


async def _answer_error(send: Send, status: int, code: str, message: str, retry_after: Optional[str] = None) -> None:
    body = json.dumps({"error": code, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after:
        headers.append((b"retry-after", retry_after.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})
