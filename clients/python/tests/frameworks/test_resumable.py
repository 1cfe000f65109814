"""Each framework's own AG-UI endpoint plus the one middleware line, against a real IQ-Stream server:
a reader dropped mid-answer resumes with the whole answer once, the agent keeps running after the drop, a stop
cancels the agent, a second POST joins the run instead of starting the agent again, and two app instances behind
a load balancer serve the resume on the other one."""

from __future__ import annotations

import asyncio
import json
import time
import unittest
from pathlib import Path
from typing import Any, Callable

from iqstream import AsyncClient
from iqstream.asgi import ResumableAGUI

from ..support import ServerProcess
from . import shared_server
from .agents import FRAMEWORKS, Script, long_text
from .harness import AppInstance, RoundRobinLb, contents, post_run, run_input, seen_contents

AGUI_CLIENT = Path(__file__).resolve().parent.parent / "agui-client"
STOP_PROMISE_S = 2.0    # what the docs promise: the agent's task is cancelled within a second or two
STOP_ROOM_S = 8.0       # what the test allows on a loaded 2-core machine (a broken stop never cancels at all)


class ResumableEndpointContract:
    """The contract, for one framework (``framework``: a key of FRAMEWORKS)."""

    framework: str
    server: ServerProcess

    @classmethod
    def setUpClass(cls) -> None:  # noqa: N802
        cls.server = shared_server()

    async def asyncSetUp(self) -> None:  # noqa: N802
        asyncio.get_running_loop().slow_callback_duration = 10.0  # debug mode's slow-callback log: imports, a busy VM

    def app_token(self) -> str:
        return self.server.token({"publish": ["*"], "subscribe": ["*"]})

    async def instance(self, script: Script) -> tuple[AppInstance, ResumableAGUI]:
        app = FRAMEWORKS[self.framework](script)
        app.add_middleware(ResumableAGUI, url=self.server.base_url, token=self.app_token())  # the one line
        instance = await AppInstance(app).start()
        self.addAsyncCleanup(instance.stop)  # type: ignore[attr-defined]
        middleware = _middleware_of(app)
        return instance, middleware

    def iq(self) -> AsyncClient:
        return AsyncClient(self.server.base_url, self.app_token())

    async def whole_run(self, run_id: str) -> list[tuple[int, dict]]:
        async with self.iq().subscribe(run_id) as stream:
            return [pair async for pair in stream.events()]

    def assert_whole_answer_once(self, frames: list, script: Script, iq_frames: list) -> None:
        ids = [i for i, _ in frames]
        self.assertEqual(ids, list(range(1, len(frames) + 1)), "every event once, in order, each with its id")
        events = [e for _, e in frames]
        self.assertEqual(events, [e for _, e in iq_frames], "the answer is the run as IQ-Stream holds it")
        self.assertEqual(contents(events), script.text, "the whole text, once")
        self.assertEqual(events[-1]["type"], "RUN_FINISHED")
        self.assertEqual(sum(1 for e in events if e["type"] == "RUN_FINISHED"), 1)

    # ---- the contract ----

    async def test_a_dropped_reader_resumes_with_the_whole_answer_once_and_the_agent_runs_on(self) -> None:
        script = Script(long_text(30), hold_at=12)
        app, middleware = await self.instance(script)
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"

        first = await post_run(f"{app.url}/agent", body, until=seen_contents(5))
        self.assertEqual(first.status, 200)
        self.assertEqual(first.headers.get("iqstream-run-id"), run_id)
        self.assertFalse(first.ended, "the reader dropped mid-answer")
        self.assertTrue(all(i is not None for i in first.ids), "each event has its id: line")
        last_seen = first.ids[-1]

        # while the agent is held mid-answer, a second POST of the same run joins it (the agent is not run again)
        joined = asyncio.ensure_future(post_run(f"{app.url}/agent", body))
        await asyncio.sleep(0.3)
        self.assertEqual(script.calls, 1)

        script.release.set()  # the browser has gone; the agent goes on
        await asyncio.wait_for(script.completed.wait(), 60)
        self.assertFalse(script.cancelled.is_set(), "the drop did not cancel the agent")

        rest = await post_run(f"{app.url}/agent", body, last_event_id=last_seen)
        self.assertEqual(rest.status, 200)
        self.assertTrue(rest.ended)
        self.assertEqual(rest.ids[0], last_seen + 1, "the resume starts after the last event seen")
        iq_frames = await self.whole_run(run_id)
        self.assert_whole_answer_once(first.frames + rest.frames, script, iq_frames)

        whole = await joined
        self.assert_whole_answer_once(whole.frames, script, iq_frames)
        self.assertEqual(script.calls, 1, "the agent ran once for three POSTs")
        self.assertEqual(middleware.runs, {}, "nothing left behind in the middleware")

        # straight from IQ-Stream with a subscribe token for this run alone (the browser's other way back)
        browser = AsyncClient(self.server.base_url, self.server.token({"subscribe": [run_id]}))
        async with browser.subscribe(run_id, last_event_id=last_seen) as stream:
            direct = [pair async for pair in stream.events()]
        self.assertEqual(direct, rest.frames)

    async def test_a_stop_cancels_the_agents_task_and_ends_the_answer(self) -> None:
        script = Script(long_text(3000), gap_s=0.03)  # ~90 s of answer unless stopped
        app, middleware = await self.instance(script)
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"

        reader = asyncio.ensure_future(post_run(f"{app.url}/agent", body, timeout_s=120))
        await _until(lambda: script.chunks_made >= 5, 60, "the agent to start answering")
        asked = time.monotonic()
        await self.iq().delete(run_id)  # any instance, any language: here the Python client
        await asyncio.wait_for(script.cancelled.wait(), STOP_ROOM_S)
        took = script.cancelled_at - asked
        self.assertLess(took, STOP_ROOM_S, f"the agent's task was cancelled {took:.2f} s after the stop")
        print(f"\n  [{self.framework}] stop -> agent cancelled in {took * 1000:.0f} ms (promise {STOP_PROMISE_S} s)")
        self.assertFalse(script.completed.is_set())

        answer = await asyncio.wait_for(reader, 30)
        self.assertTrue(answer.ended, "the POST's answer ended")
        self.assertEqual(answer.events[-1]["type"], "RUN_ERROR")
        self.assertEqual(answer.events[-1].get("code"), "STOPPED")
        made = script.chunks_made
        await asyncio.sleep(0.5)
        self.assertEqual(script.chunks_made, made, "nothing more is produced after the cancel")
        await _until(lambda: not middleware.runs, 10, "the middleware to drop the run")

    async def test_two_instances_behind_a_load_balancer_resume_on_the_other(self) -> None:
        script = Script(long_text(30), hold_at=12)
        a, _ = await self.instance(script)
        b, _ = await self.instance(script)
        lb = await RoundRobinLb([a.port, b.port]).start()
        self.addAsyncCleanup(lb.stop)  # type: ignore[attr-defined]
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"

        first = await post_run(f"{lb.url}/agent", body, until=seen_contents(5))
        self.assertEqual(lb.routed, [a.port])
        rest_task = asyncio.ensure_future(post_run(f"{lb.url}/agent", body, last_event_id=first.ids[-1]))
        await _until(lambda: len(lb.routed) == 2, 30, "the resume to reach the balancer")
        self.assertEqual(lb.routed[1], b.port, "the resume is served by the other instance")
        await asyncio.sleep(0.3)
        script.release.set()
        rest = await rest_task
        await asyncio.wait_for(script.completed.wait(), 30)

        self.assertEqual(script.calls, 1, "instance B joined the run; it did not start the agent")
        self.assertTrue(rest.ended)
        self.assert_whole_answer_once(first.frames + rest.frames, script, await self.whole_run(run_id))


    async def test_ag_ui_http_agent_reads_the_endpoint_unchanged(self) -> None:
        """@ag-ui/client's HttpAgent (as CopilotKit uses it) against the endpoint behind the middleware: it gets
        IQ-Stream's frames (id: lines, retry:, comments) and builds the same answer."""
        if not (AGUI_CLIENT / "node_modules" / "@ag-ui" / "client").is_dir():
            raise AssertionError(f"run `npm ci` in {AGUI_CLIENT} first (run-tests.sh does)")
        script = Script(long_text(12))
        app, _ = await self.instance(script)
        body = run_input()
        node = await asyncio.create_subprocess_exec(
            "node", str(AGUI_CLIENT / "read-endpoint.mjs"), f"{app.url}/agent", body["threadId"], body["runId"],
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(node.communicate(), 60)
        self.assertEqual(node.returncode, 0, err.decode())
        seen = json.loads(out.decode().strip().splitlines()[-1])
        self.assertEqual(seen["text"], script.text)
        self.assertEqual(seen["types"][0], "RUN_STARTED")
        self.assertEqual(seen["types"][-1], "RUN_FINISHED")
        iq_types = [e["type"] for _, e in await self.whole_run(f"{body['threadId']}:{body['runId']}")]
        self.assertEqual(seen["types"], iq_types, "HttpAgent delivered every event of the run, once")


def _middleware_of(app: Any) -> ResumableAGUI:
    """The ResumableAGUI instance in a Starlette app's built middleware stack (built on its first request)."""
    holder: dict = {}
    original_build = app.build_middleware_stack

    def build() -> Any:
        stack = original_build()
        layer = stack
        while layer is not None and not isinstance(layer, ResumableAGUI):
            layer = getattr(layer, "app", None)
        holder["middleware"] = layer
        return stack

    app.build_middleware_stack = build

    class Lazy:
        def __getattr__(self, name: str) -> Any:
            return getattr(holder["middleware"], name)
    return Lazy()  # type: ignore[return-value]


async def _until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")
        await asyncio.sleep(0.02)


class PydanticAiTest(ResumableEndpointContract, unittest.IsolatedAsyncioTestCase):
    framework = "pydantic-ai"


class LangGraphTest(ResumableEndpointContract, unittest.IsolatedAsyncioTestCase):
    framework = "langgraph"


class AgentFrameworkTest(ResumableEndpointContract, unittest.IsolatedAsyncioTestCase):
    framework = "agent-framework"
