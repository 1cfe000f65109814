"""The Python client of the Durable Streams protocol (PyPI ``durable-streams`` 0.1.0, unchanged) against IQ-Stream's
/v1/stream/ with JWTs in its ``headers`` option: create, append, a catch-up read, a live read (long-poll and SSE)
resumed from a saved offset, and a stream closed by its writer. One IQ-Stream node (java -jar $IQSTREAM_JAR).

The client predates the protocol's closure (``Stream-Closed``): it cannot close a stream, and its live reads do not
stop at one. The closure is made with a plain POST; the client's catch-up read of the closed stream gets it whole,
and its append after the closure is refused (409)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import queue
import re
import secrets
import subprocess
import threading
import time
import unittest
from pathlib import Path

import httpx
from durable_streams import DurableStream, DurableStreamError, stream

HERE = Path(__file__).resolve().parent
JAR = Path(os.environ.get("IQSTREAM_JAR") or HERE.parent.parent.parent / "server" / "target" / "iqstream-server.jar")


def mint(secret: str, rights: dict) -> str:
    def b64(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()
    head = f"{b64({'alg': 'HS256', 'typ': 'JWT'})}.{b64({'sub': 'py', 'exp': int(time.time()) + 600, 'iqstream': rights})}"
    sig = hmac.new(secret.encode(), head.encode(), hashlib.sha256).digest()
    return f"{head}.{base64.urlsafe_b64encode(sig).rstrip(b'=').decode()}"


class Server:
    """One IQ-Stream node on an ephemeral loopback port, JWT auth (HS256) on."""

    def __init__(self, *flags: str):
        self.secret = secrets.token_hex(24)
        java = os.environ.get("IQSTREAM_JAVA") or (
            str(Path(os.environ["JAVA_HOME"]) / "bin" / "java") if os.environ.get("JAVA_HOME") else "java")
        self.process = subprocess.Popen(
            [java, "-Xmx192m", "-jar", str(JAR), "serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1",
             "--warmup", "0", "--jwt-secret", self.secret, "--durable-streams-long-poll", "500ms", *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        lines: list[str] = []
        for raw in self.process.stdout:
            lines.append(raw.decode("utf-8", "replace"))
            m = re.search(r"listening on http://[^:\s]+:(\d+)", lines[-1])
            if m:
                self.base = f"http://127.0.0.1:{m.group(1)}"
                break
        else:
            raise RuntimeError("IQ-Stream did not start:\n" + "".join(lines[-40:]))
        threading.Thread(target=lambda: [None for _ in self.process.stdout], daemon=True).start()

    def url(self, path: str) -> str:
        return f"{self.base}/v1/stream/{path}"

    def headers(self, path: str, *rights: str) -> dict[str, str]:
        return {"Authorization": "Bearer " + mint(self.secret, {r: [path] for r in rights})}

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(20)


class LiveReader:
    """A live read on a thread of its own: every JSON item into ``items`` and the read's offset after each batch."""

    def __init__(self, url: str, headers: dict, offset: str, live: str):
        self.items: queue.Queue = queue.Queue()
        self.offset = offset
        self.res = stream(url, headers=headers, offset=offset, live=live)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for batch in self.res.iter_json_batches():
                for item in batch:
                    self.items.put(item)
        except Exception as e:  # the test closes the response under the reader when it is done
            self.items.put(("ended", repr(e)))

    def take(self, n: int) -> list:
        return [self.items.get(timeout=30) for _ in range(n)]

    def close(self) -> None:
        self.res.close()


class PythonClientTest(unittest.TestCase):
    server: Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def path(self, name: str) -> str:
        return f"py/{name}-{secrets.token_hex(4)}"

    def test_create_append_and_catch_up(self) -> None:
        path = self.path("catchup")
        s = self.server
        with DurableStream.create(s.url(path), content_type="application/json",
                                  headers=s.headers(path, "publish")) as handle:
            offsets = [handle.append({"n": i}).next_offset for i in range(5)]
        self.assertEqual(sorted(offsets), offsets, "offsets grow")
        self.assertEqual(len(set(offsets)), 5)
        with stream(s.url(path), headers=s.headers(path, "subscribe"), offset="-1", live=False) as res:
            self.assertEqual([{"n": i} for i in range(5)], list(res.iter_json()))
            self.assertEqual(offsets[-1], res.offset, "the read ends at the last append's offset")
        # from a saved offset: only what came after it
        with stream(s.url(path), headers=s.headers(path, "subscribe"), offset=offsets[2], live=False) as res:
            self.assertEqual([{"n": 3}, {"n": 4}], list(res.iter_json()))

    def test_text_round_trip_and_head(self) -> None:
        path = self.path("text")
        s = self.server
        with DurableStream.create(s.url(path), content_type="text/plain",
                                  headers=s.headers(path, "publish", "subscribe")) as handle:
            handle.append("héllo ")
            handle.append("wörld")
            self.assertEqual("text/plain", handle.head().content_type)
            with handle.stream(offset="-1", live=False) as res:
                self.assertEqual("héllo wörld", res.read_text())

    def test_live_reads_resume_from_a_saved_offset(self) -> None:
        for live in ("long-poll", "sse"):
            with self.subTest(live=live):
                path = self.path(live)
                s = self.server
                writer = DurableStream.create(s.url(path), content_type="application/json",
                                              headers=s.headers(path, "publish"))
                saved = [writer.append({"n": i}).next_offset for i in range(3)][-1]
                # a live read from the saved offset: nothing of what came before it, then each new append once
                reader = LiveReader(s.url(path), s.headers(path, "subscribe"), saved, live)
                for i in range(3, 8):
                    writer.append({"n": i})
                self.assertEqual([{"n": i} for i in range(3, 8)], reader.take(5))
                reader.close()
                writer.close()

    def test_closure(self) -> None:
        path = self.path("closed")
        s = self.server
        writer = DurableStream.create(s.url(path), content_type="application/json", headers=s.headers(path, "publish"))
        writer.append({"n": 0})
        # the client cannot close a stream (0.1.0 predates closure): the writer's last append closes it, a plain POST
        r = httpx.post(s.url(path), content=b'{"n":1}', headers={
            **s.headers(path, "publish"), "Content-Type": "application/json", "Stream-Closed": "true"})
        self.assertEqual(204, r.status_code)
        final = r.headers["Stream-Next-Offset"]
        with stream(s.url(path), headers=s.headers(path, "subscribe"), offset="-1", live=False) as res:
            self.assertEqual([{"n": 0}, {"n": 1}], list(res.iter_json()))
            self.assertEqual(final, res.offset)
            self.assertEqual("true", res.headers.get("stream-closed"))
        with self.assertRaises(DurableStreamError) as refused:
            writer.append({"n": 2})
        self.assertEqual(409, refused.exception.status, "an append to a closed stream is refused")
        writer.close()

    def test_tokens(self) -> None:
        path = self.path("auth")
        s = self.server
        with self.assertRaises(DurableStreamError) as no_token:
            DurableStream.create(s.url(path), content_type="text/plain")
        self.assertEqual(401, no_token.exception.status)
        with self.assertRaises(DurableStreamError) as read_only:
            DurableStream.create(s.url(path), content_type="text/plain", headers=s.headers(path, "subscribe"))
        self.assertEqual(403, read_only.exception.status)


if __name__ == "__main__":
    unittest.main()
