"""The ``[security]`` section of a transactions scenario: principals and ACLs (KIP-98 §9).

::

    [security]
    principals = ["User:alice"]            # client i runs as principals[i] (default User:p<i>)
    super_users = ["User:broker"]          # super.users (default: the brokers)
    adversary = "User:mallory"             # the adversary's principal
    adversary_transactional_id = "txn-mallory"   # the transactional.id in its Produce requests
    allow = ["User:alice Write TransactionalId:txn-0", "User:alice Write Topic:t0"]
    deny = ["User:mallory Write Topic:t1", "User:mallory All TransactionalId:txn- prefixed"]
    revocable = ["User:alice Write Topic:t0"]    # an operator may remove it mid-run ([faults] revoke_acl)
    expect_denied = ["User:mallory"]       # the oracle: principals that must be refused ...
    expect_granted = ["User:alice"]        # ... and principals that never may be
    expect_errors = ["TOPIC_AUTHORIZATION_FAILED"]   # ... and the errors refusals carry
    allow_everyone_if_no_acl_found = false       # the broker config: a resource no binding names is open

Resource names: transactional id ``t`` is ``txn-<t>``, data partition ``q``
is topic ``t<q>``, group ``g`` is ``g<g>``, the cluster is ``Cluster`` (or
``Cluster:kafka-cluster``); ``*`` is the wildcard name.  A fourth word
``prefixed`` (or ``literal``, the default) gives the pattern type.  Operations:
All, Read, Write, Describe, Delete, Alter, ClusterAction, IdempotentWrite.
``revocable`` entries must be ``allow`` entries; ``expect_denied`` and
``expect_granted`` name principals (of clients, or the adversary) and may not
overlap.
"""

from __future__ import annotations

from typing import Any

from keos.model.interface import ModelError
from keos.model.protocol.errors import Errors
from keos.model.security.authorizer import (
    ALLOW,
    CLUSTER_NAME,
    DENY,
    LITERAL,
    OPERATIONS,
    PATTERN_TYPES,
    RESOURCE_TYPES,
    AclBinding,
    ResourceType,
)
from keos.model.security.records import BROKER_PRINCIPAL, SecurityConfig

__all__ = ["parse_binding", "parse_security_section"]

AUTHORIZATION_ERRORS = (
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    Errors.TOPIC_AUTHORIZATION_FAILED,
    Errors.GROUP_AUTHORIZATION_FAILED,
    Errors.CLUSTER_AUTHORIZATION_FAILED,
)

_KEYS = (
    "adversary",
    "adversary_transactional_id",
    "allow",
    "allow_everyone_if_no_acl_found",
    "deny",
    "expect_denied",
    "expect_errors",
    "expect_granted",
    "principals",
    "revocable",
    "super_users",
)


def parse_binding(text: str, permission: str = ALLOW) -> AclBinding:
    """Parse ``"User:alice Write TransactionalId:txn-0 [literal|prefixed]"``; raises ``ValueError`` with the reason."""
    parts = text.split()
    if len(parts) not in (3, 4):
        raise ValueError(f"ACL {text!r} must read 'User:<name> <Operation> <ResourceType>:<name> [prefixed]'")
    principal, operation, resource = parts[:3]
    pattern = parts[3].capitalize() if len(parts) == 4 else LITERAL
    if not principal.startswith("User:") or len(principal) <= len("User:"):
        raise ValueError(f"ACL {text!r}: principal must be 'User:<name>', got {principal!r}")
    if operation not in OPERATIONS:
        raise ValueError(f"ACL {text!r}: unknown operation {operation!r} (known: {', '.join(OPERATIONS)})")
    if pattern not in PATTERN_TYPES:
        raise ValueError(f"ACL {text!r}: unknown pattern type {parts[3]!r} (known: literal, prefixed)")
    rtype, sep, name = resource.partition(":")
    if rtype not in RESOURCE_TYPES:
        raise ValueError(f"ACL {text!r}: unknown resource type {rtype!r} (known: {', '.join(RESOURCE_TYPES)})")
    if rtype == ResourceType.CLUSTER and not sep:
        name = CLUSTER_NAME
    elif not sep or not name:
        raise ValueError(f"ACL {text!r}: resource must be '{rtype}:<name>' (or '{rtype}:*')")
    return AclBinding(principal, operation, rtype, name, permission, pattern)


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
    revocable: list[AclBinding] = []
    for text in _strings(table, "revocable"):
        binding = parse_binding(text) if isinstance(text, str) and _parses(text) else None
        if binding is None or binding not in acls:
            raise ModelError(f"[security] revocable entries must be entries of allow, got {text!r}")
        revocable.append(binding)
    expected = {
        key: tuple(_principal(p, f"{key}[{i}]") for i, p in enumerate(_strings(table, key)))
        for key in ("expect_denied", "expect_granted")
    }
    both = sorted(set(expected["expect_denied"]) & set(expected["expect_granted"]))
    if both:
        raise ModelError(f"[security] {both[0]} is in both expect_denied and expect_granted")
    errors = tuple(_strings(table, "expect_errors"))
    for e in errors:
        if e not in AUTHORIZATION_ERRORS:
            raise ModelError(f"[security] expect_errors: {e!r} is no authorization error "
                             f"(known: {', '.join(AUTHORIZATION_ERRORS)})")
    open_default = table.get("allow_everyone_if_no_acl_found", False)
    if not isinstance(open_default, bool):
        raise ModelError(f"[security] allow_everyone_if_no_acl_found must be true or false, got {open_default!r}")
    return SecurityConfig(
        tuple(acls),
        principals,
        supers,
        adversary,
        tid,
        tuple(revocable),
        expected["expect_denied"],
        expected["expect_granted"],
        errors,
        open_default,
    )


def _parses(text: str) -> bool:
    try:
        parse_binding(text)
    except ValueError:
        return False
    return True
