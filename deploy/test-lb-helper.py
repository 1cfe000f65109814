#!/usr/bin/env python3
"""Small tools for deploy/test-lb.sh (Python 3 standard library only).

  token SECRET RIGHTS_JSON [TTL_S]     print an HS256 JWT with claim {"iqstream": RIGHTS}
  free-port                            print a free TCP port on 127.0.0.1
  sse FILE --ids 1,2,3 [--events F]    check an SSE capture: exactly these event ids, in
                                       order; with --events, each data line equals line
                                       (id) of the NDJSON file F, compared as JSON
  slow-publish URL TOKEN EVENTS --first N --go FILE --out FILE [--end-delay-s S]
                                       POST EVENTS (NDJSON) chunked to URL, one chunk per
                                       event: the first N at once, the rest after FILE
                                       exists, the end of the body S seconds after the
                                       last event; write "STATUS BODY" to --out
  haproxy-state SOCK BACKEND SERVER    print the server's status from the runtime API
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import socket
import sys
import time
import urllib.parse


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def cmd_token(a):
    header = {"alg": "HS256", "typ": "JWT"}
    now = int(time.time())
    claims = {"sub": "test-lb", "iat": now, "exp": now + a.ttl_s, "iqstream": json.loads(a.rights)}
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        b64url(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(a.secret.encode(), signing_input.encode(), hashlib.sha256).digest()
    print(signing_input + "." + b64url(sig))


def cmd_free_port(_a):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        print(s.getsockname()[1])


def parse_sse(text: str):
    """Returns [(id, data)] for every frame that carries data."""
    frames = []
    text = text.replace("\r\n", "\n")
    for block in text.split("\n\n"):
        ev_id, data = None, []
        for line in block.split("\n"):
            if line.startswith(":") or not line:
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if field == "id":
                ev_id = value
            elif field == "data":
                data.append(value)
        if data:
            frames.append((ev_id, "\n".join(data)))
    return frames


def cmd_sse(a):
    with open(a.file, encoding="utf-8", errors="replace") as f:
        frames = parse_sse(f.read())
    want = [x for x in a.ids.split(",") if x]
    got = [i for i, _ in frames]
    if got != want:
        sys.exit(f"event ids {got}, expected {want}")
    if a.events:
        with open(a.events, encoding="utf-8") as f:
            sent = [json.loads(line) for line in f if line.strip()]
        for ev_id, data in frames:
            try:
                event = json.loads(data)
            except ValueError:
                sys.exit(f"event {ev_id}: data is not JSON: {data[:200]!r}")
            if event != sent[int(ev_id) - 1]:
                sys.exit(f"event {ev_id}: got {data[:200]}, sent {json.dumps(sent[int(ev_id) - 1])[:200]}")


def cmd_slow_publish(a):
    url = urllib.parse.urlsplit(a.url)
    with open(a.events, encoding="utf-8") as f:
        lines = [line.rstrip("\n") + "\n" for line in f if line.strip()]
    sock = socket.create_connection((url.hostname, url.port or 80), timeout=60)
    head = (f"POST {url.path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {a.token}\r\nContent-Type: application/x-ndjson\r\n"
            "Transfer-Encoding: chunked\r\n\r\n")
    sock.sendall(head.encode())

    def send_chunk(data: bytes):
        sock.sendall(b"%x\r\n" % len(data) + data + b"\r\n")

    for line in lines[:a.first]:
        send_chunk(line.encode())
    deadline = time.monotonic() + a.go_timeout_s
    while not os.path.exists(a.go):
        if time.monotonic() > deadline:
            sys.exit(f"slow-publish: {a.go} did not appear within {a.go_timeout_s}s")
        time.sleep(0.02)
    for line in lines[a.first:]:
        send_chunk(line.encode())
        time.sleep(0.02)
    time.sleep(a.end_delay_s)  # a publisher may end its body a moment after the terminal event
    sock.sendall(b"0\r\n\r\n")
    resp = http.client.HTTPResponse(sock)
    resp.begin()
    body = resp.read().decode(errors="replace")
    tmp = a.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(f"{resp.status} {body}")
    os.replace(tmp, a.out)


def cmd_haproxy_state(a):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(a.sock)
        s.sendall(b"show stat\n")
        out = b""
        while chunk := s.recv(65536):
            out += chunk
    lines = out.decode().splitlines()
    header = lines[0].lstrip("# ").split(",")
    col = header.index("status")
    for line in lines[1:]:
        row = line.split(",")
        if len(row) > col and row[0] == a.backend and row[1] == a.server:
            print(row[col])
            return
    sys.exit(f"no server {a.backend}/{a.server} in haproxy stats")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("token")
    t.add_argument("secret")
    t.add_argument("rights")
    t.add_argument("ttl_s", nargs="?", type=int, default=3600)
    t.set_defaults(fn=cmd_token)
    sub.add_parser("free-port").set_defaults(fn=cmd_free_port)
    s = sub.add_parser("sse")
    s.add_argument("file")
    s.add_argument("--ids", required=True)
    s.add_argument("--events")
    s.set_defaults(fn=cmd_sse)
    w = sub.add_parser("slow-publish")
    w.add_argument("url")
    w.add_argument("token")
    w.add_argument("events")
    w.add_argument("--first", type=int, default=1)
    w.add_argument("--go", required=True)
    w.add_argument("--go-timeout-s", type=float, default=60)
    w.add_argument("--out", required=True)
    w.add_argument("--end-delay-s", type=float, default=0)
    w.set_defaults(fn=cmd_slow_publish)
    h = sub.add_parser("haproxy-state")
    h.add_argument("sock")
    h.add_argument("backend")
    h.add_argument("server")
    h.set_defaults(fn=cmd_haproxy_state)
    a = p.parse_args()
    a.fn(a)


if __name__ == "__main__":
    main()
