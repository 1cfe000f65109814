"""With opentelemetry-api installed, the clients send the active span's W3C traceparent; outside a span, none.
Against a real local HTTP server that records the headers it receives."""

from __future__ import annotations

import asyncio
import http.server
import json
import threading
import unittest

from opentelemetry import context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from iqstream.aio import AsyncClient
from iqstream_client import IqStreamClient

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
SPAN_ID = 0x00F067AA0BA902B7
TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


class _Recorder(http.server.BaseHTTPRequestHandler):
    seen: list = []

    def do_POST(self) -> None:  # noqa: N802 (the standard library's name)
        _Recorder.seen.append(dict(self.headers))
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        elif self.headers.get("Transfer-Encoding") == "chunked":
            while True:
                size = int(self.rfile.readline().strip(), 16)
                self.rfile.read(size + 2)
                if size == 0:
                    break
        body = json.dumps({"runId": "r", "lastEventId": 1, "ended": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


class TraceContextTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.base = f"http://127.0.0.1:{cls.server.server_address[1]}"

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.shutdown()
        cls.server.server_close()

    def setUp(self) -> None:
        _Recorder.seen.clear()

    @staticmethod
    def _in_span():
        span = NonRecordingSpan(SpanContext(TRACE_ID, SPAN_ID, is_remote=False,
                                            trace_flags=TraceFlags(TraceFlags.SAMPLED)))
        return context.attach(trace.set_span_in_context(span))

    def test_the_synchronous_client_sends_the_active_traceparent_and_none_outside_a_span(self) -> None:
        client = IqStreamClient(self.base, "tok")
        token = self._in_span()
        try:
            client.publish("r", [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}])
        finally:
            context.detach(token)
        client.publish("r", [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}])
        self.assertEqual(2, len(_Recorder.seen))
        self.assertEqual(TRACEPARENT, _Recorder.seen[0].get("traceparent"))
        self.assertIsNone(_Recorder.seen[1].get("traceparent"))

    def test_the_asyncio_client_sends_it_and_a_task_made_in_the_span_keeps_it(self) -> None:
        async def main() -> None:
            client = AsyncClient(self.base, "tok")
            token = self._in_span()
            try:
                # as the ASGI middleware detaches the agent: a task made while the request's span is active
                task = asyncio.ensure_future(client.publish("r", [{"type": "RUN_STARTED"}]))
            finally:
                context.detach(token)
            await task

        asyncio.run(main())
        self.assertEqual(1, len(_Recorder.seen))
        self.assertEqual(TRACEPARENT, _Recorder.seen[0].get("traceparent"))


if __name__ == "__main__":
    unittest.main()
