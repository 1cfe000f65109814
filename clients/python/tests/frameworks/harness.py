"""What the framework tests run on: app instances on uvicorn (real sockets), a round-robin TCP load balancer in
front of several, and a reader of an AG-UI endpoint's SSE answer over httpx that can drop mid-answer."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any, Optional

import httpx
import uvicorn


def run_input(thread_id: Optional[str] = None, run_id: Optional[str] = None) -> dict:
    """A RunAgentInput as an AG-UI client POSTs it."""
    return {"threadId": thread_id or f"thread-{uuid.uuid4().hex[:12]}", "runId": run_id or f"run-{uuid.uuid4().hex[:12]}",
            "state": {}, "messages": [{"id": f"u-{uuid.uuid4().hex[:8]}", "role": "user", "content": "tell me"}],
            "tools": [], "context": [], "forwardedProps": {}}


class AppInstance:
    """One app on uvicorn, on a port of its own (127.0.0.1)."""

    def __init__(self, app: Any):
        self.app = app
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    lifespan="off", timeout_graceful_shutdown=1))
        self.task: Optional[asyncio.Task] = None
        self.port = 0

    async def start(self) -> "AppInstance":
        self.task = asyncio.ensure_future(self.server.serve())
        for _ in range(600):
            if self.server.started:
                break
            if self.task.done():
                self.task.result()
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("uvicorn did not start")
        self.port = self.server.servers[0].sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        self.server.should_exit = True
        if self.task is not None:
            try:
                await asyncio.wait_for(self.task, 15)
            except asyncio.TimeoutError:
                self.server.force_exit = True
                self.task.cancel()


class RoundRobinLb:
    """A TCP load balancer: each new connection goes to the next backend. ``routed`` lists the backend port
    each connection went to, in order."""

    def __init__(self, ports: list[int]):
        self.ports = ports
        self.routed: list[int] = []
        self.server: Optional[asyncio.base_events.Server] = None
        self.port = 0
        self._pumps: set[asyncio.Task] = set()

    async def start(self) -> "RoundRobinLb":
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        port = self.ports[len(self.routed) % len(self.ports)]
        self.routed.append(port)
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (OSError, asyncio.CancelledError):
                pass
            finally:
                dst.close()

        tasks = [asyncio.ensure_future(pump(reader, up_writer)), asyncio.ensure_future(pump(up_reader, writer))]
        self._pumps.update(tasks)
        await asyncio.gather(*tasks, return_exceptions=True)
        self._pumps.difference_update(tasks)

    async def stop(self) -> None:
        for task in list(self._pumps):
            task.cancel()
        if self.server is not None:
            self.server.close()


class Answer:
    """An AG-UI endpoint's SSE answer as read: status, headers, and (id, event) pairs (id None without ``id:``)."""

    def __init__(self) -> None:
        self.status = 0
        self.headers: httpx.Headers = httpx.Headers()
        self.frames: list[tuple[Optional[int], dict]] = []
        self.ended = False  # the server ended the answer (not the reader)

    @property
    def events(self) -> list[dict]:
        return [e for _, e in self.frames]

    @property
    def ids(self) -> list[Optional[int]]:
        return [i for i, _ in self.frames]

    def count(self, event_type: str) -> int:
        return sum(1 for e in self.events if e.get("type") == event_type)


async def post_run(url: str, body: dict, *, last_event_id: Optional[int] = None,
                   until: Any = None, timeout_s: float = 60.0) -> Answer:
    """POSTs ``body`` to an AG-UI endpoint and reads its answer; with ``until`` (a predicate on the Answer) the
    reader drops the connection as soon as it holds — mid-answer, as a closed tab does."""
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = str(last_event_id)
    answer = Answer()

    async def read() -> None:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
            async with client.stream("POST", url, json=body, headers=headers) as response:
                answer.status = response.status_code
                answer.headers = response.headers
                if response.status_code != 200:
                    await response.aread()
                    answer.ended = True
                    return
                event_id: Optional[int] = None
                data: list[str] = []
                async for line in response.aiter_lines():
                    if line.startswith("id:"):
                        event_id = int(line[3:].strip())
                    elif line.startswith("data:"):
                        data.append(line[5:].lstrip(" "))
                    elif line == "" and data:
                        answer.frames.append((event_id, json.loads("\n".join(data))))
                        data = []
                        if until is not None and until(answer):
                            return  # the connection is closed on the way out: a dropped reader
                answer.ended = True

    await asyncio.wait_for(read(), timeout_s)
    return answer


def contents(answer_events: list[dict]) -> str:
    return "".join(e.get("delta", "") for e in answer_events if e.get("type") == "TEXT_MESSAGE_CONTENT")


def seen_contents(n: int):
    return lambda answer: answer.count("TEXT_MESSAGE_CONTENT") >= n
