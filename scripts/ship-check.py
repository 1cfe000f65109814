#!/usr/bin/env python3
"""What a user does with a freshly installed IQ-Stream (archive or image), checked; stdlib only.

Used by scripts/test-dist.sh and scripts/test-image.sh:
  ship-check.py story BASE_URL SECRET [BUDGET_MIB]
      publishes a run (NDJSON), reads it back over SSE (ids 1..5, the events sent), resumes with
      Last-Event-ID: 2 (ids 3..5 only), and checks /healthz and /readyz answer 200; with BUDGET_MIB, that
      /metrics reports that event-log budget (the JVM really got the direct memory the launcher planned).
  ship-check.py drain BASE_URL SECRET -- STOP_CMD...
      opens a publish and sends one event, runs STOP_CMD (which sends SIGTERM) in the background, waits for
      /readyz to answer 503, checks a new run is refused (503), finishes the open run (its publish answers
      2xx, a reader gets every event), then waits for STOP_CMD to end and exits with its status.
Exits non-zero with a message on the first thing that is wrong.
"""
import base64
import hashlib
import hmac
import http.client
import json
import re
import subprocess
import sys
import time
import urllib.parse

EVENTS = [
    {"type": "RUN_STARTED", "threadId": "t1", "runId": "RUN"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello, "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "world"},
    {"type": "RUN_FINISHED", "threadId": "t1", "runId": "RUN"},
]


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def token(secret: str, rights: dict) -> str:
    now = int(time.time())
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": "ship-check", "iat": now, "exp": now + 600, "iqstream": rights}).encode())
    sig = hmac.new(secret.encode(), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64url(sig)}"


def events_of(run_id: str):
    return [json.loads(json.dumps(e).replace('"RUN"', json.dumps(run_id))) for e in EVENTS]


def ndjson(events) -> bytes:
    return b"".join(json.dumps(e).encode() + b"\n" for e in events)


def fail(msg: str):
    sys.exit(f"ship-check: FAIL: {msg}")


class Server:
    def __init__(self, base: str, secret: str):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port or 80
        self.pub = token(secret, {"publish": ["*"]})
        self.sub = token(secret, {"subscribe": ["*"]})

    def conn(self, timeout_s=30.0):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout_s)

    def get(self, path: str, headers=None):
        c = self.conn()
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def publish(self, run_id: str, events):
        c = self.conn()
        c.request("POST", f"/v1/runs/{run_id}/events", body=ndjson(events),
                  headers={"Authorization": f"Bearer {self.pub}", "Content-Type": "application/x-ndjson"})
        r = c.getresponse()
        body = r.read()
        c.close()
        return r.status, body

    def read(self, run_id: str, last_event_id=None):
        """The (id, event) frames of an ended run, read to the end of the stream."""
        headers = {"Authorization": f"Bearer {self.sub}", "Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        status, body = self.get(f"/v1/runs/{run_id}/events", headers)
        if status != 200:
            fail(f"GET run {run_id} (Last-Event-ID {last_event_id}): {status} {body[:200]!r}")
        frames = []
        for block in body.decode().replace("\r\n", "\n").split("\n\n"):
            ev_id, data = None, []
            for line in block.split("\n"):
                field, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if field == "id":
                    ev_id = int(value)
                elif field == "data":
                    data.append(value)
            if data:
                frames.append((ev_id, json.loads("\n".join(data))))
        return frames

    def wait_status(self, path: str, want: int, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        last = None
        while time.monotonic() < deadline:
            try:
                last, _ = self.get(path)
                if last == want:
                    return
            except OSError as e:
                last = repr(e)
            time.sleep(0.05)
        fail(f"{path} did not answer {want} within {timeout_s}s (last: {last})")


def expect_frames(frames, events, first_id: int, what: str):
    want = [(first_id + i, e) for i, e in enumerate(events)]
    if frames != want:
        fail(f"{what}: got {frames}, expected {want}")


def story(s: Server, budget_mib=None):
    for path in ("/healthz", "/readyz"):
        status, body = s.get(path)
        if status != 200:
            fail(f"{path}: {status} {body[:200]!r}")
    run_id = f"ship-{int(time.time() * 1000)}"
    events = events_of(run_id)
    status, body = s.publish(run_id, events)
    if status // 100 != 2:
        fail(f"publish: {status} {body[:200]!r}")
    expect_frames(s.read(run_id), events, 1, "read from the start")
    expect_frames(s.read(run_id, last_event_id=2), events[2:], 3, "resume with Last-Event-ID: 2")
    budget = ""
    if budget_mib is not None:
        status, body = s.get("/metrics")
        m = re.search(rb"^iqstream_memory_budget_bytes (\d+)", body, re.M)
        if status != 200 or not m:
            fail(f"/metrics: {status}, no iqstream_memory_budget_bytes")
        if int(m.group(1)) != int(budget_mib) << 20:
            fail(f"/metrics budget {int(m.group(1)) >> 20} MiB, the launcher planned {budget_mib} MiB")
        budget = f", /metrics budget {budget_mib} MiB as planned"
    print(f"ship-check: story ok (run {run_id}: published 5, read 5, resumed after 2 -> 3 events{budget})")


def first_seen(s: Server, run_id: str):
    c = s.conn(timeout_s=20.0)
    c.request("GET", f"/v1/runs/{run_id}/events", headers={"Authorization": f"Bearer {s.sub}"})
    r = c.getresponse()
    if r.status != 200:
        fail(f"reading the open run {run_id}: {r.status}")
    while True:
        line = r.fp.readline()
        if not line:
            fail(f"the open run {run_id} ended before its first event")
        if line.strip() in (b"id: 1", b"id:1"):
            break
    c.close()


def drain(s: Server, stop_cmd):
    run_id = f"drain-{int(time.time() * 1000)}"
    events = events_of(run_id)
    c = s.conn(timeout_s=60.0)
    c.putrequest("POST", f"/v1/runs/{run_id}/events")
    for k, v in (("Authorization", f"Bearer {s.pub}"), ("Content-Type", "application/x-ndjson"),
                 ("Transfer-Encoding", "chunked")):
        c.putheader(k, v)
    c.endheaders()

    def chunk(data: bytes):
        c.send(b"%x\r\n" % len(data) + data + b"\r\n")

    chunk(ndjson(events[:1]))
    # the run exists (and so is the server's to finish) once a reader sees its first event
    first_seen(s, run_id)
    stopper = subprocess.Popen(stop_cmd, stdout=subprocess.DEVNULL)
    s.wait_status("/readyz", 503, 20)
    status, body = s.publish(f"{run_id}-late", events_of(f"{run_id}-late"))
    if status != 503:
        fail(f"a new run while draining: expected 503, got {status} {body[:200]!r}")
    for e in events[1:]:
        chunk(ndjson([e]))
    c.send(b"0\r\n\r\n")
    r = c.getresponse()
    body = r.read()
    if r.status // 100 != 2:
        fail(f"the run open across SIGTERM: publish answered {r.status} {body[:200]!r}")
    # the ended run is still readable until the server stops (it may already be closing; both are fine)
    try:
        expect_frames(s.read(run_id), events, 1, "the drained run")
        read_back = "read back whole"
    except (OSError, http.client.HTTPException):
        read_back = "server already closed"
    rc = stopper.wait(timeout=120)
    if rc != 0:
        fail(f"{' '.join(stop_cmd)} exited {rc}")
    print(f"ship-check: drain ok (readyz 503, new run 503, open run finished 2xx, {read_back}; stop command 0)")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    cmd, base, secret = sys.argv[1:4]
    s = Server(base, secret)
    if cmd == "story":
        story(s, sys.argv[4] if len(sys.argv) > 4 else None)
    elif cmd == "drain" and len(sys.argv) > 5 and sys.argv[4] == "--":
        drain(s, sys.argv[5:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
