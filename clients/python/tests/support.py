"""Test support: the real IQ-Stream server as a child process, HS256 tokens, a TCP proxy the
test can cut, an SSE subscriber, and a small AG-UI agent (an HTTP server streaming SSE)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.client
import http.server
import json
import os
import re
import secrets
import shutil
import socket
import struct
import subprocess
import threading
import time
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_JAR = HERE.parent.parent.parent / "server" / "target" / "iqstream-server.jar"


def jar_path() -> Path:
    return Path(os.environ.get("IQSTREAM_JAR") or DEFAULT_JAR).resolve()


def java_path() -> str:
    if os.environ.get("IQSTREAM_JAVA"):
        return os.environ["IQSTREAM_JAVA"]
    if os.environ.get("JAVA_HOME"):
        return str(Path(os.environ["JAVA_HOME"]) / "bin" / "java")
    return shutil.which("java") or "java"


def mint_token(secret: str, claims: dict) -> str:
    def b64(obj) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()
    head = b64({"alg": "HS256", "typ": "JWT"})
    body = b64({"sub": "test", "exp": int(time.time()) + 600, **claims})
    sig = hmac.new(secret.encode("utf-8"), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{base64.urlsafe_b64encode(sig).rstrip(b'=').decode()}"


class ServerProcess:
    """``java -jar $IQSTREAM_JAR serve --host 127.0.0.1 --port 0 --jwt-secret ...``."""

    def __init__(self, *flags: str, secret: str | None = None, port: int = 0):
        jar = jar_path()
        if not jar.is_file():
            raise unittest.SkipTest(f"IQ-Stream jar not found at {jar}: build server/ or set IQSTREAM_JAR")
        self.secret = secret or secrets.token_hex(24)
        self.process = subprocess.Popen(
            [java_path(), "-jar", str(jar), "serve", "--host", "127.0.0.1", "--port", str(port),
             "--jwt-secret", self.secret, *flags],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.port = self._await_listening()
        self.base_url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self._drain, daemon=True).start()

    def _await_listening(self) -> int:
        result: dict = {}
        lines: list[str] = []

        def read() -> None:
            for raw in self.process.stdout:
                line = raw.decode("utf-8", "replace")
                lines.append(line)
                m = re.search(r"listening on http://[^:\s]+:(\d+)", line)
                if m:
                    result["port"] = int(m.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(60)
        if "port" not in result:
            self.process.kill()
            raise RuntimeError("IQ-Stream did not start:\n" + "".join(lines[-40:]))
        return result["port"]

    def _drain(self) -> None:
        for _ in self.process.stdout:
            pass

    def token(self, rights: dict, **claims) -> str:
        return mint_token(self.secret, {"iqstream": rights, **claims})

    def kill(self) -> None:
        """SIGKILL: the node dies at once, as a crashed machine (no drain, no goodbye to its peers)."""
        self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()

    def metric(self, name: str) -> float:
        """The first ``/metrics`` sample named ``name`` (with its labels), -1 if unreadable."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", "/metrics")
            for line in conn.getresponse().read().decode("utf-8").splitlines():
                if line.startswith(name + " "):
                    return float(line[len(name) + 1:])
        except OSError:
            pass
        finally:
            conn.close()
        return -1

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


class TcpProxy:
    """Forwards to the server; ``cut()`` resets every open connection (RST, as a network drop);
    ``retarget(port)`` sends new connections to another server (a balancer that took a node out)."""

    def __init__(self, target_port: int):
        self.target_port = target_port
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.sockets: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.posts = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:  # the target is down: the client sees its connection closed
                client.close()
                continue
            with self.lock:
                self.sockets.update((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, False), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, count_posts: bool) -> None:
        carry = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if count_posts:
                    text = carry + data
                    with self.lock:
                        self.posts += text.count(b"POST /v1/")
                    carry = text[-8:]
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def retarget(self, port: int) -> None:
        self.target_port = port

    def cut(self) -> None:
        with self.lock:
            for s in self.sockets:
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    s.shutdown(socket.SHUT_RDWR)  # wakes the pump threads blocked in recv
                except OSError:
                    pass
                s.close()
            self.sockets.clear()

    def close(self) -> None:
        self.server.close()
        self.cut()


