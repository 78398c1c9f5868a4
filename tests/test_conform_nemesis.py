"""The random nemesis: a schedule that is a function of the seed, every kind injected, per-target support."""

from __future__ import annotations

import socket
import time

import pytest

from keos.checker.conform.nemesis import KINDS, ProxyNemesis, parse_kinds, schedule, supported_kinds
from keos.checker.conform.proxy import Proxy


def test_the_schedule_replays_from_the_seed_and_injects_every_kind() -> None:
    kinds = supported_kinds("kafka", 3)
    assert set(kinds) == set(KINDS)
    a = schedule(7, kinds, 180, 3)
    assert a == schedule(7, kinds, 180, 3)
    assert a != schedule(8, kinds, 180, 3)
    assert {e.kind for e in a} == set(kinds)
    assert all(e.at_s < 180 - 6 for e in a) and [e.at_s for e in a] == sorted(e.at_s for e in a)
    assert all(e.node in (1, 2, 3) for e in a if e.kind in ("kill", "pause", "partition"))
    assert schedule(7, (), 180, 3) == []


def test_each_target_declares_its_faults() -> None:
    assert "leader" not in supported_kinds("kafka", 1)
    assert set(supported_kinds("tansu")) == set(ProxyNemesis.supported)
    assert supported_kinds("librdkafka-mock") == ("client-pause",)
    assert parse_kinds("all", supported_kinds("tansu")) == supported_kinds("tansu")
    assert parse_kinds("none", supported_kinds("tansu")) == ()
    with pytest.raises(ValueError, match="does not support nemesis fault kill"):
        parse_kinds("kill,reset", supported_kinds("tansu"))
    with pytest.raises(ValueError, match="unknown nemesis fault bogus"):
        parse_kinds("bogus", supported_kinds("kafka", 3))


def test_a_proxy_partition_refuses_connections_until_it_is_lifted() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        with Proxy("127.0.0.1", server.getsockname()[1]) as proxy:
            proxy.block(30)
            with pytest.raises((ConnectionResetError, OSError)):
                # the reset may come as soon as the connection is accepted (under load, before connect returns)
                c = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
                try:
                    c.settimeout(2)
                    c.sendall(b"x")
                    time.sleep(0.2)
                    assert c.recv(1) == b""  # reset or closed: never forwarded
                    raise ConnectionResetError
                finally:
                    c.close()
            proxy.unblock()
            c2 = socket.create_connection(("127.0.0.1", proxy.port), timeout=2)
            c2.sendall(b"hello")
            peer, _ = server.accept()
            peer.settimeout(2)
            assert peer.recv(5) == b"hello"
            peer.close()
            c2.close()


def test_a_driver_refuses_a_fault_kind_it_does_not_declare() -> None:
    """The base driver injects only client pauses; asked for another kind it says which, never a silent no-op."""
    from keos.checker.conform.nemesis import NemesisDriver, UnsupportedFault

    driver = NemesisDriver()
    assert driver.supported == ("client-pause",)
    with pytest.raises(UnsupportedFault, match="does not inject 'kill'"):
        driver.kill(0, 1.0)
    with pytest.raises(UnsupportedFault, match="'partition'"):
        driver.partition(0, 1.0)
    assert driver.heal() == "nothing to heal"
