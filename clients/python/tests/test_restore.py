"""A node's death loses nothing while the producer lives (issue 34), for the synchronous and the asyncio publisher:
two real server processes with --peers behind a TCP proxy (the balancer); the node that holds a run being
published is SIGKILLed mid-run; the publisher restores the run on the survivor with the same event ids and goes on;
a reader that resumes with Last-Event-ID through the survivor, before the restore, waits for it and gets exactly
the rest, once."""

from __future__ import annotations

import asyncio
import socket
import time
import unittest
import uuid
from typing import Any, Callable

from iqstream import AsyncClient, IqStreamClient

from .support import ServerProcess, SseSubscriber, TcpProxy

CLUSTER_SECRET = "python-test-cluster-secret-0123456789abcdef"
WAIT_S = 30.0
BEFORE_KILL = 12  # RUN_STARTED, TEXT_MESSAGE_START, 10 tokens
TOTAL = 24        # + 10 tokens after the kill, TEXT_MESSAGE_END, RUN_FINISHED


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def await_condition(what: str, condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)  # polling a condition, bounded by the deadline


def events(run_id: str) -> tuple[list[dict], list[dict]]:
    """The run's events before the kill and after it."""
    before: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": run_id},
                                    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}]
    before += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"token-{i} "} for i in range(10)]
    after: list[dict[str, Any]] = [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": f"token-{i} "}
                                   for i in range(10, 20)]
    after += [{"type": "TEXT_MESSAGE_END", "messageId": "m1"},
              {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id}]
    return before, after


class RestoreTest(unittest.TestCase):
    """Each test starts its own two-node cluster (one of them is killed)."""

    def setUp(self) -> None:
        pa, pb = free_port(), free_port()
        peers = f"127.0.0.1:{pa},127.0.0.1:{pb}"

        def node(port: int, secret: str | None) -> ServerProcess:
            return ServerProcess("--peers", peers, "--advertise", f"127.0.0.1:{port}", "--cluster-secret",
                                 CLUSTER_SECRET, "--await-run", "15s", secret=secret, port=port)

        self.a = node(pa, None)
        self.addCleanup(self.a.stop)
        self.b = node(pb, self.a.secret)
        self.addCleanup(self.b.stop)
        self.balancer = TcpProxy(pa)
        self.addCleanup(self.balancer.close)
        ready = 'iqstream_cluster_members{state="ready"}'
        await_condition("both nodes ready with two members",
                        lambda: self.a.metric(ready) == 2 and self.b.metric(ready) == 2)
        self.token = self.a.token({"publish": ["*"], "subscribe": ["*"]})
        self.run_id = f"restore-{uuid.uuid4().hex[:12]}"

    def kill_holder(self) -> tuple[ServerProcess, SseSubscriber]:
        """After the first 12 events: kills the node holding the run (the balancer sends everything to the
        survivor from now on, and its open connections break) and resumes a reader at 12 through the survivor."""
        first = SseSubscriber(self.a.base_url, self.run_id, self.token)
        try:
            first.await_events(BEFORE_KILL, WAIT_S)
        finally:
            first.close()
        on_a = self.a.metric("iqstream_runs_active") == 1
        self.assertTrue(on_a ^ (self.b.metric("iqstream_runs_active") == 1), "exactly one node holds the run")
        holder, survivor = (self.a, self.b) if on_a else (self.b, self.a)
        self.balancer.retarget(survivor.port)
        holder.kill()
        self.balancer.cut()
        resumed = SseSubscriber(survivor.base_url, self.run_id, self.token, last_event_id=BEFORE_KILL)
        self.addCleanup(resumed.close)
        return survivor, resumed

    def assert_the_rest(self, survivor: ServerProcess, resumed: SseSubscriber, last_event_id: int,
                        restores: int) -> None:
        self.assertEqual(last_event_id, TOTAL, "every event once, the restored ones with their ids")
        self.assertEqual(restores, 1, "the run was restored once")
        resumed.await_end(WAIT_S)
        self.assertEqual([event_id for event_id, _ in resumed.events], list(range(BEFORE_KILL + 1, TOTAL + 1)),
                         "the resumed reader got exactly the rest, in order")
        self.assertEqual(resumed.events[0][1].get("delta"), "token-10 ",
                         "event 13 is the first the producer sent after the kill")
        self.assertEqual(survivor.metric("iqstream_cluster_restores_total"), 1, "the survivor counts the restore")

    def test_the_publisher_restores_its_run_on_the_survivor_when_the_node_holding_it_is_killed(self) -> None:
        before, after = events(self.run_id)
        client = IqStreamClient(self.balancer.base_url, token=self.token)
        run = client.open_run(self.run_id)
        for event in before:
            run.send(event)
        survivor, resumed = self.kill_holder()
        for event in after:
            run.send(event)
            time.sleep(0.05)  # pacing the model's output, not a wait for a condition
        result = run.finish()
        self.assert_the_rest(survivor, resumed, result.last_event_id, run.restores)

    def test_the_async_publisher_restores_its_run_on_the_survivor_when_the_node_holding_it_is_killed(self) -> None:
        before, after = events(self.run_id)

        async def publish() -> tuple[ServerProcess, SseSubscriber, int, int]:
            client = AsyncClient(self.balancer.base_url, self.token)
            async with client.open_run(self.run_id) as run:
                for event in before:
                    await run.send(event)
                survivor, resumed = await asyncio.get_running_loop().run_in_executor(None, self.kill_holder)
                for event in after:
                    await run.send(event)
                    await asyncio.sleep(0.05)  # pacing the model's output
            assert run.result is not None
            return survivor, resumed, run.result.last_event_id, run.restores

        survivor, resumed, last_event_id, restores = asyncio.run(publish())
        self.assert_the_rest(survivor, resumed, last_event_id, restores)


if __name__ == "__main__":
    unittest.main()