class SseSubscriber:
    """Reads a run's SSE stream on a thread, collecting (id, event) pairs."""

    def __init__(self, base_url: str, run_id: str, token: str, last_event_id: int | None = None):
        self.events: list[tuple[int, dict]] = []
        self.error: BaseException | None = None
        self.done = threading.Event()
        host, port = base_url.replace("http://", "").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=30)
        headers = {"Authorization": f"Bearer {token}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        self.conn.request("GET", f"/v1/runs/{run_id}/events", headers=headers)
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            response = self.conn.getresponse()
            if response.status != 200:
                raise RuntimeError(f"subscribe answered {response.status}: {response.read()!r}")
            event_id = 0
            while True:
                line = response.readline()
                if not line:
                    break
                line = line.decode("utf-8").rstrip("\n")
                if line.startswith("id: "):
                    event_id = int(line[4:])
                elif line.startswith("data: "):
                    self.events.append((event_id, json.loads(line[6:])))
        except BaseException as e:  # noqa: BLE001 - reported to the test
            self.error = e
        finally:
            self.done.set()

    def await_events(self, count: int, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.events) < count:
            if self.error:
                raise self.error
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {count} events, got {len(self.events)}")
            time.sleep(0.005)

    def await_end(self, timeout: float = 10.0) -> None:
        if not self.done.wait(timeout):
            raise AssertionError("the stream did not end")
        if self.error:
            raise self.error

    def close(self) -> None:
        self.conn.close()


class AgUiAgentServer:
    """A small AG-UI agent over HTTP: POST a RunAgentInput, get the run back as SSE frames the way
    AG-UI agents write them (``data: {...}\\n\\n``, plus an ``event:`` line and a comment), one
    frame at a time with a short pause in between."""

    def __init__(self, events: list[dict], gap_s: float = 0.002):
        outer = self
        self.inputs: list[dict] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                outer.inputs.append(json.loads(self.rfile.read(length) or b"{}"))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(b": agent stream\r\n\r\n")
                for e in events:
                    self.wfile.write(f"event: {e['type']}\r\ndata: {json.dumps(e)}\r\n\r\n".encode())
                    self.wfile.flush()
                    time.sleep(gap_s)

            def log_message(self, *args) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/agent"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def workload_run(run_id: str, tokens: int = 40, tool_result_bytes: int = 2048) -> list[dict]:
    """A WORKLOAD.md-style AG-UI run (valid for @ag-ui/core 1.0)."""
    import uuid
    now = lambda: int(time.time() * 1000)  # noqa: E731
    thread, msg, tool, msg2 = (str(uuid.uuid4()) for _ in range(4))
    events = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id, "timestamp": now()},
              {"type": "TEXT_MESSAGE_START", "messageId": msg, "role": "assistant", "timestamp": now()}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": msg, "delta": f" tok{i}ü", "timestamp": now()} for i in range(tokens)]
    events += [{"type": "TEXT_MESSAGE_END", "messageId": msg, "timestamp": now()},
               {"type": "TOOL_CALL_START", "toolCallId": tool, "toolCallName": "search", "parentMessageId": msg, "timestamp": now()},
               {"type": "TOOL_CALL_ARGS", "toolCallId": tool, "delta": '{"q":', "timestamp": now()},
               {"type": "TOOL_CALL_ARGS", "toolCallId": tool, "delta": '"relay"}', "timestamp": now()},
               {"type": "TOOL_CALL_END", "toolCallId": tool, "timestamp": now()},
               {"type": "TOOL_CALL_RESULT", "messageId": msg2, "toolCallId": tool, "role": "tool",
                "content": "r" * tool_result_bytes, "timestamp": now()},
               {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id, "timestamp": now()}]
    return events
