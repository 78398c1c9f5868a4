"""A loopback TCP proxy keos puts between the clients and a broker, to inject network faults.

Brokers without a fault API (Tansu, a user's cluster) can still be made to look
like a flaky network: the proxy forwards bytes both ways and, on request,

* :meth:`Proxy.reset_all` closes every connection at once -- requests in flight
  are lost with their responses, so the client reconnects and retries them
  (a retry of a batch the broker already appended must be recognised by its
  sequence number, KIP-98 §5.2);
* :meth:`Proxy.block` partitions: every connection is reset and new ones are
  refused for a while (a node cut off from its clients and, for brokers that
  advertise the proxy, from the other brokers' replication fetches);
* :meth:`Proxy.drop_responses` discards what the broker answers for a while and
  then resets the connections that lost an answer: the broker did the work but
  the client never heard, the "lost acknowledgement" that makes a producer
  retry an appended batch.

The proxy listens on 127.0.0.1 only and does not parse the Kafka protocol; for a
client to stay behind it, the broker must advertise the proxy's address (keos
starts Tansu with ``--advertised-listener-url`` pointing here).
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
import time
from types import TracebackType

__all__ = ["Proxy"]


class _Link:
    def __init__(self, client: socket.socket, upstream: socket.socket) -> None:
        self.client = client
        self.upstream = upstream
        self.dropped = False
        self.closed = False
        self.kill = False  # set by other threads; only the proxy's own thread closes sockets

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for s in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")  # RST
            with contextlib.suppress(OSError):
                s.close()


class Proxy:
    """Forward 127.0.0.1:``port`` to ``upstream``; a context manager."""

    def __init__(self, upstream_host: str, upstream_port: int, listen_port: int = 0) -> None:
        self.upstream = (upstream_host, upstream_port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", listen_port))
        self._listener.listen(64)
        self._listener.setblocking(False)
        self.port: int = self._listener.getsockname()[1]
        self._sel = selectors.DefaultSelector()
        self._sel.register(self._listener, selectors.EVENT_READ, None)
        self._links: list[_Link] = []
        self._lock = threading.Lock()
        self._drop_until = 0.0
        self._block_until = 0.0
        self._stop = threading.Event()
        self.connections = 0
        self.resets = 0
        self._thread = threading.Thread(target=self._loop, name="keos-proxy", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        try:
            client, _ = self._listener.accept()
        except OSError:
            return
        if time.monotonic() < self._block_until:  # partitioned: refuse (reset) every new connection
            with contextlib.suppress(OSError):
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                client.close()
            return
        try:
            upstream = socket.create_connection(self.upstream, timeout=5)
        except OSError:
            client.close()
            return
        client.setblocking(False)
        upstream.setblocking(False)
        link = _Link(client, upstream)
        with self._lock:
            self._links.append(link)
            self.connections += 1
        self._sel.register(client, selectors.EVENT_READ, (link, True))
        self._sel.register(upstream, selectors.EVENT_READ, (link, False))

    def _forget(self, link: _Link) -> None:
        for s in (link.client, link.upstream):
            with contextlib.suppress(KeyError, ValueError, OSError):
                self._sel.unregister(s)
        link.close()
        with self._lock:
            if link in self._links:
                self._links.remove(link)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for key, _ in self._sel.select(timeout=0.05):
                if key.data is None:
                    self._accept()
                    continue
                link, from_client = key.data
                if link.closed or link.kill:
                    self._forget(link)
                    continue
                src = link.client if from_client else link.upstream
                dst = link.upstream if from_client else link.client
                try:
                    data = src.recv(65536)
                except OSError:
                    data = b""
                if not data:
                    self._forget(link)
                    continue
                if not from_client and time.monotonic() < self._drop_until:
                    link.dropped = True
                    continue
                try:
                    dst.setblocking(True)
                    dst.sendall(data)
                    dst.setblocking(False)
                except OSError:
                    self._forget(link)
            if self._drop_until and time.monotonic() >= self._drop_until:
                self._drop_until = 0.0
                with self._lock:
                    tainted = [link for link in self._links if link.dropped]
                for link in tainted:
                    self._forget(link)
                    self.resets += 1
            with self._lock:
                doomed = [link for link in self._links if link.closed or link.kill]
            for link in doomed:
                self._forget(link)

    def reset_all(self) -> int:
        """Close every open connection now; returns how many."""
        with self._lock:
            links = list(self._links)
        for link in links:
            link.kill = True  # the proxy's thread unregisters and closes it
        self.resets += len(links)
        return len(links)

    def drop_responses(self, seconds: float) -> None:
        """Discard the broker's answers for ``seconds``, then reset the connections that lost one."""
        self._drop_until = time.monotonic() + seconds

    def block(self, seconds: float) -> int:
        """A partition: reset every connection now and refuse new ones for ``seconds``; returns how many."""
        self._block_until = time.monotonic() + seconds
        return self.reset_all()

    def unblock(self) -> None:
        """Lift :meth:`block` early (a heal)."""
        self._block_until = 0.0

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)  # the loop has ended: closing from here is safe
        with self._lock:
            links = list(self._links)
        for link in links:
            link.close()
        self._sel.close()
        self._listener.close()

    def __enter__(self) -> Proxy:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
