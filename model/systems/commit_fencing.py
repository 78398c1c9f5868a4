"""Ghost observer: does the group coordinator fence exactly the stale offset commits?

An independent statement of the member and generation checks of ``ClassicGroup.validateOffsetCommit``
(Kafka 4.0, trunk ``1eb7644349cb``, ``group-coordinator/.../classic/ClassicGroup.java``), which
``OffsetMetadataManager.validateOffsetCommit`` and ``validateTransactionalOffsetCommit`` reach for a
classic group: a request whose member id the group does not hold is answered UNKNOWN_MEMBER_ID; a
known member's request of another generation ILLEGAL_GENERATION; a plain OffsetCommit of the current
generation while the group is CompletingRebalance REBALANCE_IN_PROGRESS (a TxnOffsetCommit is accepted
then, KIP-447); anything else passes these checks.  Static membership (FENCED_INSTANCE_ID) and requests
without group metadata (generation -1, no member id) are not modelled.

The systems call :func:`misfenced` with the coordinator's answer of its own validation and keep the
message it returns, if any, in their ghost state: ``commits_fenced_exactly`` (invariants) fails on it.
A stale generation's commit that is accepted overwrites the offsets of the partition's new owner; a
current member's commit that is fenced makes a healthy consumer lose its partitions.
"""

from __future__ import annotations

from keos.model.protocol.errors import Errors

__all__ = ["kafka_answer", "misfenced"]


def kafka_answer(known: bool, generation: int, group_generation: int, completing: bool, transactional: bool) -> str:
    """The answer of ``ClassicGroup.validateOffsetCommit``'s member checks, in Kafka's order."""
    if not known:
        return Errors.UNKNOWN_MEMBER_ID
    if generation != group_generation:
        return Errors.ILLEGAL_GENERATION
    if completing and not transactional:
        return Errors.REBALANCE_IN_PROGRESS
    return Errors.NONE


def misfenced(request: str, member: str, known: bool, generation: int, group_generation: int, completing: bool,
              transactional: bool, answer: str) -> str:
    """A note when ``answer`` is not Kafka's (empty when it is)."""
    expected = kafka_answer(known, generation, group_generation, completing, transactional)
    if answer != expected:  # unreachable: a wrong answer is a violation (commits_fenced_exactly)
        return (f"{request} of member {member or '-'} in generation {generation} (the group's: {group_generation}, "
                f"member {'known' if known else 'unknown'}) answered {answer}, Kafka answers {expected}")
    return ""
