"""ResumableAGUI's limits and errors (PYTHON.md, "Limits and errors"), on uvicorn and a real IQ-Stream server:
each row of the table, its figure or its code. ``bad_last_event_id`` and ``run_in_progress`` are in
test_middleware_hostile.py."""

from __future__ import annotations

import asyncio
import json
import socket
import unittest
from typing import Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from iqstream.asgi import ResumableAGUI

from ..support import ServerProcess
from . import shared_server
from .harness import AppInstance, post_run, run_input


class Calls:
    """What the route saw: how often it was called, the body sizes; ``release`` gates its first event."""

    def __init__(self) -> None:
        self.calls = 0
        self.body_bytes: list[int] = []
        self.release = asyncio.Event()
        self.release.set()


def agent_app(calls: Calls, ending: str = "finished") -> FastAPI:
    """An AG-UI route answering SSE. ``ending``: "finished" (RUN_FINISHED), "cut" (the answer ends without it) or
    "raise" (the agent raises after its first events)."""
    app = FastAPI()

    @app.post("/agent")
    async def run_agent(request: Request) -> Any:
        raw = await request.body()
        calls.calls += 1
        calls.body_bytes.append(len(raw))
        body = json.loads(raw)
        thread_id, run_id = body["threadId"], body["runId"]

        async def events() -> Any:
            await calls.release.wait()
            yield f"data: {json.dumps({'type': 'RUN_STARTED', 'threadId': thread_id, 'runId': run_id})}\n\n"
            yield f"data: {json.dumps({'type': 'TEXT_MESSAGE_START', 'messageId': 'm1', 'role': 'assistant'})}\n\n"
            if ending == "raise":
                raise RuntimeError("the model went away")
            if ending == "finished":
                yield f"data: {json.dumps({'type': 'TEXT_MESSAGE_END', 'messageId': 'm1'})}\n\n"
                yield f"data: {json.dumps({'type': 'RUN_FINISHED', 'threadId': thread_id, 'runId': run_id})}\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    return app


