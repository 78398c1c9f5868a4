"""The ``[security]`` section of a transactions scenario: principals and ACLs (KIP-98 §9).

::

    [security]
    principals = ["User:alice"]            # client i runs as principals[i] (default User:p<i>)
    super_users = ["User:broker"]          # super.users (default: the brokers)
    adversary = "User:mallory"             # the adversary's principal
    adversary_transactional_id = "txn-mallory"   # the transactional.id in its Produce requests
    allow = ["User:alice Write TransactionalId:txn-0", "User:alice Write Topic:t0"]
    deny = ["User:mallory Write Topic:t1"]

Resource names: transactional id ``t`` is ``txn-<t>``, data partition ``q``
is topic ``t<q>``, group ``g`` is ``g<g>``, the cluster is ``Cluster`` (or
``Cluster:kafka-cluster``); ``*`` is the wildcard name.  Operations: All,
Read, Write, Describe, Delete, Alter, ClusterAction, IdempotentWrite.
"""

from __future__ import annotations

from typing import Any

from keos.model.interface import ModelError
from keos.model.security.authorizer import ALLOW, DENY, AclBinding, parse_binding
from keos.model.security.records import BROKER_PRINCIPAL, SecurityConfig

__all__ = ["parse_security_section"]

_KEYS = ("adversary", "adversary_transactional_id", "allow", "deny", "principals", "super_users")


def _principal(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.startswith("User:") or len(value) <= len("User:"):
        raise ModelError(f"[security] {what} must be a principal 'User:<name>', got {value!r}")
    return value


def _strings(table: dict[str, Any], key: str) -> list[Any]:
    value = table.get(key, [])
    if not isinstance(value, list):
        raise ModelError(f"[security] {key} must be a list, got {value!r}")
    return value


def parse_security_section(table: dict[str, Any], producers: int) -> SecurityConfig:
    """Validate ``[security]``; raises :class:`ModelError` with a one-line message."""
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ModelError(f"[security] unknown key {unknown[0]!r} (known: {', '.join(_KEYS)})")
    principals = tuple(_principal(p, f"principals[{i}]") for i, p in enumerate(_strings(table, "principals")))
    if len(principals) > producers:
        raise ModelError(f"[security] principals names {len(principals)} clients, the scenario has {producers}")
    supers = tuple(
        _principal(p, f"super_users[{i}]")
        for i, p in enumerate(_strings(table, "super_users") if "super_users" in table else [BROKER_PRINCIPAL])
    )
    adversary = _principal(table.get("adversary", "User:mallory"), "adversary")
    if adversary in supers:
        raise ModelError(f"[security] the adversary {adversary} cannot be a super user")
    tid = table.get("adversary_transactional_id", "txn-mallory")
    if not isinstance(tid, str) or not tid:
        raise ModelError(f"[security] adversary_transactional_id must be a non-empty string, got {tid!r}")
    acls: list[AclBinding] = []
    for key, permission in (("allow", ALLOW), ("deny", DENY)):
        for text in _strings(table, key):
            if not isinstance(text, str):
                raise ModelError(f"[security] {key} entries must be strings, got {text!r}")
            try:
                acls.append(parse_binding(text, permission))
            except ValueError as exc:
                raise ModelError(f"[security] {key}: {exc}") from None
    return SecurityConfig(tuple(acls), principals, supers, adversary, tid)
