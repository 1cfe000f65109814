"""ResumableAGUI against hostile or careless clients, on uvicorn and a real IQ-Stream server: a ``Last-Event-ID``
that is not an event id is answered ``400 bad_last_event_id`` before the app is called.

The app is a plain FastAPI route, not a framework's endpoint: what is tested is the middleware's side of the
answer, which no framework changes."""

from __future__ import annotations

import asyncio
import json
import time
import unittest
from typing import Any, Optional

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from iqstream.asgi import ResumableAGUI

from ..support import ServerProcess
from . import shared_server
from .harness import AppInstance, post_run, run_input


class Gate:
    """What the route does and when: it waits for ``release`` before answering; counts its calls."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0


def sse_app(gate: Gate) -> FastAPI:
    """An AG-UI route answering SSE, with a header meant for its caller alone (a session cookie); its first event
    waits for ``release``."""
    app = FastAPI()

    @app.post("/agent")
    async def run_agent(request: Request) -> Any:
        body = await request.json()
        gate.calls += 1
        thread_id, run_id = body["threadId"], body["runId"]

        async def events() -> Any:
            await gate.release.wait()
            for event in ({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id},
                          {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
                          {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hello"},
                          {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
                          {"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}):
                yield f"data: {json.dumps(event)}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"set-cookie": "session=first-caller; HttpOnly"})

    return app


class CountRequests:
    """Outermost ASGI layer: counts the HTTP requests that reached the middleware."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.entered = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            self.entered += 1
        await self.app(scope, receive, send)


async def raw_post(url: str, body: dict, headers: Optional[dict] = None, timeout_s: float = 20.0) -> httpx.Response:
    """One POST, its whole answer read (status, headers, body)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
        return await asyncio.wait_for(client.post(url, json=body, headers=headers or {}), timeout_s)


class HostileClientTest(unittest.IsolatedAsyncioTestCase):
    server: ServerProcess

    @classmethod
    def setUpClass(cls) -> None:  # noqa: N802
        cls.server = shared_server()

    async def asyncSetUp(self) -> None:  # noqa: N802
        asyncio.get_running_loop().slow_callback_duration = 10.0

    async def serve(self, app: FastAPI) -> tuple[AppInstance, ResumableAGUI, CountRequests]:
        middleware = ResumableAGUI(app, url=self.server.base_url,
                                   token=self.server.token({"publish": ["*"], "subscribe": ["*"]}))
        counter = CountRequests(middleware)
        instance = await AppInstance(counter).start()
        self.addAsyncCleanup(instance.stop)
        return instance, middleware, counter

    # ---- Last-Event-ID ----

    async def test_a_last_event_id_that_is_not_an_event_id_is_400_before_the_app_is_called(self) -> None:
        gate = Gate()
        gate.release.set()
        instance, middleware, _ = await self.serve(sse_app(gate))
        bad = {
            "superscript two": "\u00b2".encode("latin-1"),
            "5,000 digits": b"1" * 5000,
            "past the server's max (2^31 - 1)": b"2147483648",
            "a sign": b"-1",
            "a fraction": b"1.5",
            "an Arabic-Indic digit, UTF-8": "\u0663".encode("utf-8"),
        }
        for what, value in bad.items():
            with self.subTest(last_event_id=what):
                body = run_input()
                answer = await raw_post(f"{instance.url}/agent", body, headers={"Last-Event-ID": value})
                self.assertEqual(answer.status_code, 400, answer.text[:300])
                self.assertEqual(answer.headers.get("content-type"), "application/json")
                self.assertEqual(answer.json()["error"], "bad_last_event_id")
        self.assertEqual(gate.calls, 0, "no bad id started the agent")
        self.assertEqual(middleware.runs, {})

        # what the server takes is taken: 0 to 2^31 - 1, leading zeros
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"
        whole = await post_run(f"{instance.url}/agent", body)
        self.assertEqual(whole.ids, [1, 2, 3, 4, 5])
        for value, ids in ((b"0", [1, 2, 3, 4, 5]), (b"3", [4, 5]), (b"0" * 5000 + b"2", [3, 4, 5])):
            with self.subTest(last_event_id=value[:12]):
                answer = await post_run_with(f"{instance.url}/agent", body, value)
                self.assertEqual(answer.status_code, 200, answer.text[:300])
                self.assertEqual(answer.headers.get("iqstream-run-id"), run_id)
                self.assertEqual(_ids(answer.text), ids)
        at_end = await post_run_with(f"{instance.url}/agent", body, b"2147483647")
        self.assertEqual(at_end.status_code, 204, "the server's max on an ended run: nothing is left")
        self.assertEqual(gate.calls, 1)


async def post_run_with(url: str, body: dict, last_event_id: bytes) -> httpx.Response:
    return await raw_post(url, body, headers={"Accept": "text/event-stream", "Last-Event-ID": last_event_id})


def _ids(sse: str) -> list[int]:
    return [int(line[3:].strip()) for line in sse.splitlines() if line.startswith("id:")]


async def _until(condition: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.02)