async def post(url: str, body: Any, timeout_s: float = 20.0) -> httpx.Response:
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
        if isinstance(body, bytes):
            return await client.post(url, content=body, headers={"Content-Type": "application/json"})
        return await client.post(url, json=body)


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class MiddlewareLimitsTest(unittest.IsolatedAsyncioTestCase):
    server: ServerProcess

    @classmethod
    def setUpClass(cls) -> None:  # noqa: N802
        cls.server = shared_server()

    async def asyncSetUp(self) -> None:  # noqa: N802
        asyncio.get_running_loop().slow_callback_duration = 10.0

    async def serve(self, app: FastAPI, url: str = "", **options: Any) -> tuple[AppInstance, ResumableAGUI]:
        middleware = ResumableAGUI(app, url=url or self.server.base_url,
                                   token=self.server.token({"publish": ["*"], "subscribe": ["*"]}), **options)
        instance = await AppInstance(middleware).start()
        self.addAsyncCleanup(instance.stop)
        return instance, middleware

    def assert_error(self, answer: httpx.Response, status: int, code: str) -> None:
        self.assertEqual(answer.status_code, status, answer.text[:300])
        self.assertEqual(answer.headers.get("content-type"), "application/json")
        self.assertEqual(answer.json()["error"], code, answer.text[:300])

    async def test_a_body_over_max_body_bytes_is_413_on_its_paths_and_the_apps_elsewhere(self) -> None:
        calls = Calls()
        body = run_input()
        body["context"] = [{"description": "padding", "value": "x" * 5000}]
        raw = json.dumps(body).encode()
        instance, _ = await self.serve(agent_app(calls), paths=["/agent"], max_body_bytes=4096)
        self.assert_error(await post(f"{instance.url}/agent", raw), 413, "body_too_large")
        self.assertEqual(calls.calls, 0, "the app never saw it")
        small = await post_run(f"{instance.url}/agent", run_input())
        self.assertEqual(small.status, 200, "a body within the limit is a run")

        # without paths the middleware does not know the endpoint: the app gets the whole body and decides
        calls = Calls()
        instance, _ = await self.serve(agent_app(calls), max_body_bytes=4096)
        answer = await post(f"{instance.url}/agent", raw)
        self.assertEqual(calls.body_bytes, [len(raw)], "the app got every byte: " + answer.text[:200])

    async def test_runs_past_max_runs_are_503_too_many_runs_with_retry_after(self) -> None:
        calls = Calls()
        calls.release.clear()  # the first run is held at its first event: driven until released
        instance, middleware = await self.serve(agent_app(calls), max_runs=1)
        first = asyncio.ensure_future(post_run(f"{instance.url}/agent", run_input()))
        for _ in range(1000):
            if calls.calls == 1:
                break
            await asyncio.sleep(0.02)
        self.assertEqual((calls.calls, len(middleware.runs)), (1, 1), "the first run is being driven by the app")
        refused = await post(f"{instance.url}/agent", run_input())
        self.assert_error(refused, 503, "too_many_runs")
        self.assertEqual(refused.headers.get("retry-after"), "1")
        self.assertEqual(calls.calls, 1, "the refused run never reached the app")
        calls.release.set()
        done = await first
        self.assertEqual(done.events[-1]["type"], "RUN_FINISHED")
        for _ in range(1000):
            if not middleware.runs:
                break
            await asyncio.sleep(0.02)
        again = await post_run(f"{instance.url}/agent", run_input())
        self.assertEqual(again.status, 200, "room again once the first run is done")

    async def test_a_run_id_mapping_that_fails_or_gives_a_bad_id_is_400_bad_run_id(self) -> None:
        mappings = {
            "a space": lambda body: f"{body['threadId']} {body['runId']}",
            "129 characters": lambda body: "r" * 129,
            "empty": lambda body: "",
            "not a string": lambda body: 42,
            "it raises": lambda body: body["no such field"],
        }
        for what, mapping in mappings.items():
            with self.subTest(mapping=what):
                calls = Calls()
                instance, _ = await self.serve(agent_app(calls), run_id=mapping)
                self.assert_error(await post(f"{instance.url}/agent", run_input()), 400, "bad_run_id")
                self.assertEqual(calls.calls, 0, "no run started")
        calls = Calls()
        instance, _ = await self.serve(agent_app(calls), run_id=lambda body: "A-z0.9_~:" + "r" * 119)
        self.assertEqual((await post_run(f"{instance.url}/agent", run_input())).status, 200,
                         "128 characters of the set are a run id")

    async def test_iqstream_unreachable_is_502_iqstream_unreachable(self) -> None:
        calls = Calls()
        instance, _ = await self.serve(agent_app(calls), url=f"http://127.0.0.1:{closed_port()}")
        self.assert_error(await post(f"{instance.url}/agent", run_input()), 502, "iqstream_unreachable")

    async def test_an_answer_without_run_finished_ends_incomplete_and_a_raising_agent_agent_error(self) -> None:
        for ending, code in (("cut", "INCOMPLETE"), ("raise", "AGENT_ERROR")):
            with self.subTest(ending=ending):
                instance, _ = await self.serve(agent_app(Calls(), ending))
                body = run_input()
                answer = await post_run(f"{instance.url}/agent", body)
                self.assertEqual(answer.status, 200)
                self.assertTrue(answer.ended, "the answer ended")
                last = answer.events[-1]
                self.assertEqual((last["type"], last.get("code")), ("RUN_ERROR", code), json.dumps(last))
                # and IQ-Stream holds that end: a reader straight from IQ-Stream gets it too
                again = await post_run(f"{instance.url}/agent", body, last_event_id=1)
                self.assertEqual(again.events[-1].get("code"), code)
