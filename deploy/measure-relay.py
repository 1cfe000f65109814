#!/usr/bin/env python3
"""Cost of a relayed event (--peers) next to the direct path: a small dedicated run, indicative only.

  python3 deploy/measure-relay.py --jar server/target/iqstream-server.jar --java JAVA [--events 5000 --rate 1000]

Two nodes with --peers on 127.0.0.1 (2 workers each). One run is published to the node that holds it (A) at a
steady rate, one event per chunk, each event carrying its send time. Two subscribers read it at the same time:
one connected to A (direct), one connected to B (relayed by B to A). Prints, per path, the latency from send to
receipt (p50/p99/max, ms) and the CPU time per event of the nodes (utime+stime from /proc/<pid>/stat): A alone
for the direct path; B's extra CPU is the relay's cost per event.
"""
import argparse
import http.client
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("tc", os.path.join(os.path.dirname(__file__), "test-cluster.py"))
tc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tc)


def cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def subscriber(port, run_id, n, out):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", f"/v1/runs/{run_id}/events?access_token={tc.TOKEN}")
    r = c.getresponse()
    lat = []
    while len(lat) < n:
        line = r.readline()
        if not line:
            break
        if line.startswith(b"data: "):
            sent = json.loads(line[6:])["t"]
            lat.append((time.time_ns() - sent) / 1e6)
    out.extend(lat)
    c.close()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def measure(cl, a, tag, report):
    # a run id whose owner is node 0 (A): create it there, check with the peer lookup
    run_id = None
    for k in range(100):
        rid = f"relay-{tag}-{k}"
        c = http.client.HTTPConnection("127.0.0.1", cl.ports[0], timeout=10)
        c.request("POST", f"/v1/runs/{rid}/events", body=b'{"type":"RUN_STARTED","t":0}\n',
                  headers={"Authorization": f"Bearer {tc.TOKEN}", "Content-Type": "application/x-ndjson"})
        c.getresponse().read()
        c.close()
        if cl.holds(0, rid):
            run_id = rid
            break
    assert run_id, "no run id landed on node 0"
    direct, relayed = [], []
    n = a.events
    t1 = threading.Thread(target=subscriber, args=(cl.ports[0], run_id, n + 1, direct))
    t2 = threading.Thread(target=subscriber, args=(cl.ports[1], run_id, n + 1, relayed))
    t1.start()
    t2.start()
    time.sleep(1.0)
    pa, pb = cl.procs[0].pid, cl.procs[1].pid
    ca, cb = cpu_s(pa), cpu_s(pb)
    s = socket.create_connection(("127.0.0.1", cl.ports[0]))
    s.sendall((f"POST /v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {tc.TOKEN}\r\n"
               "Content-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    gap = 1.0 / a.rate
    start = time.perf_counter()
    for i in range(n):
        ev = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x" * 40, "t": time.time_ns()}
        if i == n - 1:
            ev = {"type": "RUN_FINISHED", "t": time.time_ns()}
        line = (json.dumps(ev) + "\n").encode()
        s.sendall(b"%x\r\n" % len(line) + line + b"\r\n")
        due = start + (i + 1) * gap
        while time.perf_counter() < due:
            time.sleep(max(0.0, min(0.001, due - time.perf_counter())))
    s.sendall(b"0\r\n\r\n")
    t1.join(60)
    t2.join(60)
    da, db = cpu_s(pa) - ca, cpu_s(pb) - cb
    s.close()
    direct, relayed = direct[1:], relayed[1:]
    if not report:
        return
    print(f"{n} events at {a.rate}/s, one run, 2 nodes with --peers (indicative: shared machine; "
          "after a warm-up run of the same size)")
    for name, xs in (("direct (subscriber on the holder)", direct), ("relayed (subscriber on the other node)", relayed)):
        print(f"  {name}: {len(xs)} events, latency p50 {pct(xs, .5):.2f} ms, p99 {pct(xs, .99):.2f} ms, "
              f"max {max(xs):.2f} ms")
    print(f"  CPU, holder A (publisher + direct subscriber + serving the relay): {da * 1e6 / n:.1f} us/event")
    print(f"  CPU, relaying node B (one relayed subscriber): {db * 1e6 / n:.1f} us/event")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jar", required=True)
    ap.add_argument("--java", required=True)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--rate", type=int, default=1000)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="iqstream-relay.")
    cl = tc.Cluster(a.java, a.jar, work, 2)
    try:
        for i in range(2):
            cl.start(i)
        cl.await_members([0, 1], live=2, ready=2)
        measure(cl, a, "warm", False)
        measure(cl, a, "measured", True)
    finally:
        cl.stop_all()


if __name__ == "__main__":
    main()
