"""The framework tests (they need the suite's venv: run-tests.sh). One IQ-Stream server serves all of them."""

from __future__ import annotations

import atexit
from typing import Optional

from ..support import ServerProcess

_server: Optional[ServerProcess] = None


def shared_server() -> ServerProcess:
    """The IQ-Stream server of every framework test, started on first use and stopped when the tests end."""
    global _server
    if _server is None:
        _server = ServerProcess()
        atexit.register(_server.stop)
    return _server
