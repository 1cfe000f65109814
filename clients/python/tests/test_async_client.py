"""iqstream.AsyncClient against the real IQ-Stream server process (standard library only)."""

from __future__ import annotations

import asyncio
import os
import time
import unittest
import uuid
from unittest import mock

from iqstream import AsyncClient, IqStreamError, IqStreamHttpError, PublishResult, RunStoppedError

from .support import ServerProcess, SseSubscriber, TcpProxy, workload_run


def new_run_id(prefix: str = "apy") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class AsyncClientTest(unittest.IsolatedAsyncioTestCase):
    server: ServerProcess
    proxy: TcpProxy

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = ServerProcess("--publisher-timeout", "10s", "--max-event-bytes", "4k")
        cls.proxy = TcpProxy(cls.server.port)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.proxy.close()
        cls.server.stop()

    async def asyncSetUp(self) -> None:
        asyncio.get_running_loop().slow_callback_duration = 10.0

    def token(self) -> str:
        return self.server.token({"publish": ["*"], "subscribe": ["*"]})

    def client(self, url: str | None = None) -> AsyncClient:
        return AsyncClient(url or self.server.base_url, self.token(), max_retries=8, retry_delay=0.1,
                           max_retry_delay=1.0)

    def subscribe(self, run_id: str) -> SseSubscriber:
        sub = SseSubscriber(self.server.base_url, run_id, self.token())
        self.addCleanup(sub.close)
        return sub

    async def await_events(self, browser: SseSubscriber, count: int) -> None:
        await asyncio.get_running_loop().run_in_executor(None, browser.await_events, count, 20.0)

    async def test_url_and_token_default_to_the_environment(self) -> None:
        with mock.patch.dict(os.environ, {"IQSTREAM_URL": self.server.base_url, "IQSTREAM_TOKEN": self.token()}):
            client = AsyncClient()
        run_id = new_run_id()
        events = workload_run(run_id, tokens=3)
        result = await client.publish(run_id, events)
        self.assertEqual(result, PublishResult(run_id, len(events), True))
        with mock.patch.dict(os.environ, {"IQSTREAM_URL": "ftp://nowhere"}):
            with self.assertRaises(ValueError):
                AsyncClient()

    async def test_publish_events_streams_each_event_over_one_request_as_it_is_produced(self) -> None:
        run_id = new_run_id()
        events = workload_run(run_id, tokens=30)
        browser = self.subscribe(run_id)
        posts_before = self.proxy.posts
        delivered: list[int] = []

        async def agent():
            for i, event in enumerate(events):
                if i:
                    await self.await_events(browser, i)  # the previous event reached the reader first
                    delivered.append(i)
                yield event

        result = await self.client(self.proxy.base_url).publish_events(run_id, agent())
        self.assertEqual(result, PublishResult(run_id, len(events), True))
        self.assertEqual(self.proxy.posts - posts_before, 1, "one POST carried the whole run")
        self.assertEqual(len(delivered), len(events) - 1)
        browser.await_end()
        self.assertEqual([e for _, e in browser.events], events)
        async with self.client().subscribe(run_id) as stream:
            self.assertEqual([pair async for pair in stream.events()], browser.events)

    async def test_a_broken_connection_is_repaired_by_continuing_the_run(self) -> None:
        run_id = new_run_id()
        events = workload_run(run_id, tokens=300)
        browser = self.subscribe(run_id)
        async with self.client(self.proxy.base_url).open_run(run_id) as run:
            for i, event in enumerate(events):
                await run.send(event)
                if i == 40:
                    await self.await_events(browser, 41)
                    self.proxy.cut()
                if i in (150, 151, 250):
                    self.proxy.cut()  # with events in flight
        self.assertEqual(run.result, PublishResult(run_id, len(events), True))
        self.assertGreaterEqual(run.requests_started, 2)
        browser.await_end()
        self.assertEqual([i for i, _ in browser.events], list(range(1, len(events) + 1)), "no gap, no duplicate")
        self.assertEqual([e for _, e in browser.events], events)

    async def test_refusals_raise_with_the_servers_code(self) -> None:
        client = self.client()
        run_id = new_run_id()
        with self.assertRaises(IqStreamHttpError) as ctx:
            async with client.open_run(run_id) as run:
                await run.send({"type": "RUN_STARTED", "threadId": "t", "runId": run_id})
                await run.send({"no": "type"})
                for i in range(200):
                    await run.send({"type": "CUSTOM", "name": "n", "value": i})
                    await asyncio.sleep(0.002)
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.position), (400, "missing_type", 2))
        self.assertEqual(run.requests_started, 1, "a refusal is not retried")
        self.assertEqual((await client.status(run_id)).events, 1)
        with self.assertRaises(IqStreamHttpError) as ctx:
            await client.publish(new_run_id(), [{"type": "CUSTOM", "name": "big", "value": "x" * 8192}])
        self.assertEqual((ctx.exception.status, ctx.exception.code), (413, "event_too_large"))
        forged = AsyncClient(self.server.base_url, "not-a-jwt")
        with self.assertRaises(IqStreamHttpError) as ctx:
            await forged.status(run_id)
        self.assertEqual(ctx.exception.status, 401)
        with self.assertRaises(IqStreamError):
            await AsyncClient("http://127.0.0.1:1", self.token(), timeout=5).status(run_id)

    async def test_a_stop_raises_its_own_error_and_cancels_the_silent_producer(self) -> None:
        run_id = new_run_id("stop")
        produced = asyncio.Event()
        cancelled_at: list[float] = []

        async def agent():
            yield {"type": "RUN_STARTED", "threadId": "t", "runId": run_id}
            produced.set()
            try:
                await asyncio.sleep(120)  # the model thinks, silently: no send() to notice the stop on
            except asyncio.CancelledError:
                cancelled_at.append(time.monotonic())
                raise
            yield {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id}

        publishing = asyncio.ensure_future(self.client().publish_events(run_id, agent()))
        await asyncio.wait_for(produced.wait(), 20)
        await asyncio.sleep(0.2)
        asked = time.monotonic()
        await self.client().delete(run_id)
        with self.assertRaises(RunStoppedError) as ctx:
            await asyncio.wait_for(publishing, 10)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "run_stopped"))
        self.assertEqual(len(cancelled_at), 1, "the producing task was cancelled")
        self.assertLess(cancelled_at[0] - asked, 8.0, "within a second or two (room for a loaded machine)")
        async with self.client().subscribe(run_id) as stream:
            events = [e async for _, e in stream.events()]
        self.assertEqual(events[-1]["code"], "STOPPED")

    async def test_an_agent_that_fails_ends_its_run_with_run_error(self) -> None:
        run_id = new_run_id("fail")

        async def agent():
            yield {"type": "RUN_STARTED", "threadId": "t", "runId": run_id}
            raise RuntimeError("model exploded")

        with self.assertRaises(RuntimeError):
            await self.client().publish_events(run_id, agent())
        async with self.client().subscribe(run_id) as stream:
            events = [e async for _, e in stream.events()]
        self.assertEqual([e["type"] for e in events], ["RUN_STARTED", "RUN_ERROR"])
        self.assertEqual(events[-1]["code"], "AGENT_ERROR")
        self.assertIn("model exploded", events[-1]["message"])
        self.assertTrue((await self.client().status(run_id)).ended, "readers are not left waiting")


if __name__ == "__main__":
    unittest.main()
