#!/usr/bin/env python3
"""What an idle reader costs a server: N live readers held open on one stream, the server's memory before and after.

    scripts/idle-readers.py [--readers 4000] [--kind agui|ds-sse|ds-long-poll|all] [--electric PATH]

For IQ-Stream (server/target/iqstream-server.jar, built first: ./iqstream build) the server runs with a fixed,
pre-touched heap (-Xms = -Xmx, -XX:+AlwaysPreTouch), so the growth of its resident set is the off-heap part
(direct buffers, thread stacks, code); the heap part is the growth of the live heap after a full GC (the sum of
`jcmd PID GC.class_histogram`, which collects first). With --histogram the classes that grew most are printed.
Readers: AG-UI SSE (`GET /v1/runs/{run}/events` on a run that is open and quiet), Durable Streams SSE
(`?offset=-1&live=sse`) and long-poll (`?offset=now&live=long-poll`, the long-poll timeout raised so they stay
waiting). Before the baseline, N readers of the same kind are opened and closed (pool pages, code and malloc
arenas are touched once: a first crowd grows the resident set by more than it holds). After the
figures, one event is published and every reader must get it (an SSE reader its frame, a long-poll its answer).

--electric PATH measures Electric's Durable Streams server (the Rust binary bench/peers/install-durable-streams.sh
builds) the same way for the ds-* kinds: its resident set's growth (it has no heap of its own to add).

Figures are printed as one line per kind: KiB per reader, off-heap, heap and total. No third-party packages.
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import re
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SECRET = "idle-readers-secret-0123456789abcdef0123456789"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(claims):
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps(dict(claims, exp=int(time.time()) + 3600)).encode())
    sig = hmac.new(SECRET.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def jcmd(pid, *args):
    java_home = os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    return subprocess.run([os.path.join(java_home, "bin", "jcmd"), str(pid), *args], capture_output=True,
                          text=True, check=True).stdout


def histogram(pid):
    """{class: (instances, bytes)} of the live heap, after a full GC (GC.class_histogram collects first)."""
    out = {}
    for line in jcmd(pid, "GC.class_histogram").splitlines():
        m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", line)
        if m:
            out[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return out


def http(port, method, path, body=None, headers=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method, headers=headers or {})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.status, r.read()


def wait_ready(port, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("server did not listen")


class Readers:
    """N raw-socket readers, their requests sent at once; heads and bodies read with one selector."""

    def __init__(self, port):
        self.port = port
        self.socks = []
        self.data = {}
        self.sel = selectors.DefaultSelector()

    def open(self, n, request):
        for i in range(n):
            s = socket.create_connection(("127.0.0.1", self.port))
            s.setblocking(False)
            s.sendall(request)
            self.socks.append(s)
            self.data[s] = bytearray()
            self.sel.register(s, selectors.EVENT_READ)
            if i % 200 == 199:
                self.pump(0)

    def pump(self, timeout):
        for key, _ in self.sel.select(timeout):
            try:
                chunk = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            if chunk:
                self.data[key.fileobj] += chunk
            else:
                self.sel.unregister(key.fileobj)

    def until(self, predicate, seconds, what):
        deadline = time.time() + seconds
        while True:
            done = sum(1 for s in self.socks if predicate(bytes(self.data[s])))
            if done == len(self.socks):
                return done
            if time.time() > deadline:
                raise RuntimeError(f"{what}: {done} of {len(self.socks)}")
            self.pump(0.2)

    def close(self):
        for s in self.socks:
            try:
                self.sel.unregister(s)
            except (KeyError, ValueError):
                pass
            s.close()
        self.socks.clear()
        self.data.clear()


def start_iqstream(port, heap_mb, jar):
    java_home = os.environ.get("JAVA_HOME", "/usr/lib/jvm/temurin-25-jdk-amd64")
    data = tempfile.mkdtemp(prefix="idle-readers-")
    cmd = [os.path.join(java_home, "bin", "java"), f"-Xms{heap_mb}m", f"-Xmx{heap_mb}m", "-XX:+AlwaysPreTouch",
           "--sun-misc-unsafe-memory-access=allow", "-jar", jar, "--port", str(port), "--host", "127.0.0.1",
           "--jwt-secret", SECRET, "--durability", "memory", "--data-dir", data, "--warmup", "0",
           "--durable-streams-open", "true", "--durable-streams-long-poll", "300s", "--heartbeat", "300s",
           "--max-connections", "100000", "--log-level", "warn"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=sys.stderr)
    wait_ready(port, proc)
    return proc


def start_electric(binary, port):
    data = tempfile.mkdtemp(prefix="idle-readers-electric-")
    cmd = [binary, "--host", "127.0.0.1", "--port", str(port), "--data-dir", data, "--worker-threads", "2",
           "--long-poll-timeout-ms", "300000", "--durability", "memory"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=data)
    wait_ready(port, proc)
    return proc


def setup(kind, port, name, electric):
    """Creates the run or stream; returns (request bytes, publish function, predicate for 'got the event')."""
    if kind == "agui":
        pub = token({"iqstream": {"publish": ["*"], "subscribe": ["*"]}})
        sub = token({"iqstream": {"subscribe": ["*"]}})
        run = f"idle-{name}"
        body = json.dumps({"type": "RUN_STARTED", "threadId": "t", "runId": run}).encode() + b"\n"
        http(port, "POST", f"/v1/runs/{run}/events", body,
             {"Authorization": f"Bearer {pub}", "Content-Type": "application/x-ndjson"})
        req = (f"GET /v1/runs/{run}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {sub}\r\n"
               f"Accept: text/event-stream\r\n\r\n").encode()

        def publish():
            ev = json.dumps({"type": "RUN_FINISHED", "threadId": "t", "runId": run}).encode() + b"\n"
            http(port, "POST", f"/v1/runs/{run}/events", ev,
                 {"Authorization": f"Bearer {pub}", "Content-Type": "application/x-ndjson"})
        return req, publish, lambda d: b"id: 2\n" in d
    path = f"/v1/stream/idle-{name}"
    http(port, "PUT", path, b"", {"Content-Type": "application/json"})
    query = "offset=-1&live=sse" if kind == "ds-sse" else "offset=now&live=long-poll"
    req = f"GET {path}?{query} HTTP/1.1\r\nHost: x\r\n\r\n".encode()

    def publish():
        http(port, "POST", path, b'{"n":1}', {"Content-Type": "application/json"})
    return req, publish, lambda d: b'"n":1' in d


def measure(kind, n, port, pid, name, electric, show_histogram):
    req, publish, got = setup(kind, port, name, electric)
    head = lambda d: b"\r\n\r\n" in d
    # warm-up: as many readers of the same kind, then closed (pool pages, code, malloc arenas touched once)
    warm = Readers(port)
    if kind != "ds-long-poll":
        warm.open(n, req)
        warm.until(head, 60, "warm-up heads")
    else:
        warm.open(n, req)
        time.sleep(1)
    warm.close()
    time.sleep(1)
    if not electric:
        histogram(pid)  # the attach listener and the histogram's own native memory, before the baseline
    heap0 = None if electric else histogram(pid)
    time.sleep(1)
    rss0 = rss_kib(pid)
    readers = Readers(port)
    readers.open(n, req)
    if kind != "ds-long-poll":
        readers.until(head, 120, "response heads")
    else:
        time.sleep(2)
        readers.pump(0.5)
    time.sleep(2)
    rss1 = rss_kib(pid)  # before the histogram, which takes native memory of its own
    heap1 = None if electric else histogram(pid)
    off = (rss1 - rss0) / n
    heap = 0.0
    if heap0 is not None:
        heap = (sum(b for _, b in heap1.values()) - sum(b for _, b in heap0.values())) / 1024 / n
    print(f"{name} {kind}: {n} readers: {off:.2f} KiB off-heap (RSS {rss0} -> {rss1} KiB) + {heap:.2f} KiB heap"
          f" = {off + heap:.2f} KiB per reader", flush=True)
    if show_histogram and heap0 is not None:
        rows = []
        for cls, (count, size) in heap1.items():
            c0, s0 = heap0.get(cls, (0, 0))
            if size - s0 > 0:
                rows.append((size - s0, count - c0, cls))
        rows.sort(reverse=True)
        for size, count, cls in rows[:40]:
            print(f"    {size / n:8.1f} B/reader  {count / n:6.2f} objects/reader  {cls}")
    publish()
    readers.until(got, 120, "readers that got the event")
    print(f"{name} {kind}: all {n} readers got the next event", flush=True)
    readers.close()
    return off, heap


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--readers", type=int, default=4000)
    p.add_argument("--kind", default="all", choices=["agui", "ds-sse", "ds-long-poll", "all"])
    p.add_argument("--heap-mb", type=int, default=256)
    p.add_argument("--jar", default=os.path.join(ROOT, "server", "target", "iqstream-server.jar"),
                   help="the server jar (default: this tree's, built by ./iqstream build)")
    p.add_argument("--electric", help="Electric's durable-streams-server binary: measured too (ds-* kinds)")
    p.add_argument("--histogram", action="store_true", help="print the classes that grew most, per reader")
    a = p.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < a.readers + 1000:
        sys.exit(f"ulimit -n allows {hard} files: {a.readers} readers need more")
    kinds = ["agui", "ds-sse", "ds-long-poll"] if a.kind == "all" else [a.kind]
    for kind in kinds:
        # a fresh server per kind: one kind's readers do not warm the next one's
        port = free_port()
        proc = start_iqstream(port, a.heap_mb, a.jar)
        try:
            measure(kind, a.readers, port, proc.pid, "iqstream", False, a.histogram)
        finally:
            proc.terminate()
            proc.wait()
        if a.electric and kind != "agui":
            port = free_port()
            proc = start_electric(a.electric, port)
            try:
                measure(kind, a.readers, port, proc.pid, "electric", True, False)
            finally:
                proc.terminate()
                proc.wait()


if __name__ == "__main__":
    main()
