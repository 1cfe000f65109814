"""Shared by deploy/test-chaos.py: IQ-Stream nodes with --peers on 127.0.0.1, the HS256 tokens they take, a
streaming publisher that keeps the events it sent and restores its run when the node holding it is lost
(the restore protocol of docs/DEPLOY.md, "A node's death"), and a reader that drops and resumes with
Last-Event-ID. Python standard library only; every wait is bounded.
"""
import http.client
import importlib.util
import json
import os
import random
import select
import signal
import subprocess
import threading
import time

# the cluster test's helpers (tokens, ports, bounded waits), shared rather than copied
_spec = importlib.util.spec_from_file_location("iqstream_test_cluster",
                                               os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                            "test-cluster.py"))
_tc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tc)
JWT_SECRET = _tc.JWT_SECRET
CLUSTER_SECRET = _tc.CLUSTER_SECRET
TOKEN = _tc.TOKEN
free_port = _tc.free_port
wait_until = _tc.wait_until
# how long a reader waits for a run that no node holds (yet, or again): under the chaos on a 2-CPU machine a
# publisher's first request or its restore can take over 10 s (lookups wait 3 s for a paused node, then retry)
AWAIT_RUN = "30s"


class Nodes:
    """Three (or n) nodes of one cluster, each started, paused, killed and restarted by index."""

    def __init__(self, java: str, jar: str, work: str, n: int, workers: int = 1, extra=()):
        self.java, self.jar, self.work, self.workers, self.extra = java, jar, work, workers, list(extra)
        self.ports = [free_port() for _ in range(n)]
        self.peers = ",".join(f"127.0.0.1:{p}" for p in self.ports)
        self.procs: dict = {}

    def start(self, i: int):
        log = open(os.path.join(self.work, f"node{i}.log"), "ab")
        self.procs[i] = subprocess.Popen(
            [self.java, "-Xmx256m", "--enable-native-access=ALL-UNNAMED", "-jar", self.jar, "serve",
             "--host", "127.0.0.1", "--port", str(self.ports[i]), "--workers", str(self.workers),
             "--jwt-secret", JWT_SECRET, "--peers", self.peers, "--advertise", f"127.0.0.1:{self.ports[i]}",
             "--cluster-secret", CLUSTER_SECRET, "--await-run", AWAIT_RUN, "--publisher-timeout", "20s",
             "--retention", "10m", *self.extra],
            stdout=log, stderr=subprocess.STDOUT)

    def start_all(self):
        for i in range(len(self.ports)):
            self.start(i)

    def ready(self, i: int) -> bool:
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.ports[i], timeout=5)
            c.request("GET", "/readyz")
            ok = c.getresponse().status == 200
            c.close()
            return ok
        except (OSError, http.client.HTTPException):
            return False

    def wait_ready(self, timeout_s: float = 120):
        wait_until(timeout_s, lambda: all(self.ready(i) for i in range(len(self.ports))), "every node ready")

    def metric(self, i: int, prefix: str):
        try:
            c = http.client.HTTPConnection("127.0.0.1", self.ports[i], timeout=5)
            c.request("GET", "/metrics")
            text = c.getresponse().read().decode()
            c.close()
        except (OSError, http.client.HTTPException):
            return None
        for line in text.splitlines():
            if line.startswith(prefix + " "):
                return float(line.split()[-1])
        return None

    def signal(self, i: int, sig):
        self.procs[i].send_signal(sig)

    def kill_and_restart(self, i: int):
        p = self.procs[i]
        p.send_signal(signal.SIGKILL)
        p.wait(20)
        self.start(i)

    def log(self, i: int) -> str:
        with open(os.path.join(self.work, f"node{i}.log"), errors="replace") as f:
            return f.read()

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                try:
                    p.send_signal(signal.SIGCONT)
                except OSError:
                    pass
                p.kill()
        for p in self.procs.values():
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                pass


def events_for(run_id: str, deltas: int) -> list:
    ev = [{"type": "RUN_STARTED", "threadId": f"t-{run_id}", "runId": run_id},
          {"type": "TEXT_MESSAGE_START", "messageId": f"m-{run_id}", "role": "assistant"}]
    ev += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m-{run_id}", "delta": f"{run_id} part {k} "}
           for k in range(deltas)]
    ev += [{"type": "TEXT_MESSAGE_END", "messageId": f"m-{run_id}"},
           {"type": "RUN_FINISHED", "threadId": f"t-{run_id}", "runId": run_id}]
    return ev


