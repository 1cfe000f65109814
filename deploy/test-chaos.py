#!/usr/bin/env python3
"""The chaos test (issue 34): real IQ-Stream nodes with --peers on 127.0.0.1, checked event by event while
nodes are paused, starved and killed. Two parts:

  probe   the issue's probe, --tries times (20): three nodes (--workers 1) and two busy loops (`yes`) beside
          them on this machine; every node ready; a run published through node A and read live through node B
          (the reader starts with the publisher), then resumed through node C from the middle. Holds when every
          try delivers the whole run, in order, to both readers. Also prints the slowest /readyz answer seen
          under the busy loops (the figure behind the membership's suspicion window).
  chaos   three nodes behind deploy/haproxy/haproxy.cfg; K (50) runs in flight, started as others end, each
          published through the balancer by a publisher that keeps its events and restores the run when its
          node dies, each read by two readers that drop and resume through random nodes; for --seconds (120),
          every 10 s one of: SIGSTOP a node for 3 s then SIGCONT; SIGKILL a node and restart it; two busy loops
          for 5 s. Holds when every run whose publisher finished was delivered to every reader exactly once, in
          order, complete. Prints runs, events, restores, view changes, lost, duplicated.

  python3 deploy/test-chaos.py --jar JAR --java JAVA [--only probe|chaos] [--tries 20] [--seconds 120] [--keep]

Bounded: every wait has a timeout; every process started here (nodes, busy loops, HAProxy) is stopped at the end.
"""
import argparse
import http.client
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import chaos_cluster as cc  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class BusyLoops:
    """`yes > /dev/null`, n of them, started and stopped by this test only (by their own Popen)."""

    def __init__(self, n: int):
        self.procs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(n)]

    def stop(self):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait(10)


def readyz_latency(nodes: cc.Nodes, stop: threading.Event, out: list):
    while not stop.is_set():
        for i in range(len(nodes.ports)):
            t0 = time.time()
            ok = nodes.ready(i)
            out.append((time.time() - t0, ok))
        time.sleep(0.2)


