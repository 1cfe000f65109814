"""One trace across two IQ-Stream nodes, received by a real OpenTelemetry Collector (run by run-tests.sh).

The agent POSTs a run to node A with its traceparent; the browser (its page carrying the same trace) reads the run
on node A, drops, and resumes with Last-Event-ID on node B; the same trace appends to and reads a durable stream.
The run lives on one node, so at least one of these requests is relayed: the collector must hold, in that trace,
the publish (events, outcome), each read and the resume (resumed after, replayed, link to the publish), the relay
hop (a client span) and the peer's span under it, and the Durable Streams create, append and read.
"""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JAR = os.environ["IQSTREAM_JAR"]
JAVA = os.environ["IQSTREAM_JAVA"]
WORK = tempfile.mkdtemp(prefix="iqstream-otel-")
PROCS = []
PASSED = 0
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
AGENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = "00-%s-%s-01" % (TRACE_ID, AGENT_SPAN)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ok(what):
    global PASSED
    PASSED += 1
    print("ok   " + what, flush=True)


def cleanup(keep=False):
    for p in PROCS:
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            p.wait()
    if not keep and os.environ.get("KEEP_WORK") != "1":
        shutil.rmtree(WORK, ignore_errors=True)


def fail(what):
    print("FAIL: " + what + " (logs in " + WORK + ")", file=sys.stderr, flush=True)
    cleanup(keep=True)
    print("%d passed, 1 failed" % PASSED)
    sys.exit(1)


def check(cond, what):
    if not cond:
        fail(what)


def wait_for(what, timeout_s, probe):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if probe():
                return
        except OSError:
            pass
        time.sleep(0.3)  # polling a condition, bounded by the deadline
    fail(what + " (not within %d s)" % timeout_s)


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data


def spawn(name, argv, env=None):
    log = open(os.path.join(WORK, name + ".log"), "w")
    p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    PROCS.append(p)
    return p


def attrs(span):
    out = {}
    for a in span.get("attributes", []):
        v = a["value"]
        out[a["key"]] = v.get("stringValue", v.get("intValue", v.get("boolValue", v.get("doubleValue"))))
    return out


def spans_of_trace(path):
    found = []
    if not os.path.exists(path):
        return found
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                batch = json.loads(line)
            except json.JSONDecodeError:
                continue  # the collector's file exporter is still writing this line: a later poll reads it whole
            for rs in batch.get("resourceSpans", []):
                service = attrs(rs.get("resource", {})).get("service.name")
                for ss in rs.get("scopeSpans", []):
                    for s in ss.get("spans", []):
                        if s["traceId"].lower() == TRACE_ID:
                            s["_attrs"] = attrs(s)
                            s["_service"] = service
                            found.append(s)
    return found


