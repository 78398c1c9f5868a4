"""Ghost observer: does the group coordinator fence exactly the stale members' requests?

An independent statement of the member and generation checks a classic group applies (Kafka 4.0, trunk
``1eb7644349cb``): ``ClassicGroup.validateOffsetCommit`` (``classic/ClassicGroup.java``), which
``OffsetMetadataManager.validateOffsetCommit`` and ``validateTransactionalOffsetCommit`` reach, and
``GroupMetadataManager.validateSyncGroup`` / ``validateClassicGroupHeartbeat`` with the state switch of
``classicGroupSyncToClassicGroup`` / ``classicGroupHeartbeatToClassicGroup``: a request whose member id the
group does not hold is answered UNKNOWN_MEMBER_ID (an Empty group holds none); a known member's request of
another generation ILLEGAL_GENERATION; then a plain OffsetCommit while the group is CompletingRebalance, and a
SyncGroup or Heartbeat while it is PreparingRebalance, REBALANCE_IN_PROGRESS (a TxnOffsetCommit passes during
CompletingRebalance, KIP-447; an OffsetCommit during PreparingRebalance too: ``onJoinPrepare``'s auto-commit);
anything else passes these checks.  A request carrying a static member's ``group.instance.id`` (KIP-345) is first
checked against the member id the group maps that instance to (``ClassicGroup.validateMember``): none is
UNKNOWN_MEMBER_ID, another one FENCED_INSTANCE_ID (the process was replaced).  A commit without group metadata
(generation -1: the admin client, a consumer using ``assign()``) is accepted by an Empty group whatever member id
and instance id it carries (KAFKA-14201); one carrying neither is refused UNKNOWN_MEMBER_ID by a group with
members (a TxnOffsetCommit is not: older versions of that protocol carry no member id).  A JoinGroup's member
check is the member id alone (a new member, with no id, is always admitted: ``group.max.size`` is not modelled).

The systems call :func:`misfenced` with the coordinator's answer of its own validation and keep the
message it returns, if any, in their ghost state: ``commits_fenced_exactly`` (invariants) fails on it.
A stale generation's commit that is accepted overwrites the offsets of the partition's new owner; a
current member's commit that is fenced makes a healthy consumer lose its partitions.
"""

from __future__ import annotations

from keos.model.protocol.errors import MEMBER_ID_REQUIRED, Errors

__all__ = ["kafka_answer", "misfenced"]


#: The group state in which each request is answered REBALANCE_IN_PROGRESS once its member checks passed.
REBALANCING: dict[str, str | None] = {
    "OffsetCommit": "CompletingRebalance",
    "TxnOffsetCommit": None,  # passes in every state (KIP-447)
    "SyncGroup": "PreparingRebalance",
    "Heartbeat": "PreparingRebalance",
    "JoinGroup": None,  # a known member may rejoin in every state (classicGroupJoinExistingMember)
}

#: Requests whose generation the coordinator checks: a JoinGroup carries none (only its member id is checked,
#: ``GroupMetadataManager.classicGroupJoinExistingMember``: UNKNOWN_MEMBER_ID for an id the group does not hold).
GENERATION_CHECKED: frozenset[str] = frozenset({"OffsetCommit", "TxnOffsetCommit", "SyncGroup", "Heartbeat"})


def kafka_answer(request: str, known: bool, generation: int, group_generation: int, state: str,
                 instance: str = "", holder: str | None = None, member: str = "",
                 member_id_required: bool = False) -> str:
    """The answer of the member checks of ``request`` in a group in ``state``, in Kafka's order; ``instance`` the
    request's ``group.instance.id`` ("" for none) and ``holder`` the member id the group maps it to.
    ``member_id_required``: the request is a new dynamic member's JoinGroup v4+ (no member id, no instance id),
    answered MEMBER_ID_REQUIRED with the id it is to rejoin with (KIP-394, ``classicGroupJoinNewDynamicMember``);
    a JoinGroup carrying a pending member's id counts as ``known`` (it is admitted)."""
    if member_id_required:
        return MEMBER_ID_REQUIRED
    commit = request in ("OffsetCommit", "TxnOffsetCommit")
    if commit and generation < 0 and state == "Empty":
        return Errors.NONE  # no group metadata: the admin client or an assign() consumer (KAFKA-14201)
    if commit and generation < 0 and not member and not instance:
        # neither member id nor instance id (a v0 request, the admin client): accepted only by an Empty group
        # (a TxnOffsetCommit always: the older versions of that protocol carry no member id)
        return Errors.NONE if request == "TxnOffsetCommit" else Errors.UNKNOWN_MEMBER_ID
    if instance and holder is None:
        return Errors.UNKNOWN_MEMBER_ID
    if instance and holder != member:
        return Errors.FENCED_INSTANCE_ID
    if not known:
        return Errors.UNKNOWN_MEMBER_ID
    if request in GENERATION_CHECKED and generation != group_generation:
        return Errors.ILLEGAL_GENERATION
    if state == REBALANCING[request]:
        return Errors.REBALANCE_IN_PROGRESS
    return Errors.NONE


def misfenced(request: str, member: str, known: bool, generation: int, group_generation: int, state: str,
              answer: str, instance: str = "", holder: str | None = None, member_id_required: bool = False) -> str:
    """A note when ``answer`` is not Kafka's (empty when it is)."""
    expected = kafka_answer(request, known, generation, group_generation, state, instance, holder, member,
                            member_id_required)
    if answer != expected:  # unreachable: a wrong answer is a violation (commits_fenced_exactly)
        static = f", instance {instance} held by {holder}" if instance else ""
        return (f"{request} of member {member or '-'} in generation {generation} (the group's: {group_generation}, "
                f"member {'known' if known else 'unknown'}{static}) answered {answer}, Kafka answers {expected}")
    return ""