def probe(java: str, jar: str, work: str, tries: int) -> bool:
    nodes = cc.Nodes(java, jar, work, 3, workers=1)
    busy = None
    stop = threading.Event()
    latencies: list = []
    failures = []
    try:
        nodes.start_all()
        busy = BusyLoops(2)
        nodes.wait_ready(180)
        watcher = threading.Thread(target=readyz_latency, args=(nodes, stop, latencies), daemon=True)
        watcher.start()
        a, b, c = nodes.ports
        for t in range(tries):
            run_id = f"probe-{os.getpid()}-{t}"
            events = cc.events_for(run_id, 20)
            pub = cc.Publisher(lambda: [a], run_id, events, 0.02, deadline_s=60)
            live = cc.Reader(lambda: [b], run_id, len(events), 0, deadline_s=60)
            live.start()
            pub.start()
            pub.join(70)
            live.join(70)
            resume = cc.Reader(lambda: [c], run_id, len(events), 0, deadline_s=30)
            resume.ids = list(range(1, len(events) // 2 + 1))
            resume.start()
            resume.join(40)
            resumed = resume.ids[len(events) // 2:]
            ok = (pub.outcome == "ok" and live.outcome == "ok" and live.check() == (0, 0)
                  and resume.outcome == "ok" and resumed == list(range(len(events) // 2 + 1, len(events) + 1)))
            print(f"probe try {t + 1}/{tries}: {'ok' if ok else 'FAIL'} (publisher via A: {pub.outcome}, "
                  f"{pub.retries} retries; live reader via B: {live.outcome}, {len(live.ids)} events, "
                  f"statuses {live.statuses}; resume via C: {resume.outcome}, {len(resumed)} events, statuses {resume.statuses})", flush=True)
            if not ok:
                failures.append(t)
        stop.set()
        slow = max((d for d, _ in latencies), default=0)
        not_ready = sum(1 for _, ok in latencies if not ok)
        changes = [nodes.metric(i, "iqstream_cluster_view_changes_total") for i in range(3)]
        print(f"probe: {tries - len(failures)} of {tries} passed; /readyz under two busy loops: slowest "
              f"{slow * 1000:.0f} ms of {len(latencies)} asked, {not_ready} not 200; view changes per node "
              f"after start {changes}", flush=True)
        return not failures
    finally:
        stop.set()
        if busy:
            busy.stop()
        nodes.stop_all()


def haproxy_config(work: str, lb_port: int, nodes: cc.Nodes) -> str:
    """deploy/haproxy/haproxy.cfg as shipped, given this test's addresses through its environment variables."""
    env = os.environ.copy()
    env["IQS_LB_BIND"] = f"127.0.0.1:{lb_port}"
    for k, p in enumerate(nodes.ports, start=1):
        env[f"IQS_NODE{k}"] = f"127.0.0.1:{p}"
    env["IQS_HAPROXY_SOCK"] = os.path.join(work, "haproxy.sock")
    return env


def chaos(java: str, jar: str, work: str, seconds: float, k_runs: int) -> bool:
    nodes = cc.Nodes(java, jar, work, 3, workers=1)
    lb = None
    busy = None
    try:
        nodes.start_all()
        nodes.wait_ready(180)
        lb_port = cc.free_port()
        lb = subprocess.Popen(["haproxy", "-f", os.path.join(HERE, "haproxy", "haproxy.cfg")],
                              env=haproxy_config(work, lb_port, nodes),
                              stdout=open(os.path.join(work, "haproxy.log"), "ab"), stderr=subprocess.STDOUT)
        cc.wait_until(30, lambda: port_open(lb_port), "HAProxy listening")
        changes_before = sum(nodes.metric(i, "iqstream_cluster_view_changes_total") or 0 for i in range(3))
        runs = []          # (publisher, [readers])
        kills = []         # when a node was SIGKILLed
        seq = [0]
        end_at = time.time() + seconds
        node_ports = lambda: list(nodes.ports)  # noqa: E731
        lb_ports = lambda: [lb_port]  # noqa: E731

        def start_run():
            seq[0] += 1
            run_id = f"chaos-{os.getpid()}-{seq[0]}"
            events = cc.events_for(run_id, random.randint(20, 60))
            pub = cc.Publisher(lb_ports, run_id, events, random.uniform(0.03, 0.12), deadline_s=seconds + 120)
            readers = [cc.Reader(node_ports, run_id, len(events), random.randint(1, 3), deadline_s=seconds + 150)
                       for _ in range(2)]
            pub.start()
            for r in readers:
                r.start()
            runs.append((pub, readers))

        for _ in range(k_runs):
            start_run()
        actions = ["pause", "kill", "starve"]
        next_action = time.time() + 10
        count = 0
        while time.time() < end_at:
            in_flight = sum(1 for p, _ in runs if p.is_alive())
            for _ in range(k_runs - in_flight):
                start_run()
            if time.time() >= next_action:
                action = actions[count % 3]
                victim = random.randrange(3)
                count += 1
                print(f"chaos t+{seconds - (end_at - time.time()):.0f}s: {action} node {victim}"
                      if action != "starve" else f"chaos t+{seconds - (end_at - time.time()):.0f}s: starve",
                      flush=True)
                if action == "pause":
                    nodes.signal(victim, signal.SIGSTOP)
                    time.sleep(3)
                    nodes.signal(victim, signal.SIGCONT)
                elif action == "kill":
                    kills.append(time.time())
                    nodes.kill_and_restart(victim)
                else:
                    busy = BusyLoops(2)
                    time.sleep(5)
                    busy.stop()
                    busy = None
                next_action += 10
            time.sleep(0.2)
        for p, rs in runs:
            p.join(max(1, seconds + 150 - (time.time() - (end_at - seconds))))
            for r in rs:
                r.join(120)
        events = lost = dup = restores = after_end = 0
        gone_cache = {}

        def gone(run_id):
            """True when no node holds the run any more (it died with its node), asked once per run."""
            if run_id not in gone_cache:
                try:
                    gone_cache[run_id] = cc.run_status(nodes.ports[0], run_id)[0] == 404
                except (OSError, http.client.HTTPException):
                    gone_cache[run_id] = False
            return gone_cache[run_id]

        problems = []
        lost_runs = 0
        for p, rs in runs:
            restores += p.restores
            if p.outcome != "ok":
                problems.append(f"{p.run_id}: publisher {p.outcome}")
                continue
            for r in rs:
                l, d = r.check()
                events += len(r.ids)
                if (r.outcome.startswith("404") and not d and p.finished_at
                        and any(p.finished_at <= k <= r.finished_at for k in kills)
                        and gone(p.run_id)):
                    # the run had ended and its publisher let go of its events (item 2 keeps them until the run
                    # ends); then a node was killed: an ended run dies with its node, as before this work
                    after_end += 1
                    continue
                lost += l
                dup += d
                if r.outcome != "ok" or l or d:
                    problems.append(f"{p.run_id}: reader {r.outcome}, lost {l}, duplicated {d}, "
                                    f"statuses {r.statuses[-5:]}")
        changes = sum(nodes.metric(i, "iqstream_cluster_view_changes_total") or 0 for i in range(3)) - changes_before
        print(f"chaos: runs {len(runs)}, publishers finished {len(runs) - lost_runs - len([1 for p, _ in runs if p.outcome != 'ok'])}, "
              f"events delivered {events}, restores {restores}, view changes {int(changes)} (summed over "
              f"the nodes' views, restarted nodes counted from their start), actions {count}, "
              f"lost {lost}, duplicated {dup}; readers of runs that had ended (publisher done) when a node was killed "
              f"and that then got 404, not counted: {after_end}", flush=True)
        for line in problems[:20]:
            print("  " + line)
        return not problems and lost == 0 and dup == 0
    finally:
        if busy:
            busy.stop()
        if lb:
            lb.kill()
            lb.wait(10)
        nodes.stop_all()


def port_open(port: int) -> bool:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/healthz")
        c.getresponse().read()
        c.close()
        return True
    except (OSError, http.client.HTTPException):
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jar", required=True)
    ap.add_argument("--java", required=True)
    ap.add_argument("--only", choices=["probe", "chaos"])
    ap.add_argument("--tries", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="iqstream-chaos-")
    ok = True
    try:
        if args.only in (None, "probe"):
            ok &= probe(args.java, args.jar, work, args.tries)
        if args.only in (None, "chaos"):
            ok &= chaos(args.java, args.jar, work, args.seconds, args.runs)
    finally:
        if args.keep or not ok:
            print(f"logs kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