def main():
    grpc, otlp_http = free_port(), free_port()
    out = os.path.join(WORK, "traces.jsonl")
    config = os.path.join(WORK, "collector.yaml")
    with open(config, "w") as f:
        f.write("receivers:\n  otlp:\n    protocols:\n"
                "      grpc:\n        endpoint: 127.0.0.1:%d\n"
                "      http:\n        endpoint: 127.0.0.1:%d\n"
                "exporters:\n  file:\n    path: %s\n    flush_interval: 100ms\n"
                "service:\n  telemetry:\n    metrics:\n      level: none\n"
                "  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [file]\n"
                % (grpc, otlp_http, out))
    spawn("collector", [os.path.join(HERE, "collector", "bin", "otelcol"), "--config", "file:" + config])
    wait_for("the collector listening", 60, lambda: socket.create_connection(("127.0.0.1", otlp_http), 1).close()
             or True)
    ok("the OpenTelemetry Collector receives OTLP on 127.0.0.1:%d" % otlp_http)

    pa, pb = free_port(), free_port()
    secret = "otel-e2e-secret-0123456789abcdef0123456789"
    peers = "127.0.0.1:%d,127.0.0.1:%d" % (pa, pb)
    for name, port in (("a", pa), ("b", pb)):
        env = dict(os.environ, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:%d" % otlp_http,
                   OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf", OTEL_SERVICE_NAME="iqstream-" + name,
                   OTEL_BSP_SCHEDULE_DELAY="100")
        spawn(name, [JAVA, "-Xmx256m", "-jar", JAR, "serve", "--host", "127.0.0.1", "--port", str(port),
                     "--auth", "none", "--warmup", "0", "--durability", "memory", "--peers", peers,
                     "--advertise", "127.0.0.1:%d" % port, "--cluster-secret", secret], env)
    for port in (pa, pb):
        wait_for("node %d ready (both members seen)" % port, 60,
                 lambda port=port: request(port, "GET", "/readyz")[0] == 200)
    ok("two IQ-Stream nodes in a cluster, tracing to the collector")

    run = "otel-e2e-%d" % time.monotonic_ns()
    events = [{"type": "RUN_STARTED", "threadId": "t", "runId": run}]
    events += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "d%d" % i} for i in range(4)]
    events.append({"type": "RUN_FINISHED", "threadId": "t", "runId": run})
    tp = {"traceparent": TRACEPARENT, "baggage": "tenant=acme"}
    status, body = request(pa, "POST", "/v1/runs/%s/events" % run,
                           "".join(json.dumps(e) + "\n" for e in events),
                           dict(tp, **{"Content-Type": "application/x-ndjson"}))
    check(status == 200, "the agent's publish: %d %s" % (status, body))
    status, body = request(pa, "GET", "/v1/runs/%s/events?live=false" % run, headers=tp)
    check(status == 200 and b"RUN_STARTED" in body, "the browser's first read on A: %d" % status)
    status, body = request(pb, "GET", "/v1/runs/%s/events" % run, headers=dict(tp, **{"Last-Event-ID": "2"}))
    check(status == 200 and b"RUN_FINISHED" in body and b"RUN_STARTED" not in body,
          "the browser's resume on B after event 2: %d" % status)
    stream = "/v1/stream/otel-e2e-%d" % time.monotonic_ns()
    for method, path, payload in (("PUT", stream, None), ("POST", stream, "hello"),
                                  ("GET", stream + "?offset=-1", None)):
        status, _ = request(pb, method, path, payload, dict(tp, **{"Content-Type": "text/plain"}))
        check(status in (200, 201, 204), "durable %s: %d" % (method, status))
    ok("an agent POST, a read on A, a resume on B, a durable stream created, appended to and read, in one trace")

    def named(spans, name, pred=lambda s: True):
        return [s for s in spans if s["name"] == name and pred(s)]

    def is_hop(s):
        return s["kind"] in (3, "SPAN_KIND_CLIENT")

    def complete():
        # every span the requests above make is in: the ones a relay made on the other node arrive in that
        # node's own export, so wait for each hop's child too
        spans = spans_of_trace(out)
        hops = [s for s in spans if is_hop(s)]
        stream_ops = {s["_attrs"].get("iqstream.stream.operation") for s in spans
                      if s["name"].endswith("/v1/stream/{path}") and not s["_attrs"].get("iqstream.from_peer")}
        ids = {s["spanId"] for s in spans}
        entries = [s for s in spans if s.get("parentSpanId") == AGENT_SPAN]
        # each of the six requests' entry spans, and every span's parent (a node exports its spans in batches:
        # a relay hop's span can arrive a batch before the entry span it is a child of)
        return (len(entries) >= 6 and all(s.get("parentSpanId") in ids for s in spans if s not in entries)
                and any("iqstream.publish.outcome" in s["_attrs"] for s in spans)
                and len([s for s in spans if "iqstream.read.outcome" in s["_attrs"]]) >= 2
                and stream_ops >= {"create", "append", "read"}
                and hops and all(any(c.get("parentSpanId") == h["spanId"] for c in spans) for h in hops))

    wait_for("the collector holding the trace's spans", 60, complete)
    spans = spans_of_trace(out)
    by_id = {s["spanId"]: s for s in spans}

    publishes = [s for s in named(spans, "POST /v1/runs/{runId}/events") if not s["_attrs"].get("iqstream.from_peer")]
    check(len(publishes) == 1, "one publish span on the node the agent reached: %d" % len(publishes))
    entry = publishes[0]
    check(entry["parentSpanId"] == AGENT_SPAN, "the publish continues the agent's span: %s" % entry["parentSpanId"])
    held = [s for s in named(spans, "POST /v1/runs/{runId}/events") if "iqstream.publish.outcome" in s["_attrs"]]
    check(len(held) == 1, "one span of the node that held the publish has its outcome: %d" % len(held))
    pub = held[0]["_attrs"]
    check(pub.get("iqstream.publish.outcome") == "ended", "publish outcome: %s" % pub)
    check(str(pub.get("iqstream.publish.events")) == "6", "publish events: %s" % pub)
    check(int(pub.get("iqstream.publish.bytes", 0)) > 0, "publish bytes: %s" % pub)
    check(pub.get("iqstream.run.id") == run, "publish run id: %s" % pub)
    ok("the publish: a child of the agent's span, 6 events, bytes, outcome ended")

    reads = [s for s in named(spans, "GET /v1/runs/{runId}/events") if "iqstream.read.outcome" in s["_attrs"]]
    check(len(reads) == 2, "two reads served (a first read and the resume): %d" % len(reads))
    resume = [s for s in reads if str(s["_attrs"].get("iqstream.read.resumed_after")) == "2"]
    check(len(resume) == 1, "one read resumed after event 2: %s" % [s["_attrs"] for s in reads])
    r = resume[0]["_attrs"]
    check(str(r.get("iqstream.read.events_replayed")) == "4" and str(r.get("iqstream.read.events")) == "4"
          and r.get("iqstream.read.outcome") == "ended", "the resume's attributes: %s" % r)
    for s in reads:
        links = [(l["traceId"].lower(), l["spanId"]) for l in s.get("links", [])]
        check((TRACE_ID, held[0]["spanId"]) in links, "a read links to the run's publish span: %s" % links)
    ok("both reads and the resume (after 2: 4 replayed, ended), each linked to the publish span")

    hops = [s for s in spans if is_hop(s)]
    check(len(hops) >= 1, "at least one relay hop (the run lives on one of the two nodes)")
    for hop in hops:
        check(hop["_attrs"].get("iqstream.relay.outcome") == "answered", "relay outcome: %s" % hop["_attrs"])
        children = [s for s in spans if s.get("parentSpanId") == hop["spanId"]]
        check(len(children) == 1 and children[0]["_attrs"].get("iqstream.from_peer") is True
              and children[0]["_service"] != hop["_service"],
              "the relayed request's span is the hop's child on the other node: %s" % children)
        parent = by_id.get(hop["parentSpanId"])
        check(parent is not None and parent["_service"] == hop["_service"],
              "the hop is a child of the entry node's span")
    ok("%d relay hop(s): a client span under the entry node's span, the peer's span under it" % len(hops))

    ops = {}
    for s in named(spans, "PUT /v1/stream/{path}") + named(spans, "POST /v1/stream/{path}") + \
            named(spans, "GET /v1/stream/{path}"):
        if not s["_attrs"].get("iqstream.from_peer"):
            ops[s["_attrs"].get("iqstream.stream.operation")] = s["_attrs"]
    check(set(ops) == {"create", "append", "read"}, "durable operations: %s" % ops)
    check(str(ops["append"].get("http.request.body.size")) == "5", "append size: %s" % ops["append"])
    check(ops["read"].get("iqstream.stream.read_mode") == "catch-up", "read mode: %s" % ops["read"])
    check(str(ops["create"].get("http.response.status_code")) == "201", "create status: %s" % ops["create"])
    ok("the Durable Streams create, append (5 bytes) and catch-up read")

    cleanup()
    print("%d passed, 0 failed" % PASSED)


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except BaseException as e:  # anything unexpected fails the suite with its reason
        fail("%s: %s" % (type(e).__name__, e))
