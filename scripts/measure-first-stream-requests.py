#!/usr/bin/env python3
"""What a fresh server's first Durable Streams requests take (docs/OPERATIONS.md, "Start-up: the JIT warm-up").

For each jar named, in turn and ROUNDS times: starts it (pinned to CPU 0 with taskset where there is one; 1 worker,
--durability disk on a fresh directory, its default --warmup), waits for its "listening" line, then on one keep-alive
connection creates a JSON stream and makes 400 appends one after another, each timed from its send to its answer's
head, and reads the stream whole once on a second connection. Prints, per start: the creation's time, the median
and the slowest of the first 50 appends, the median of the last 100, and the catch-up's time, all in ms. Compare a
jar from before a change with one after it; the figures are client timings on a shared machine: run a few rounds.

  scripts/measure-first-stream-requests.py JAR [JAR ...] [--rounds N] [--port P]

Needs a JDK 21+ (JAVA_HOME or IQSTREAM_JAVA). Loopback only."""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import tempfile
import time

from iqstream_java import java


def measure(jar, port):
    work = tempfile.mkdtemp(prefix="iqstream-first-")
    log_path = os.path.join(work, "server.log")
    pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
    with open(log_path, "w") as log:
        server = subprocess.Popen(pin + [java(), "-XX:+UseG1GC", "-Xms512m", "-Xmx512m", "-jar", jar, "serve",
                                         "--host", "127.0.0.1", "--port", str(port), "--auth", "none",
                                         "--durable-streams-open", "true", "--workers", "1", "--durability", "disk",
                                         "--data-dir", os.path.join(work, "data")],
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while "listening" not in open(log_path).read():
            if time.time() > deadline or server.poll() is not None:
                raise SystemExit("the server did not start: " + log_path)
            time.sleep(0.05)
        conn = socket.create_connection(("127.0.0.1", port))
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def request(method, body=b""):
            conn.sendall(("%s /v1/stream/first/s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          "Content-Length: %d\r\n\r\n" % (method, len(body))).encode() + body)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(4096)
                if not chunk:
                    raise SystemExit("the server closed the connection")
                head += chunk
            return head

        t0 = time.perf_counter()
        if not request("PUT").startswith(b"HTTP/1.1 201"):
            raise SystemExit("the stream was not created")
        created = (time.perf_counter() - t0) * 1e3
        appends = []
        for i in range(400):
            t0 = time.perf_counter()
            answer = request("POST", b'{"type":"TEXT_MESSAGE_CONTENT","delta":"token %d"}' % i)
            appends.append((time.perf_counter() - t0) * 1e3)
            if not answer.startswith(b"HTTP/1.1 204"):
                raise SystemExit("append %d answered %r" % (i, answer[:40]))
        reader = socket.create_connection(("127.0.0.1", port))
        t0 = time.perf_counter()
        reader.sendall(b"GET /v1/stream/first/s?offset=-1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        while reader.recv(65536):
            pass
        catch_up = (time.perf_counter() - t0) * 1e3
        return "create %.2f, first 50 appends median %.3f max %.2f, last 100 median %.3f, catch-up %.2f" % (
            created, statistics.median(appends[:50]), max(appends[:50]), statistics.median(appends[-100:]), catch_up)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("jars", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--port", type=int, default=18600)
    args = parser.parse_args()
    for _ in range(args.rounds):
        for jar in args.jars:
            print("%s: %s" % (jar, measure(jar, args.port)), flush=True)


if __name__ == "__main__":
    main()
