"""One HTTP/1.1 exchange over asyncio streams, full duplex.

IQ-Stream answers a streamed publish early (``409 run_stopped`` after a ``DELETE``, a refusal at the first bad
event) while the request body is still being written; the publisher has to read that answer the moment it comes,
not after the body ends. ``HttpExchange`` writes the request head and chunked body with ``write_chunk`` and reads
the response on whichever task awaits ``response()``, at the same time. Standard library only.

Confined to one event loop; a write and a read may run on different tasks of it.
"""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, field
from typing import AsyncIterator, Mapping, Optional

MAX_HEAD_BYTES = 64 * 1024


class HttpProtocolError(OSError):
    """The peer's answer is not HTTP/1.1 this module can read (a broken or foreign peer)."""


@dataclass
class HttpResponse:
    status: int
    reason: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names; a repeated header: the last one

    def header(self, name: str) -> Optional[str]:
        return self.headers.get(name.lower())


@dataclass(frozen=True)
class Endpoint:
    scheme: str
    host: str
    port: int
    ssl_context: Optional[ssl.SSLContext] = None

    @property
    def host_header(self) -> str:
        default = 443 if self.scheme == "https" else 80
        return self.host if self.port == default else f"{self.host}:{self.port}"


class HttpExchange:
    """A request on its own connection (``Connection: close``): head, optional streamed body, the response."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self._chunked_body = False
        self._response: Optional[HttpResponse] = None
        self._remaining: Optional[int] = None  # body bytes left with Content-Length; None: chunked or to EOF
        self._chunked_reply = False
        self._body_done = False

    @classmethod
    async def start(cls, endpoint: Endpoint, method: str, path: str, headers: Mapping[str, str],
                    body: Optional[bytes] = None, connect_timeout_s: float = 30.0) -> "HttpExchange":
        """Connects and writes the request head; with ``body`` None and a method that carries one, the body is
        streamed in chunks (``write_chunk`` / ``end_body``)."""
        context = None
        if endpoint.scheme == "https":
            context = endpoint.ssl_context or ssl.create_default_context()
        reader, writer = await asyncio.wait_for(
            asyncio.open_connection(endpoint.host, endpoint.port, ssl=context, limit=MAX_HEAD_BYTES),
            connect_timeout_s)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            try:
                import socket
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            except OSError:
                pass
        exchange = cls(reader, writer)
        lines = [f"{method} {path} HTTP/1.1", f"Host: {endpoint.host_header}", "Connection: close"]
        streamed = body is None and method in ("POST", "PUT", "PATCH")
        for name, value in headers.items():
            lines.append(f"{name}: {value}")
        if streamed:
            lines.append("Transfer-Encoding: chunked")
            exchange._chunked_body = True
        elif body is not None:
            lines.append(f"Content-Length: {len(body)}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (body or b""))
        await writer.drain()
        return exchange

    # ---- the request body ----

    def write_chunk(self, data: bytes) -> None:
        """Buffers one body chunk (call ``drain`` to wait for the socket). Raises OSError once the connection broke."""
        if self._writer.is_closing():
            raise ConnectionResetError("the connection is closed")
        self._writer.write(b"%x\r\n" % len(data) + data + b"\r\n")

    async def drain(self) -> None:
        await self._writer.drain()

    async def end_body(self) -> None:
        if self._chunked_body:
            self._chunked_body = False
            if not self._writer.is_closing():
                self._writer.write(b"0\r\n\r\n")
                await self._writer.drain()

    # ---- the response ----

    async def response(self) -> HttpResponse:
        """The response's status and headers (awaited once; concurrent with writing the body)."""
        if self._response is not None:
            return self._response
        try:
            head = await self._reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            raise ConnectionResetError("the connection closed before an HTTP answer") from e
        except asyncio.LimitOverrunError as e:
            raise HttpProtocolError("an HTTP answer head over 64 KiB") from e
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
            raise HttpProtocolError(f"not an HTTP/1.1 status line: {lines[0][:80]!r}")
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        status = int(parts[1])
        self._response = HttpResponse(status, parts[2] if len(parts) > 2 else "", headers)
        if "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked_reply = True
        elif "content-length" in headers:
            self._remaining = int(headers["content-length"])
        elif status in (204, 304) or 100 <= status < 200:
            self._remaining = 0
        return self._response

    async def body_chunks(self, read_size: int = 65536) -> AsyncIterator[bytes]:
        """The response body as it arrives (transfer coding removed)."""
        await self.response()
        if self._chunked_reply:
            while True:
                size_line = await self._reader.readline()
                if not size_line:
                    raise ConnectionResetError("the connection closed inside a chunked answer")
                size_text = size_line.split(b";", 1)[0].strip()
                try:
                    size = int(size_text, 16)
                except ValueError as e:
                    raise HttpProtocolError(f"bad chunk size line {size_line[:40]!r}") from e
                if size == 0:
                    while (await self._reader.readline()) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    break
                left = size
                while left > 0:
                    data = await self._reader.read(min(left, read_size))
                    if not data:
                        raise ConnectionResetError("the connection closed inside a chunk")
                    left -= len(data)
                    yield data
                await self._reader.readexactly(2)
        elif self._remaining is not None:
            while self._remaining > 0:
                data = await self._reader.read(min(self._remaining, read_size))
                if not data:
                    raise ConnectionResetError("the connection closed before the answer's end")
                self._remaining -= len(data)
                yield data
        else:
            while True:
                data = await self._reader.read(read_size)
                if not data:
                    break
                yield data
        self._body_done = True

    async def read_body(self, limit_bytes: int = 1 << 20) -> bytes:
        parts: list[bytes] = []
        total = 0
        async for data in self.body_chunks():
            total += len(data)
            if total > limit_bytes:
                raise HttpProtocolError(f"an answer body over {limit_bytes} bytes")
            parts.append(data)
        return b"".join(parts)

    def close(self) -> None:
        self._writer.close()

    async def aclose(self) -> None:
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except OSError:
            pass
