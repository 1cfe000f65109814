"""The dashboard and alerts against a real Prometheus scraping real IQ-Stream nodes (run by test-observability.sh)."""
import http.client
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
JAR = os.environ["IQSTREAM_JAR"]
JAVA = os.environ["IQSTREAM_JAVA"]
WORK = tempfile.mkdtemp(prefix="iqstream-obs-")
PROCS = []
PASSED = 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ok(what):
    global PASSED
    PASSED += 1
    print("ok   " + what, flush=True)


def fail(what):
    print("FAIL: " + what + " (logs in " + WORK + ")", file=sys.stderr, flush=True)
    cleanup(keep=True)
    print("0 passed, 1 failed")
    sys.exit(1)


def cleanup(keep=False):
    for p in PROCS:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()
    if not keep and os.environ.get("KEEP_WORK") != "1":
        shutil.rmtree(WORK, ignore_errors=True)


def start(name, args):
    log = open(os.path.join(WORK, name + ".log"), "w")
    p = subprocess.Popen([JAVA, "-Xmx256m", "-jar", JAR, "serve"] + args, stdout=log, stderr=subprocess.STDOUT)
    PROCS.append(p)
    return p


def wait_for(what, timeout_s, check):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.5)  # polling a condition, bounded by the deadline
    fail(what + " (not within " + str(timeout_s) + " s)")


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def publish(port, run, events):
    lines = [json.dumps({"type": "RUN_STARTED", "threadId": "t", "runId": run})]
    lines += [json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x%d" % i})
              for i in range(events)]
    lines.append(json.dumps({"type": "RUN_FINISHED", "threadId": "t", "runId": run}))
    return request(port, "POST", "/v1/runs/%s/events" % run, "\n".join(lines) + "\n",
                   {"Content-Type": "application/x-ndjson"})


def prom(port, path, params):
    url = "http://127.0.0.1:%d%s?%s" % (port, path, urllib.parse.urlencode(params))
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def main():
    pa, pb, pc, pp = free_port(), free_port(), free_port(), free_port()
    secret = "obs-test-secret-0123456789abcdef0123456789"
    peers = "127.0.0.1:%d,127.0.0.1:%d" % (pa, pb)
    common = ["--host", "127.0.0.1", "--auth", "none", "--warmup", "0", "--durability", "memory"]
    start("a", common + ["--port", str(pa), "--peers", peers, "--advertise", "127.0.0.1:%d" % pa,
                         "--cluster-secret", secret])
    start("b", common + ["--port", str(pb), "--peers", peers, "--advertise", "127.0.0.1:%d" % pb,
                         "--cluster-secret", secret])
    start("c", common + ["--port", str(pc), "--memory-budget", "64k"])
    for port in (pa, pb, pc):
        wait_for("node on %d up" % port, 60, lambda port=port: request(port, "GET", "/healthz")[0] == 200)
    ok("three nodes up")

    rules = os.path.join(WORK, "alerts.yml")
    shutil.copy(os.path.join(HERE, "alerts.yml"), rules)
    config = os.path.join(WORK, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                "rule_files:\n  - %s\n"
                "scrape_configs:\n  - job_name: iqstream\n    static_configs:\n"
                "      - targets: ['127.0.0.1:%d', '127.0.0.1:%d', '127.0.0.1:%d']\n" % (rules, pa, pb, pc))
    log = open(os.path.join(WORK, "prometheus.log"), "w")
    PROCS.append(subprocess.Popen(["prometheus", "--config.file", config, "--storage.tsdb.path",
                                   os.path.join(WORK, "tsdb"), "--web.listen-address", "127.0.0.1:%d" % pp],
                                  stdout=log, stderr=subprocess.STDOUT))
    wait_for("Prometheus scraping all three nodes", 60, lambda: len(
        [r for r in prom(pp, "/api/v1/query", {"query": 'up{job="iqstream"} == 1'})["data"]["result"]]) == 3)
    ok("Prometheus scrapes the three nodes")

    # a little load: runs published on each cluster node, read back on the other (relayed) and resumed,
    # a durable stream created, appended to and read; then the small node's budget is overrun
    for i in range(6):
        run = "obs-%d" % i
        pub, read = (pa, pb) if i % 2 == 0 else (pb, pa)
        status, body = publish(pub, run, 20)
        if status != 200:
            fail("publish %s: %d %s" % (run, status, body))
        status, body = request(read, "GET", "/v1/runs/%s/events" % run, headers={"Last-Event-ID": "3"})
        if status != 200 or b"RUN_FINISHED" not in body:
            fail("resume %s: %d" % (run, status))
    for op, expect in (("PUT", 201), ("POST", 204), ("GET", 200)):
        path = "/v1/stream/obs" + ("?offset=-1" if op == "GET" else "")
        status, _ = request(pa, op, path, "hello" if op == "POST" else None, {"Content-Type": "text/plain"})
        if status not in (expect, 200):
            fail("durable %s: %d" % (op, status))
    ok("load: 6 runs published, read back on the other node with Last-Event-ID, a durable stream written and read")

    def overrun():
        status, _ = publish(pc, "big-%d" % time.monotonic_ns(), 2000)
        return status

    status = overrun()
    if status != 503:
        fail("the 64 KiB node took a 2,000-event run: %d, expected 503 over_budget" % status)
    ok("the 64 KiB node refuses a large run with 503")

    with open(os.path.join(HERE, "iqstream-dashboard.json")) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    empty = []

    def all_return_data():
        empty.clear()
        for e in exprs:
            q = e.replace("$__rate_interval", "1m")
            result = prom(pp, "/api/v1/query", {"query": q})["data"]["result"]
            if not result:
                empty.append(e)
        return not empty

    wait_for("every dashboard query returning data (empty: %s)" % empty, 90, all_return_data)
    ok("every query of the dashboard (%d) returns data" % len(exprs))

    def firing():
        overrun()  # refused again: the refusal counter keeps rising while the alert waits out its 'for'
        alerts = prom(pp, "/api/v1/alerts", {})["data"]["alerts"]
        fired = [a for a in alerts if a["labels"]["alertname"] == "IqStreamOverBudget" and a["state"] == "firing"]
        wrong = [a for a in fired if a["labels"].get("instance") != "127.0.0.1:%d" % pc]
        if wrong:
            fail("IqStreamOverBudget fired on a node with room: %s" % wrong)
        return len(fired) > 0

    wait_for("IqStreamOverBudget firing on the 64 KiB node", 180, firing)
    ok("IqStreamOverBudget fires on the node whose budget is full, and only there")
    cleanup()
    print("%d passed, 0 failed" % PASSED)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # anything unexpected fails the suite with its reason
        fail("%s: %s" % (type(e).__name__, e))