class Publisher(threading.Thread):
    """Streams a run as chunked NDJSON to `ports()` (a node or the balancer), one event every `gap_s`, keeping
    every event it sent. After a break it asks where the run stands (a continuation POST with Last-Event-ID: the
    server answers event_id_mismatch with its lastEventId, or run_lost) and resends from there; on run_lost it
    restores the run: X-IQStream-Restore: N, Last-Event-ID: 0, a body of its events 1..N, then the rest."""

    def __init__(self, ports, run_id: str, events: list, gap_s: float, deadline_s: float = 240):
        super().__init__(daemon=True)
        self.ports, self.run_id, self.events, self.gap_s = ports, run_id, events, gap_s
        self.deadline = time.time() + deadline_s
        self.outcome = None
        self.restores = 0
        self.retries = 0
        self.finished_at = None

    def run(self):
        try:
            self.outcome = self.publish()
        except Exception as e:  # noqa: BLE001 - reported as the outcome
            self.outcome = f"error: {e!r}"
        self.finished_at = time.time()

    def publish(self):
        # claim: the Last-Event-ID of the next request (what the server should hold); sent: events ever sent
        claim, sent, restore = 0, 0, 0
        while time.time() < self.deadline:
            port = random.choice(self.ports())
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                c.putrequest("POST", f"/v1/runs/{self.run_id}/events")
                c.putheader("Authorization", f"Bearer {TOKEN}")
                c.putheader("Content-Type", "application/x-ndjson")
                c.putheader("Transfer-Encoding", "chunked")
                c.putheader("Last-Event-ID", "0" if restore else str(claim))
                if restore:
                    c.putheader("X-IQStream-Restore", str(restore))
                c.endheaders()
                early = False
                start = 0 if restore else claim
                for k in range(start, len(self.events)):
                    if select.select([c.sock], [], [], 0)[0]:
                        early = True
                        break
                    line = (json.dumps(self.events[k]) + "\n").encode()
                    c.send(b"%x\r\n" % len(line) + line + b"\r\n")
                    if k + 1 > sent:
                        sent = k + 1
                        time.sleep(self.gap_s)   # new events at the producer's pace; resent ones at once
                if not early:
                    c.send(b"0\r\n\r\n")
                r = c.getresponse()
                body = r.read().decode(errors="replace")
                js = json.loads(body) if body.startswith("{") else {}
                if r.status == 200:
                    if js.get("lastEventId") != len(self.events) or not js.get("ended"):
                        return f"reply {body}"
                    return "ok"
                self.retries += 1
                restore = 0
                code = js.get("error")
                if r.status == 409 and code == "event_id_mismatch":
                    claim = js["lastEventId"]
                    if claim > sent:
                        return f"server holds more than was sent: {body}"
                    continue
                if r.status == 409 and code == "run_ended" and self.holds_all(port):
                    return "ok"   # the answer to the request that ended it was lost on the way (a node killed)
                if r.status == 409 and code == "run_lost":
                    restore, claim = sent, 0
                    self.restores += 1
                    continue
                if not (r.status in (502, 503, 504) or r.status == 409 and code == "publisher_active"):
                    return f"{r.status} {body}"
                time.sleep(0.3)
            except (OSError, http.client.HTTPException):
                self.retries += 1
                restore = 0
                time.sleep(0.2)
            finally:
                c.close()
            # a broken or refused request: ask with what was sent; the server corrects the claim
            claim = sent
        return "publisher deadline passed"

    def holds_all(self, port: int) -> bool:
        """Whether the run holds every event of this publisher and has ended (asked through `port`)."""
        for _ in range(20):
            try:
                st, js = run_status(port, self.run_id)
            except (OSError, http.client.HTTPException):
                time.sleep(0.5)
                continue
            if st == 200:
                return js["ended"] and js["events"] == len(self.events)
            time.sleep(0.5)
        return False


def run_status(port: int, run_id: str):
    """GET /v1/runs/{id} through `port`: (status, body or None)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        c.request("GET", f"/v1/runs/{run_id}", headers={"Authorization": f"Bearer {TOKEN}"})
        r = c.getresponse()
        body = r.read()
        return r.status, (json.loads(body) if r.status == 200 else None)
    finally:
        c.close()


class Reader(threading.Thread):
    """Reads a run over SSE from `ports()`, dropping the connection after random counts of events and resuming
    through another node with Last-Event-ID; records every id in order."""

    def __init__(self, ports, run_id: str, total: int, drops: int, deadline_s: float = 240, first_port=None):
        super().__init__(daemon=True)
        self.ports, self.run_id, self.total, self.drops = ports, run_id, total, drops
        self.first_port = first_port
        self.deadline = time.time() + deadline_s
        self.ids: list = []
        self.outcome = None
        self.resumes = 0
        self.statuses = []
        self.finished_at = None

    def run(self):
        try:
            self.outcome = self.read()
        except Exception as e:  # noqa: BLE001
            self.outcome = f"error: {e!r}"
        self.finished_at = time.time()

    def read(self):
        drops_left = self.drops
        while time.time() < self.deadline:
            last = self.ids[-1] if self.ids else 0
            if last >= self.total:
                return "ok"
            port = self.first_port if (self.first_port and not self.ids and not self.statuses) \
                else random.choice(self.ports())
            cut_after = random.randint(1, max(1, self.total // 3)) if drops_left > 0 else None
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            try:
                headers = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/event-stream"}
                if last:
                    headers["Last-Event-ID"] = str(last)
                    self.resumes += 1
                c.request("GET", f"/v1/runs/{self.run_id}/events", headers=headers)
                r = c.getresponse()
                self.statuses.append(r.status)
                if r.status == 204:
                    return "ok" if last >= self.total else f"204 at {last}"
                if r.status != 200:
                    body = r.read().decode(errors="replace")
                    if r.status in (502, 503, 504):
                        time.sleep(0.3)
                        continue
                    return f"{r.status} {body}"
                got = 0
                while True:
                    line = r.readline()  # decoded: a relayed stream's chunks split frames anywhere
                    if not line:
                        break
                    if line.startswith(b"id: "):
                        self.ids.append(int(line[4:].strip()))
                        got += 1
                        if self.ids[-1] >= self.total:
                            return "ok"
                        if cut_after is not None and got >= cut_after:
                            drops_left -= 1
                            break
            except (OSError, http.client.HTTPException, ValueError):
                time.sleep(0.2)
            finally:
                c.close()
        return "reader deadline passed"

    def check(self) -> tuple:
        """(lost, duplicated) ids against 1..total, in order."""
        seen = set()
        dup = 0
        ordered = True
        for k, i in enumerate(self.ids):
            if i in seen:
                dup += 1
            seen.add(i)
            if k and i <= self.ids[k - 1]:
                ordered = False
        lost = self.total - len(seen & set(range(1, self.total + 1)))
        return lost, dup + (0 if ordered else 1)
