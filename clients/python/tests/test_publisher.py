"""The Python publisher against the real IQ-Stream server process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import unittest
import uuid
from pathlib import Path

from iqstream_client import IqStreamClient, IqStreamError, IqStreamHttpError, PublishResult, RunStoppedError

from .support import AgUiAgentServer, ServerProcess, SseSubscriber, TcpProxy, mint_token, workload_run

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


def new_run_id(prefix: str = "py") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


class PublisherTest(unittest.TestCase):
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

    def token(self) -> str:
        return self.server.token({"publish": ["*"], "subscribe": ["*"]})

    def client(self, base_url: str | None = None) -> IqStreamClient:
        return IqStreamClient(base_url or self.server.base_url, token=self.token(),
                              max_retries=8, retry_delay=0.1, max_retry_delay=1.0)

    def subscribe(self, run_id: str) -> SseSubscriber:
        sub = SseSubscriber(self.server.base_url, run_id, self.token())
        self.addCleanup(sub.close)
        return sub

    def test_streams_each_event_over_one_request_the_moment_it_is_sent(self) -> None:
        run_id = new_run_id()
        events = workload_run(run_id, tokens=30)
        browser = self.subscribe(run_id)
        posts_before = self.proxy.posts
        with self.client(self.proxy.base_url).open_run(run_id) as run:
            for i, event in enumerate(events):
                run.send(event)
                browser.await_events(i + 1)  # delivered before the next one is even sent
        self.assertEqual(run.result, PublishResult(run_id, len(events), True))
        self.assertEqual(run.requests_started, 1)
        self.assertEqual(self.proxy.posts - posts_before, 1, "one POST carried the whole run")
        browser.await_end()
        self.assertEqual([i for i, _ in browser.events], list(range(1, len(events) + 1)))
        self.assertEqual([e for _, e in browser.events], events)

    def test_sends_dicts_and_json_text(self) -> None:
        run_id = new_run_id()
        browser = self.subscribe(run_id)
        with self.client().open_run(run_id) as run:
            run.send({"type": "RUN_STARTED", "threadId": "t", "runId": run_id})
            run.send('{\n  "type": "CUSTOM",\n  "name": "pretty",\n  "value": "a\\nb"\n}')
            run.send(b'{"type":"CUSTOM","name":"bytes","value":"\xc3\xbc"}')
            run.send({"type": "RUN_FINISHED", "threadId": "t", "runId": run_id})
            with self.assertRaises(ValueError):
                run.send("[1, 2]")
        browser.await_end()
        self.assertEqual([e for _, e in browser.events], [
            {"type": "RUN_STARTED", "threadId": "t", "runId": run_id},
            {"type": "CUSTOM", "name": "pretty", "value": "a\nb"},
            {"type": "CUSTOM", "name": "bytes", "value": "ü"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id},
        ])

    def test_continues_the_same_run_after_the_connection_breaks(self) -> None:
        run_id = new_run_id()
        events = workload_run(run_id, tokens=300)
        browser = self.subscribe(run_id)
        run = self.client(self.proxy.base_url).open_run(run_id)
        for i, event in enumerate(events):
            run.send(event)
            if i == 40:
                browser.await_events(41)  # a clean cut: the server has everything so far
                self.proxy.cut()
            if i in (150, 151, 250):
                self.proxy.cut()  # cuts with events in flight
        result = run.finish()
        self.assertEqual(result, PublishResult(run_id, len(events), True))
        self.assertGreaterEqual(run.requests_started, 2)
        browser.await_end()
        self.assertEqual([i for i, _ in browser.events], list(range(1, len(events) + 1)), "no gap, no duplicate")
        self.assertEqual([e for _, e in browser.events], events)

    def test_a_run_whose_node_is_gone_fails_with_run_lost_never_a_fresh_run_when_its_events_were_not_kept(self) -> None:
        # the balancer sends this run's requests to another node (same key, no runs) after the first 3 events
        other = ServerProcess(secret=self.server.secret)
        self.addCleanup(other.stop)
        # 0: restores off; 256 bytes: the cap is passed within the first 3 events (kept lines are dropped)
        for restore_buffer_bytes in (0, 256):
            with self.subTest(restore_buffer_bytes=restore_buffer_bytes):
                run_id = new_run_id("lost")
                events = workload_run(run_id, tokens=20)
                proxy = TcpProxy(self.server.port)
                self.addCleanup(proxy.close)
                # one streaming request from the run's start: the publisher holds no confirmed count (0)
                client = IqStreamClient(proxy.base_url, token=self.token(), max_retries=8, retry_delay=0.1,
                                        max_retry_delay=1.0, restore_buffer_bytes=restore_buffer_bytes)
                run = client.open_run(run_id)
                for event in events[:3]:
                    run.send(event)
                browser = self.subscribe(run_id)
                browser.await_events(3)
                proxy.target_port = other.port
                proxy.cut()
                with self.assertRaises(IqStreamHttpError) as lost:
                    for event in events[3:]:
                        run.send(event)
                        time.sleep(0.05)  # pacing the model's output, not a wait for a condition
                    run.finish()
                self.assertEqual((lost.exception.status, lost.exception.code), (409, "run_lost"), str(lost.exception))
                self.assertEqual(run.restores, 0)
                self.assertIsNone(self.client(other.base_url).status(run_id), "no fresh run on the other node")

    def test_the_restore_buffer_is_validated(self) -> None:
        with self.assertRaises(ValueError):
            IqStreamClient(self.server.base_url, restore_buffer_bytes=-1)

    def test_pipes_an_ag_ui_agents_sse_response_straight_in(self) -> None:
        run_id = new_run_id("agent")
        events = workload_run(run_id, tokens=50)
        agent = AgUiAgentServer(events)
        self.addCleanup(agent.close)
        browser = self.subscribe(run_id)
        run_input = {"threadId": "t", "runId": run_id, "messages": [{"id": "u1", "role": "user", "content": "hi"}],
                     "tools": [], "context": [], "state": {}, "forwardedProps": {}}
        result = self.client().pipe_agent(run_id, agent.url, run_input)
        self.assertEqual(result, PublishResult(run_id, len(events), True))
        self.assertEqual(agent.inputs, [run_input])
        browser.await_end()
        self.assertEqual([e for _, e in browser.events], events)

    def test_refusals_are_clear_errors_with_status_code_and_position(self) -> None:
        client = self.client()
        # 400 bad_json at event 2; the event before it stays in the run
        bad = new_run_id()
        run = client.open_run(bad)
        run.send({"type": "RUN_STARTED", "threadId": "t", "runId": bad})
        run.send("{not json")
        with self.assertRaises(IqStreamHttpError) as ctx:
            run.finish()
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.position), (400, "bad_json", 2))
        self.assertIn("at event 2", str(ctx.exception))
        self.assertEqual(ctx.exception.last_event_id, 1)
        self.assertEqual(client.status(bad).events, 1)
        with self.assertRaises(IqStreamHttpError):
            run.send({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})

        # 400 missing_type, 413 event_too_large (server runs with --max-event-bytes 4k)
        with self.assertRaises(IqStreamHttpError) as ctx:
            client.publish(new_run_id(), [{"kind": "x"}])
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.position), (400, "missing_type", 1))
        with self.assertRaises(IqStreamHttpError) as ctx:
            with client.open_run(new_run_id()) as big:
                big.send({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
                big.send({"type": "CUSTOM", "name": "big", "value": "x" * 8192})
        self.assertEqual((ctx.exception.status, ctx.exception.code), (413, "event_too_large"))

        # 409 run_ended
        ended = new_run_id()
        client.publish(ended, [{"type": "RUN_STARTED", "threadId": "t", "runId": ended},
                               {"type": "RUN_FINISHED", "threadId": "t", "runId": ended}])
        with self.assertRaises(IqStreamHttpError) as ctx:
            client.open_run(ended)
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "run_ended"))
        with self.assertRaises(IqStreamHttpError) as ctx:
            client.publish(ended, [{"type": "CUSTOM", "name": "late", "value": 1}])
        self.assertEqual((ctx.exception.status, ctx.exception.code), (409, "run_ended"))

        with self.assertRaises(ValueError):
            client.open_run("no spaces")

    def test_a_refusal_mid_stream_surfaces_as_itself_while_sending_goes_on(self) -> None:
        client = self.client()
        run_id = new_run_id()
        run = client.open_run(run_id)
        run.send({"type": "RUN_STARTED", "threadId": "t", "runId": run_id})
        run.send({"no": "type"})
        with self.assertRaises(IqStreamHttpError) as ctx:
            for i in range(500):
                run.send({"type": "CUSTOM", "name": "n", "value": i})  # the server answered and stopped reading
                time.sleep(0.002)
            run.finish()
        self.assertEqual((ctx.exception.status, ctx.exception.code, ctx.exception.position), (400, "missing_type", 2))
        self.assertEqual(run.requests_started, 1, "a refusal is not retried")
        self.assertEqual(client.status(run_id).events, 1)

    def test_refuses_bad_tokens_with_401_and_403(self) -> None:
        forged = IqStreamClient(self.server.base_url, token=mint_token("x" * 40, {"iqstream": {"publish": ["*"]}}))
        with self.assertRaises(IqStreamHttpError) as ctx:
            forged.open_run(new_run_id())
        self.assertEqual((ctx.exception.status, ctx.exception.code), (401, "unauthenticated"))
        read_only = IqStreamClient(self.server.base_url, token=self.server.token({"subscribe": ["*"]}))
        with self.assertRaises(IqStreamHttpError) as ctx:
            read_only.publish(new_run_id(), [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}])
        self.assertEqual((ctx.exception.status, ctx.exception.code), (403, "forbidden"))

    def test_command_line_streams_ndjson_and_sse_from_stdin(self) -> None:
        env = {**os.environ, "IQSTREAM_URL": self.server.base_url, "IQSTREAM_TOKEN": self.token(),
               "PYTHONPATH": str(PACKAGE_ROOT)}
        for fmt in ("ndjson", "sse"):
            run_id = new_run_id(f"cli-{fmt}")
            events = workload_run(run_id, tokens=10)
            if fmt == "ndjson":
                data = "".join(json.dumps(e) + "\n" for e in events)
            else:
                data = "".join(f"data: {json.dumps(e)}\n\n" for e in events)
            browser = self.subscribe(run_id)
            done = subprocess.run([sys.executable, "-m", "iqstream_client", "publish", "--run", run_id, "--format", fmt],
                                  input=data.encode(), env=env, capture_output=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stderr.decode())
            self.assertEqual(json.loads(done.stdout), {"run_id": run_id, "last_event_id": len(events), "ended": True})
            browser.await_end()
            self.assertEqual([e for _, e in browser.events], events)

        status = subprocess.run([sys.executable, "-m", "iqstream_client", "status", "--run", run_id],
                                env=env, capture_output=True, timeout=60)
        self.assertEqual(status.returncode, 0, status.stderr.decode())
        self.assertEqual(json.loads(status.stdout)["events"], len(events))
        refused = subprocess.run([sys.executable, "-m", "iqstream_client", "publish", "--run", run_id],
                                 input=b'{"type":"CUSTOM","name":"late","value":1}\n', env=env, capture_output=True, timeout=60)
        self.assertEqual(refused.returncode, 1)
        self.assertIn(b"409 run_ended", refused.stderr)

    def test_gives_up_with_a_clear_error_when_the_server_is_gone(self) -> None:
        lonely = ServerProcess()
        client = IqStreamClient(lonely.base_url, token=lonely.token({"publish": ["*"]}),
                                max_retries=2, retry_delay=0.05, max_retry_delay=0.1)
        run = client.open_run(new_run_id())
        run.send({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
        lonely.stop()
        with self.assertRaises(IqStreamError) as ctx:
            for i in range(100):  # the break is seen on a later write
                run.send({"type": "CUSTOM", "name": "n", "value": i})
            run.finish()
        self.assertIn("could not be continued after 2 attempts", str(ctx.exception))

    def test_a_stop_from_elsewhere_is_a_distinct_outcome_seen_at_once(self) -> None:
        run_id = new_run_id()
        browser = self.subscribe(run_id)
        run = self.client().open_run(run_id)
        run.send({"type": "RUN_STARTED", "threadId": "t", "runId": run_id})
        run.send({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
        browser.await_events(2)
        self.assertFalse(run.stopped)
        self.client().delete(run_id)  # another process stops the run
        deadline = time.monotonic() + 10
        while not run.stopped and time.monotonic() < deadline:
            time.sleep(0.005)
        self.assertTrue(run.stopped, "the open publish learns of the stop without sending anything")
        with self.assertRaises(RunStoppedError) as caught:
            run.send({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "late"})
        self.assertEqual((caught.exception.status, caught.exception.code, caught.exception.last_event_id),
                         (409, "run_stopped", 3))
        self.assertIsInstance(caught.exception, IqStreamHttpError)
        with self.assertRaises(RunStoppedError):
            run.finish()
        browser.await_end()
        event_id, closing = browser.events[2]
        self.assertEqual((event_id, closing["type"], closing["code"]), (3, "RUN_ERROR", "STOPPED"))
        self.assertTrue(self.client().status(run_id).ended, "the stopped run is kept, ended")


if __name__ == "__main__":
    unittest.main()
