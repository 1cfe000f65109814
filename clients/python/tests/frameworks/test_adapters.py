"""The in-process adapters, where the user owns the endpoint: ``AsyncClient.publish_events(run_id, events)`` over
each framework's own AG-UI event stream (``ag_ui.core`` event models): pydantic-ai's ``AGUIAdapter.run_stream()``,
ag-ui-langgraph's ``LangGraphAgent.run(input)``, agent-framework-ag-ui's ``AgentFrameworkAgent.run(input)``.
The run lands whole in IQ-Stream; a stop cancels the framework's stream and raises ``RunStoppedError``."""

from __future__ import annotations

import asyncio
import time
import unittest
from typing import Any, AsyncIterator, Callable

from iqstream import AsyncClient, PublishResult, RunStoppedError

from ..support import ServerProcess
from . import shared_server
from .agents import Script, agent_framework_agent, langgraph_agent, long_text, pydantic_ai_agent
from .harness import contents, run_input


def pydantic_ai_events(script: Script, body: dict) -> AsyncIterator[Any]:
    from ag_ui.core import RunAgentInput
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    adapter = AGUIAdapter(agent=pydantic_ai_agent(script), run_input=RunAgentInput.model_validate(body))
    return adapter.run_stream()


def langgraph_events(script: Script, body: dict) -> AsyncIterator[Any]:
    from ag_ui.core import RunAgentInput

    return langgraph_agent(script).run(RunAgentInput.model_validate(body))


def agent_framework_events(script: Script, body: dict) -> AsyncIterator[Any]:
    from agent_framework_ag_ui import AgentFrameworkAgent

    return AgentFrameworkAgent(agent=agent_framework_agent(script)).run(body)


class AdapterContract:
    events: Callable[[Script, dict], AsyncIterator[Any]]
    server: ServerProcess

    @classmethod
    def setUpClass(cls) -> None:  # noqa: N802
        cls.server = shared_server()

    async def asyncSetUp(self) -> None:  # noqa: N802
        asyncio.get_running_loop().slow_callback_duration = 10.0

    def iq(self) -> AsyncClient:
        return AsyncClient(self.server.base_url, self.server.token({"publish": ["*"], "subscribe": ["*"]}))

    async def test_publish_events_puts_the_frameworks_run_into_iqstream_whole(self) -> None:
        script = Script(long_text(20))
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"
        result = await self.iq().publish_events(run_id, type(self).events(script, body))
        self.assertIsInstance(result, PublishResult)
        self.assertTrue(result.ended)
        async with self.iq().subscribe(run_id) as stream:
            frames = [pair async for pair in stream.events()]
        self.assertEqual([i for i, _ in frames], list(range(1, result.last_event_id + 1)))
        events = [e for _, e in frames]
        self.assertEqual(events[0]["type"], "RUN_STARTED")
        self.assertEqual(events[0]["runId"], body["runId"], "camelCase, as EventEncoder writes it")
        self.assertEqual(events[-1]["type"], "RUN_FINISHED")
        self.assertEqual(contents(events), script.text)

    async def test_a_stop_cancels_the_frameworks_stream(self) -> None:
        script = Script(long_text(3000), gap_s=0.03)
        body = run_input()
        run_id = f"{body['threadId']}:{body['runId']}"
        publishing = asyncio.ensure_future(self.iq().publish_events(run_id, type(self).events(script, body)))
        deadline = time.monotonic() + 60
        while script.chunks_made < 5:
            self.assertLess(time.monotonic(), deadline, "the agent did not start")
            await asyncio.sleep(0.02)
        asked = time.monotonic()
        await self.iq().delete(run_id)
        with self.assertRaises(RunStoppedError):
            await asyncio.wait_for(publishing, 10)
        await asyncio.wait_for(script.cancelled.wait(), 8)
        self.assertLess(script.cancelled_at - asked, 8.0)
        self.assertFalse(script.completed.is_set())


class PydanticAiAdapterTest(AdapterContract, unittest.IsolatedAsyncioTestCase):
    events = staticmethod(pydantic_ai_events)


class LangGraphAdapterTest(AdapterContract, unittest.IsolatedAsyncioTestCase):
    events = staticmethod(langgraph_events)


class AgentFrameworkAdapterTest(AdapterContract, unittest.IsolatedAsyncioTestCase):
    events = staticmethod(agent_framework_events)
