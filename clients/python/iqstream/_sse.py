"""An incremental ``text/event-stream`` parser (the WHATWG rules AG-UI's SSE follows): bytes in, frames out.

Lines end in LF, CRLF or CR; a frame ends at a blank line; ``data:`` lines join with LF; comments (``:``) and
``event:``/``retry:`` are dropped; ``id:`` is kept. Confined to the task that feeds it.
"""

from __future__ import annotations

from typing import NamedTuple, Optional


class SseFrame(NamedTuple):
    id: Optional[str]
    data: str


class SseParser:
    """``feed(chunk)`` returns the frames the chunk completes; a frame without ``data:`` lines is not returned."""

    def __init__(self, max_frame_bytes: int = 16 * 1024 * 1024):
        self._buffer = b""
        self._data: list[str] = []
        self._id: Optional[str] = None
        self._frame_bytes = 0
        self.max_frame_bytes = max_frame_bytes

    def feed(self, chunk: bytes) -> list[SseFrame]:
        buffer = self._buffer + chunk if self._buffer else chunk
        if b"\r" in buffer:
            if buffer.endswith(b"\r"):  # a CRLF may be split across chunks: keep the CR for the next one
                buffer, held = buffer[:-1], b"\r"
            else:
                held = b""
            buffer = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        else:
            held = b""
        frames: list[SseFrame] = []
        start = 0
        while True:
            end = buffer.find(b"\n", start)
            if end < 0:
                break
            line = buffer[start:end]
            start = end + 1
            if not line:
                if self._data:
                    frames.append(SseFrame(self._id, "\n".join(self._data)))
                self._data = []
                self._frame_bytes = 0
                continue
            self._frame_bytes += len(line)
            if self._frame_bytes > self.max_frame_bytes:
                raise ValueError(f"an SSE frame over {self.max_frame_bytes} bytes")
            if line.startswith(b"data:"):
                value = line[5:]
                if value.startswith(b" "):
                    value = value[1:]
                self._data.append(value.decode("utf-8"))
            elif line.startswith(b"id:"):
                value = line[3:]
                self._id = (value[1:] if value.startswith(b" ") else value).decode("utf-8")
            # comments, event:, retry: and unknown fields are dropped
        rest = buffer[start:] + held
        if len(rest) > self.max_frame_bytes:
            raise ValueError(f"an SSE line over {self.max_frame_bytes} bytes")
        self._buffer = rest
        return frames
