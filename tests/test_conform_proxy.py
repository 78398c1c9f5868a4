"""The loopback fault proxy: forwards bytes, resets connections, drops answers."""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from collections.abc import Iterator

import pytest

from keos.checker.conform.proxy import Proxy


class _Echo(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        # The proxy's injected connection resets reach the echo server too: that is the test, not an error.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            while data := self.request.recv(1024):
                self.request.sendall(data)


@pytest.fixture
def echo() -> Iterator[int]:
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Echo)
    server.daemon_threads = True
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _ask(s: socket.socket, data: bytes) -> bytes:
    s.sendall(data)
    return s.recv(1024)


def test_proxy_forwards_then_resets(echo: int) -> None:
    with Proxy("127.0.0.1", echo) as proxy:
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        assert _ask(s, b"ping") == b"ping"
        assert proxy.reset_all() == 1
        time.sleep(0.2)
        with pytest.raises((ConnectionError, OSError)):
            _ask(s, b"again") or (_ for _ in ()).throw(ConnectionResetError())
        s2 = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
        assert _ask(s2, b"new") == b"new"
        s.close()
        s2.close()


def test_proxy_drops_answers_then_resets_the_connection(echo: int) -> None:
    with Proxy("127.0.0.1", echo) as proxy:
        s = socket.create_connection(("127.0.0.1", proxy.port), timeout=0.3)
        proxy.drop_responses(0.5)
        s.sendall(b"lost")
        with pytest.raises(TimeoutError):
            s.recv(1024)
        time.sleep(0.5)
        s.settimeout(2)
        with pytest.raises((ConnectionError, OSError)):
            _ask(s, b"x") or (_ for _ in ()).throw(ConnectionResetError())
        assert proxy.resets == 1
        s.close()
