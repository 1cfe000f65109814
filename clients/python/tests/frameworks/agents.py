"""The three frameworks' own AG-UI endpoints, each on a FastAPI app, each driven by a scripted model that needs no
network: pydantic-ai's ``FunctionModel``, LangGraph's ``GenericFakeChatModel`` (via ag-ui-langgraph), Microsoft
Agent Framework with a ``BaseChatClient`` test client (via agent-framework-ag-ui).

A ``Script`` is what the model says (``text``, split into chunks on whitespace as ``GenericFakeChatModel`` splits
it) and when: it can hold after ``hold_at`` chunks until the test releases it, and records whether the model
was called, ran to its end or was cancelled. The app factories return the framework's app exactly as its docs
build it; the test adds the one middleware line.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any, AsyncIterator, Callable, Optional

from fastapi import FastAPI, Request


class Script:
    def __init__(self, text: str, hold_at: Optional[int] = None, gap_s: float = 0.0):
        self.text = text
        self.chunks = [c for c in re.split(r"(\s)", text) if c]
        self.hold_at = hold_at
        self.gap_s = gap_s
        self.release = asyncio.Event()
        self.calls = 0
        self.chunks_made = 0
        self.completed = asyncio.Event()
        self.cancelled = asyncio.Event()
        self.cancelled_at: Optional[float] = None

    async def pace(self, index: int) -> None:
        """Before chunk ``index``: hold at ``hold_at`` until released; then the gap."""
        if self.hold_at is not None and index == self.hold_at:
            await self.release.wait()
        if self.gap_s:
            await asyncio.sleep(self.gap_s)

    def cancelled_now(self) -> None:
        if not self.cancelled.is_set():
            self.cancelled_at = time.monotonic()
            self.cancelled.set()

    async def stream(self) -> AsyncIterator[str]:
        """The chunks, paced; marks completion or cancellation (a CancelledError at an await, or the framework
        closing the stream)."""
        self.calls += 1
        try:
            for i, chunk in enumerate(self.chunks):
                await self.pace(i)
                self.chunks_made += 1
                yield chunk
            self.completed.set()
        except (asyncio.CancelledError, GeneratorExit):
            self.cancelled_now()
            raise


def long_text(words: int = 600) -> str:
    return " ".join(f"w{i}" for i in range(words))


# ---- pydantic-ai: AGUIAdapter.dispatch_request in a FastAPI route (its docs' example) ----

def pydantic_ai_agent(script: Script) -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    async def stream_function(messages: list, info: AgentInfo) -> AsyncIterator[str]:
        async for chunk in script.stream():
            yield chunk

    return Agent(FunctionModel(stream_function=stream_function))


def pydantic_ai_app(script: Script) -> FastAPI:
    from pydantic_ai.ui.ag_ui import AGUIAdapter

    agent = pydantic_ai_agent(script)
    app = FastAPI()

    @app.post("/agent")
    async def run_agent(request: Request) -> Any:
        return await AGUIAdapter.dispatch_request(request, agent=agent)

    return app


# ---- LangGraph: a graph calling a fake chat model, served by ag-ui-langgraph's endpoint ----

def langgraph_agent(script: Script) -> Any:
    from ag_ui_langgraph import LangGraphAgent
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph

    class PacedFakeChatModel(GenericFakeChatModel):
        """GenericFakeChatModel's own chunks, each held back by the script's pace."""

        async def _astream(self, messages, stop=None, run_manager=None, **kwargs):  # type: ignore[override]
            script.calls += 1
            index = 0
            try:
                async for chunk in super()._astream(messages, stop=stop, run_manager=run_manager, **kwargs):
                    await script.pace(index)
                    index += 1
                    script.chunks_made += 1
                    yield chunk
                script.completed.set()
            except (asyncio.CancelledError, GeneratorExit):
                script.cancelled_now()
                raise

    model = PacedFakeChatModel(messages=iter([AIMessage(content=script.text)] * 100))

    async def call_model(state: MessagesState) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_edge(START, "model")
    graph.add_edge("model", END)
    return LangGraphAgent(name="agent", graph=graph.compile(checkpointer=MemorySaver()))


def langgraph_app(script: Script) -> FastAPI:
    from ag_ui_langgraph import add_langgraph_fastapi_endpoint

    app = FastAPI()
    add_langgraph_fastapi_endpoint(app, langgraph_agent(script), "/agent")
    return app


# ---- Microsoft Agent Framework: an Agent on a test chat client, served by agent-framework-ag-ui ----

def agent_framework_agent(script: Script) -> Any:
    from agent_framework import Agent, BaseChatClient, ChatResponse, ChatResponseUpdate, Content, ResponseStream

    class ScriptedChatClient(BaseChatClient):
        """A chat client answering from the script, streamed (Agent Framework's BaseChatClient contract)."""

        def _inner_get_response(self, *, messages, stream, options, **kwargs):  # type: ignore[override]
            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                async for chunk in script.stream():
                    yield ChatResponseUpdate(role="assistant", contents=[Content.from_text(chunk)])

            if stream:
                return ResponseStream(updates(), finalizer=ChatResponse.from_updates)

            async def whole() -> ChatResponse:
                return ChatResponse.from_updates([u async for u in updates()])
            return whole()

    return Agent(client=ScriptedChatClient(), name="agent", instructions="answer")


def agent_framework_app(script: Script) -> FastAPI:
    from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint

    app = FastAPI()
    add_agent_framework_fastapi_endpoint(app, agent_framework_agent(script), "/agent", single_user=True)
    return app


FRAMEWORKS: dict[str, Callable[[Script], FastAPI]] = {
    "pydantic-ai": pydantic_ai_app,
    "langgraph": langgraph_app,
    "agent-framework": agent_framework_app,
}
