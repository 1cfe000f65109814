"""ResumableAGUI against hostile or careless clients, on uvicorn and a real IQ-Stream server: POSTs of one run at
once (a double submit, a retry) each get an answer of their own, and a ``Last-Event-ID`` that is not an event id
is answered ``400 bad_last_event_id`` before the app is called.

The app is a plain FastAPI route, not a framework's endpoint: what is tested is the middleware's side of the
answer (the app answering JSON instead of SSE, a header meant for one caller), which no framework changes."""

from __future__ import annotations

import asyncio
import json
import time
import unittest
from typing import Any, Optional

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from iqstream.asgi import ResumableAGUI

from ..support import ServerProcess
from . import shared_server
from .harness import AppInstance, post_run, run_input


class Gate:
    """What the route does and when: it waits for ``release`` before answering; counts its calls."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0


def json_app(gate: Gate, status: int) -> FastAPI:
    """An AG-UI route that refuses the run with a JSON answer (an app's own 403 or 422), once released."""
    app = FastAPI()

    @app.post("/agent")
    async def run_agent(request: Request) -> Any:
        body = await request.json()
        gate.calls += 1
        await gate.release.wait()
        return JSONResponse({"detail": f"refused run {body['runId']}", "padding": "x" * 2000}, status_code=status,
                            headers={"set-cookie": "session=first-caller; HttpOnly"})

    return app


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

    async def at_once(self, instance: AppInstance, counter: CountRequests, gate: Gate, body: dict, read: Any,
                      posts: int = 2) -> list[Any]:
        """POSTs ``body`` ``posts`` times, all but the first while the app still holds the first; then releases
        the app. Their answers, in order."""
        first = asyncio.ensure_future(read(f"{instance.url}/agent", body))
        await _until(lambda: gate.calls == 1, 20, "the app to get the first POST")
        others = [asyncio.ensure_future(read(f"{instance.url}/agent", body)) for _ in range(posts - 1)]
        await _until(lambda: counter.entered == posts, 20, "the other POSTs to reach the middleware")
        await asyncio.sleep(0.3)  # their bodies read, and they are waiting on the run
        gate.release.set()
        done, pending = await asyncio.wait({first, *others}, timeout=15)
        for task in pending:
            task.cancel()
        self.assertEqual(len(pending), 0, f"every POST was answered (none hangs): {len(pending)} of {posts} were not")
        return [first.result(), *(task.result() for task in others)]

    # ---- POSTs of one run at once ----

    async def test_posts_of_one_run_at_once_answered_json_each_get_their_own_answer(self) -> None:
        for status in (403, 422):
            with self.subTest(status=status):
                gate = Gate()
                instance, middleware, counter = await self.serve(json_app(gate, status))
                body = run_input()
                first, *others = await self.at_once(instance, counter, gate, body, raw_post, posts=3)

                self.assertEqual(first.status_code, status, "the first POST gets the app's answer")
                self.assertEqual(first.json()["detail"], f"refused run {body['runId']}", "whole, not truncated")
                self.assertEqual(first.headers.get("set-cookie"), "session=first-caller; HttpOnly")

                for other in others:
                    self.assertEqual(other.status_code, 409, other.text)
                    self.assertEqual(other.headers.get("content-type"), "application/json")
                    self.assertEqual(other.json()["error"], "run_in_progress")
                    self.assertNotIn("set-cookie", other.headers, "nothing of the first caller's answer")
                    self.assertNotIn("refused run", other.text)
                self.assertEqual(gate.calls, 1, "the app ran once")
                await _until(lambda: not middleware.runs, 10, "the middleware to drop the run")

                # once the first is answered, the same POST again is the app's again (a retry of a refused run)
                gate.release.set()
                again = await raw_post(f"{instance.url}/agent", body)
                self.assertEqual(again.status_code, status)
                self.assertEqual(again.json()["detail"], f"refused run {body['runId']}")
                self.assertEqual(gate.calls, 2)

    async def test_two_posts_of_one_streamed_run_read_the_run_and_only_the_first_gets_the_apps_headers(self) -> None:
        gate = Gate()
        instance, middleware, counter = await self.serve(sse_app(gate))
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"
        first, second = await self.at_once(instance, counter, gate, body, post_run)

        for answer in (first, second):
            self.assertEqual(answer.status, 200)
            self.assertTrue(answer.ended)
            self.assertEqual(answer.headers.get("iqstream-run-id"), run_id)
            self.assertEqual(answer.ids, [1, 2, 3, 4, 5], "the run as IQ-Stream holds it, each event once")
            self.assertEqual(answer.events[-1]["type"], "RUN_FINISHED")
        self.assertEqual(first.headers.get("set-cookie"), "session=first-caller; HttpOnly")
        self.assertNotIn("set-cookie", second.headers, "the app's headers are the first caller's alone")
        self.assertEqual(gate.calls, 1, "the second POST joined the run; the app ran once")
        await _until(lambda: not middleware.runs, 10, "the middleware to drop the run")

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
