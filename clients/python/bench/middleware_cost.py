"""What ResumableAGUI adds to the agent's process, per event: CPU time of the app process serving pydantic-ai's
own AG-UI endpoint, with and without the one middleware line, in the same run.

    clients/python/.venv-test/bin/python clients/python/bench/middleware_cost.py [--events 2000] [--runs 5]

Two app processes (uvicorn, one worker each) serve the same pydantic-ai agent (FunctionModel streaming
``--events`` text chunks as fast as it can): ``plain`` is the framework's SSE response, ``resumable`` the same app
with ``app.add_middleware(ResumableAGUI)`` publishing into a real IQ-Stream server and answering from it. A client
in this process POSTs ``--runs`` runs to each, reading every answer to its end, alternating the two; the CPU time of
each app process (utime + stime from /proc/PID/stat) over those runs, divided by the events the framework emitted,
is the cost per event. One warm-up run each is not counted. Needs the venv of clients/python/run-tests.sh.
"""


import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def serve(variant: str, events: int, iq_url: str, iq_token: str) -> None:
    import uvicorn
    from fastapi import FastAPI, Request
    from pydantic_ai import Agent
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    async def stream_function(messages: list, info: AgentInfo):
        for i in range(events):
            yield f" w{i}"

    agent = Agent(FunctionModel(stream_function=stream_function))
    app = FastAPI()

    @app.post("/agent")
    async def run_agent(request: Request):
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    if variant == "resumable":
        from iqstream.asgi import ResumableAGUI
        app.add_middleware(ResumableAGUI, url=iq_url, token=iq_token)

    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)

    async def main() -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started:
            await asyncio.sleep(0.02)
        print(f"PORT {server.servers[0].sockets[0].getsockname()[1]}", flush=True)
        await task
    asyncio.run(main())


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_run(url: str) -> int:
    import httpx
    body = {"threadId": f"bench-{uuid.uuid4().hex[:10]}", "runId": f"r-{uuid.uuid4().hex[:10]}", "state": {},
            "messages": [{"id": "u1", "role": "user", "content": "go"}], "tools": [], "context": [],
            "forwardedProps": {}}
    frames = 0
    async with httpx.AsyncClient(timeout=120) as client:
        async with client.stream("POST", url, json=body, headers={"Accept": "text/event-stream"}) as response:
            if response.status_code != 200:
                raise AssertionError(f"{url} answered {response.status_code}: {(await response.aread())[:300]!r}")
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    frames += 1
                    last = line
    assert '"RUN_FINISHED"' in last, last
    return frames


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=2000, help="text chunks the model streams per run")
    parser.add_argument("--runs", type=int, default=5, help="measured runs per variant")
    parser.add_argument("--serve", choices=["plain", "resumable"], help=argparse.SUPPRESS)
    parser.add_argument("--iq-url", default="", help=argparse.SUPPRESS)
    parser.add_argument("--iq-token", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.events, args.iq_url, args.iq_token)
        return

    from tests.support import ServerProcess
    iq = ServerProcess()
    apps: dict[str, subprocess.Popen] = {}
    urls: dict[str, str] = {}
    try:
        for variant in ("plain", "resumable"):
            proc = subprocess.Popen([sys.executable, __file__, "--serve", variant, "--events", str(args.events),
                                     "--iq-url", iq.base_url, "--iq-token",
                                     iq.token({"publish": ["*"], "subscribe": ["*"]})],
                                    stdout=subprocess.PIPE, text=True)
            line = proc.stdout.readline()
            assert line.startswith("PORT "), line
            apps[variant] = proc
            urls[variant] = f"http://127.0.0.1:{line.split()[1]}/agent"

        async def bench() -> dict:
            for variant in apps:  # warm-up
                await one_run(urls[variant])
            cpu = {v: 0.0 for v in apps}
            frames = {v: 0 for v in apps}
            wall = {v: 0.0 for v in apps}
            for _ in range(args.runs):
                for variant, proc in apps.items():
                    before, t0 = cpu_s(proc.pid), time.perf_counter()
                    frames[variant] += await one_run(urls[variant])
                    wall[variant] += time.perf_counter() - t0
                    cpu[variant] += cpu_s(proc.pid) - before
            return {"cpu": cpu, "frames": frames, "wall": wall}

        result = asyncio.run(bench())
    finally:
        for proc in apps.values():
            proc.terminate()
            proc.wait(10)
        iq.stop()
    plain_us = result["cpu"]["plain"] / result["frames"]["plain"] * 1e6
    print(f"{'variant':<10} {'events':>8} {'app CPU s':>10} {'CPU us/event':>13} {'wall s':>8}")
    for variant in apps:
        per = result["cpu"][variant] / result["frames"][variant] * 1e6
        print(f"{variant:<10} {result['frames'][variant]:>8} {result['cpu'][variant]:>10.2f} {per:>13.1f} "
              f"{result['wall'][variant]:>8.2f}")
    resumable_us = result["cpu"]["resumable"] / result["frames"]["resumable"] * 1e6
    print(json.dumps({"events_per_run": args.events, "runs": args.runs, "plain_us_per_event": round(plain_us, 1),
                      "resumable_us_per_event": round(resumable_us, 1),
                      "added_us_per_event": round(resumable_us - plain_us, 1),
                      "ratio": round(resumable_us / plain_us, 2)}))


if __name__ == "__main__":
    main()
