#!/usr/bin/env python3
"""Measures how long a start takes to recover a data directory's durable streams (docs/DURABLE-STREAMS.md,
"Recovery"): starts ./iqstream's server jar with --durability disk on a fresh directory, appends TOTAL bytes in
messages of MESSAGE bytes spread over STREAMS streams, stops it (SIGTERM), drops the page cache when run as root
(a cold start), starts it again on the same directory and prints the start's own figure ("N recovered in M ms").

  scripts/measure-recovery.py [--total 1g] [--message 16k] [--streams 1000] [--memory-budget 3g]

Needs the built jar (./iqstream build) and a JDK 21+ (JAVA_HOME or IQSTREAM_JAVA). Loopback only."""
import argparse
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

from iqstream_java import java

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def size(text):
    m = re.fullmatch(r"(\d+)([kmg]?)", text.lower())
    if not m:
        raise argparse.ArgumentTypeError("a size such as 16k, 1g: " + text)
    return int(m.group(1)) * UNITS[m.group(2)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port, data_dir, budget, log):
    jar = os.path.join(ROOT, "server", "target", "iqstream-server.jar")
    p = subprocess.Popen([java(), "-jar", jar, "serve", "--host", "127.0.0.1", "--port", str(port), "--auth", "none",
                          "--durable-streams-open", "true", "--warmup", "0", "--durability", "disk", "--data-dir",
                          data_dir, "--memory-budget", budget], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if p.poll() is not None:
            sys.exit("the server exited (%d); see %s" % (p.returncode, log.name))
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", "/readyz")
            if c.getresponse().status == 200:
                return p
        except OSError:
            pass
        time.sleep(0.2)  # polling the start, bounded by the deadline
    p.kill()
    sys.exit("the server was not ready within 300 s")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--total", type=size, default=size("1g"))
    ap.add_argument("--message", type=size, default=size("16k"))
    ap.add_argument("--streams", type=int, default=1000)
    ap.add_argument("--memory-budget", default="3g")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="iqstream-recovery-")
    data = os.path.join(work, "data")
    port = free_port()
    try:
        with open(os.path.join(work, "first.log"), "w") as log:
            p = start(port, data, a.memory_budget, log)
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            body = os.urandom(a.message)
            octets = {"Content-Type": "application/octet-stream"}
            for i in range(a.streams):
                c.request("PUT", "/v1/stream/recovery/%d" % i, headers=octets)
                r = c.getresponse()
                r.read()
                assert r.status in (200, 201), r.status
            n = a.total // a.message
            t0 = time.monotonic()
            for k in range(n):
                c.request("POST", "/v1/stream/recovery/%d" % (k % a.streams), body=body, headers=octets)
                r = c.getresponse()
                r.read()
                assert r.status in (200, 204), r.status
            print("appended %d messages of %d bytes to %d streams in %.1f s" % (n, a.message, a.streams,
                                                                              time.monotonic() - t0))
            p.send_signal(signal.SIGTERM)
            p.wait(120)
        cold = os.geteuid() == 0
        if cold:
            subprocess.run(["sync"], check=True)
            with open("/proc/sys/vm/drop_caches", "w") as f:
                f.write("3\n")
        with open(os.path.join(work, "second.log"), "w") as log:
            p = start(port, data, a.memory_budget, log)
            p.send_signal(signal.SIGTERM)
            p.wait(120)
        with open(os.path.join(work, "second.log")) as f:
            line = next((l for l in f if "recovered in" in l), None)
        if line is None:
            sys.exit("no recovery line in the second start's log")
        m = re.search(r"(\d+) MiB used\): (\d+) recovered in (\d+) ms", line)
        print("recovered %s streams, %s MiB, in %s ms (%s page cache)" % (m.group(2), m.group(1), m.group(3),
                                                                        "a cold" if cold else "a warm"))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
