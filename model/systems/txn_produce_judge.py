"""The judge of a partition leader's answers to transactional Produce requests, and of its LSO.

The reference of ``txn_produce_answer_per_kafka`` and ``lso_per_kafka`` (properties, not rules): written from
Kafka's source independently of :mod:`model.log.partition` and :mod:`model.log.producer_state`, and read from
the partition's *log* -- the data and control batches it holds -- rather than from the leader's cached producer
table (``ProducerStateManager`` is rebuilt from the log, ``truncateAndReload``); only whether the leader still
has an entry for the producer id is taken from the table (``producer.id.expiration.ms`` may have dropped it).

What a Kafka 4.0 leader answers a transactional batch (``UnifiedLog.analyzeAndValidateProducerState``,
``ProducerAppendInfo.append``/``checkProducerEpoch``/``checkSequence``/``appendEndTxnMarker``,
``ReplicaManager.appendRecordsWithTransactionVerification``, ``AddPartitionsToTxnManager``), in the order the
model documents for :func:`model.log.partition.handle_txn_produce`:

1. a duplicate of one of the last five batches of the producer's current epoch (``findDuplicateBatch``;
   the batches since a marker at a new epoch cleared the batch metadata) is answered NONE with its offset;
2. an epoch below the producer's current one (the epoch of its last data or control batch) is
   INVALID_PRODUCER_EPOCH;
3. the verification answer of the transaction coordinator, translated (``AddPartitionsToTxnManager``:
   PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH; ``ReplicaManager``: CONCURRENT_TRANSACTIONS and the coordinator-
   loading errors -> NOT_ENOUGH_REPLICAS, so that older clients retry); a batch that needed verification and
   was appended without it is itself a wrong answer (KIP-890 part 1: a batch that would *open* a transaction
   on the partition -- none of its producer id and epoch is open, ``hasOngoingTransaction(pid, epoch)``,
   KAFKA-14563 -- is verified first);
4. the sequence: a new epoch must start at 0; the same epoch must continue right after its newest batch, or
   start at 0 when the epoch has no batch yet (``RecordBatch.NO_SEQUENCE``); an unknown producer id is
   accepted at any sequence except on a partition that never held a record (KAFKA-15591).

``batch_failures_explained``'s reference (``Sender.completeBatch``/``canRetry``, Kafka 4.0): a produce response
fails its batch only when the producer gives up on it -- its retries are spent, or the error's exception is not
a ``RetriableException`` (:data:`KAFKA_RETRIABLE`, read from ``org.apache.kafka.common.errors``).  A
transactional producer's failed batch makes its transaction abortable, so a premature failure aborts a
transaction Kafka would have committed.

``lso_per_kafka``'s reference (``UnifiedLog.lastStableOffset``, ``ProducerStateManager.firstUnstableOffset``):
the smallest offset of a transactional data batch that no later control batch of its producer id closes, or
the high watermark if that is lower -- read from the log, not from the leader's ``currentTxnFirstOffset``.
"""

from __future__ import annotations

from keos.model.clients import producer as prod
from keos.model.log import partition as part
from keos.model.protocol.errors import Errors
from keos.model.protocol.messages import ProduceRequest, ProduceResponse, VerifyPartitionResponse

__all__ = [
    "KAFKA_RETRIABLE",
    "kafka_lso",
    "kafka_retries",
    "kafka_txn_produce_answer",
    "late_ack_misread",
    "lso_mismatch",
    "needless_batch_retries",
    "needless_verification",
    "premature_batch_failure",
    "resolution_misread",
    "restamps_misread",
    "unexpected_txn_answer",
    "unexpected_verified_answer",
]

#: ``ProducerStateEntry.NUM_BATCHES_TO_RETAIN`` (KAFKA-5494).
_RETAINED = 5  # no mutate: the reference of txn_produce_answer_per_kafka (a property), not a rule

#: How the coordinator's verification answer reaches the producer (``AddPartitionsToTxnManager`` rewrites
#: PRODUCER_FENCED; ``ReplicaManager.appendRecordsWithTransactionVerification`` rewrites the retriable
#: coordinator errors to NOT_ENOUGH_REPLICAS); any other error is passed on as it is, except
#: INVALID_PRODUCER_ID_MAPPING, which the model answers as INVALID_TXN_STATE ("partition not added").
_VERIFICATION_ANSWER = {
    Errors.PRODUCER_FENCED: Errors.INVALID_PRODUCER_EPOCH,
    Errors.CONCURRENT_TRANSACTIONS: Errors.NOT_ENOUGH_REPLICAS,
    Errors.COORDINATOR_NOT_AVAILABLE: Errors.NOT_ENOUGH_REPLICAS,
    Errors.COORDINATOR_LOAD_IN_PROGRESS: Errors.NOT_ENOUGH_REPLICAS,
    Errors.NOT_COORDINATOR: Errors.NOT_ENOUGH_REPLICAS,
    Errors.NETWORK_EXCEPTION: Errors.NOT_ENOUGH_REPLICAS,
    Errors.INVALID_PRODUCER_ID_MAPPING: Errors.INVALID_TXN_STATE,
}


#: Error codes whose exception extends ``RetriableException`` (directly, or through ``InvalidMetadataException``:
#: NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, NETWORK_EXCEPTION,
#: KAFKA_STORAGE_ERROR), read from ``clients/src/main/java/org/apache/kafka/common/errors/*Exception.java`` at
#: trunk ``1eb7644349cb`` (Kafka 4.0): the producer retries these while its retries last.  Not in it:
#: OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID (``ApiException``; the idempotent producer's own rules,
#: ``TransactionManager.canRetry``), TRANSACTION_ABORTABLE, INVALID_PRODUCER_EPOCH, the authorization errors.
KAFKA_RETRIABLE = frozenset(  # no mutate: the reference of batch_failures_explained (a property), not a rule
    {
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "UNKNOWN_TOPIC_OR_PARTITION",
        "NETWORK_EXCEPTION",
        "KAFKA_STORAGE_ERROR",
        "REQUEST_TIMED_OUT",
        "NOT_ENOUGH_REPLICAS",
        "NOT_ENOUGH_REPLICAS_AFTER_APPEND",
        "CORRUPT_MESSAGE",
        "COORDINATOR_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "CONCURRENT_TRANSACTIONS",
    }
)


def kafka_retries(  # no mutate: the reference of batch_failures_explained (a property), not a rule
    error: str, attempts: int, retries: int, unresolved: bool, next_in_line: bool
) -> bool:
    """Whether Kafka's transactional producer retries a batch answered ``error`` (``Sender.canRetry`` and
    ``TransactionManager.canRetry``, trunk @1eb7644349cb).

    Never once its retries are spent (``attempts`` counts the answered send).  OUT_OF_ORDER_SEQUENCE_NUMBER is
    retried only for a batch that is not the next one after the last acknowledged sequence, on a partition
    without an unresolved sequence (an earlier batch explains the refusal); any other error only if its
    exception is a ``RetriableException``.
    """
    if attempts > retries:
        return False
    if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
        return not unresolved and not next_in_line
    return error in KAFKA_RETRIABLE


def needless_batch_retries(  # no mutate: the judge of batch_failures_explained (a property), not a rule
    before: prod.Producer, after: prod.Producer, resp: ProduceResponse, retries: int, client: int
) -> tuple[str, ...]:
    """Ghost labels ``needless_retry:<client>:<error>:<records>`` for a batch a produce error left queued for a
    retry although Kafka's producer gives it up (:func:`kafka_retries`): a non-retriable error, an
    OUT_OF_ORDER_SEQUENCE_NUMBER for the next sequence or on an unresolved partition, spent retries."""
    if resp.error in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER) or resp.connection != before.connection:
        return ()
    out: list[str] = []
    for b in before.batches:
        if not prod.answers(b, resp):  # the request the response names (correlation id)
            continue
        entry = before.partitions[b.partition]
        next_in_line = b.base_sequence == entry.last_acked_sequence + 1
        kept = any(a.records == b.records for a in after.batches)
        needless = kept and not kafka_retries(resp.error, b.attempts, retries, entry.unresolved, next_in_line)
        if needless:  # no branch: the violation side, only a defect takes it
            out.append(f"needless_retry:{client}:{resp.error}:{','.join(map(str, b.records))}")
        break
    return tuple(out)


def premature_batch_failure(  # no mutate: the judge of batch_failures_explained (a property), not a rule
    before: prod.Producer, after: prod.Producer, resp: ProduceResponse, retries: int, client: int
) -> tuple[str, ...]:
    """Ghost labels ``premature_failure:<client>:<error>:<records>`` for a batch a produce response failed early.

    The batch answered (the in-flight batch of the response's partition, epoch and base sequence) failed if it left
    the producer's queue; prematurely if Kafka retries it (:func:`kafka_retries`: a retriable error, or an
    OUT_OF_ORDER_SEQUENCE_NUMBER an earlier batch explains, and the batch had not used its retries
    (``attempts <= retries``: the model counts the send being answered, ``Sender.canRetry`` compares
    ``attempts < retries`` before counting it)).  Batches the failure drops as a
    consequence (a transaction made abortable fails what it has not sent) were not answered: not judged here.
    """
    if resp.connection != before.connection:  # no branch: the caller drops a stale connection's answer first
        return ()
    left = {r for b in after.batches for r in b.records}
    return tuple(
        f"premature_failure:{client}:{resp.error}:{','.join(map(str, b.records))}"
        for b in before.batches
        if prod.answers(b, resp)
        and kafka_retries(
            resp.error,
            b.attempts,
            retries,
            before.partitions[b.partition].unresolved,
            b.base_sequence == before.partitions[b.partition].last_acked_sequence + 1,
        )
        and b.records and not any(r in left for r in b.records)
    )


def _current_batches(
    mine: list[tuple[int, part.LogEntry]], epoch: int
) -> list[tuple[int, part.LogEntry]]:  # no mutate: the reference of txn_produce_answer_per_kafka (a property)
    """The producer's data batches of its current epoch since the epoch took that value (newest last)."""
    out: list[tuple[int, part.LogEntry]] = []
    for offset, e in reversed(mine):
        if e.producer_epoch != epoch:
            break
        if not e.control:
            out.append((offset, e))
    return list(reversed(out))[-_RETAINED:]


def _open_at_epoch(mine: list[tuple[int, part.LogEntry]], epoch: int) -> bool:  # no mutate: a property's reference
    """``hasOngoingTransaction(pid, epoch)`` read from the log: a transactional data batch of that epoch after
    the producer id's last control batch."""
    for _offset, e in reversed(mine):
        if e.control:
            return False
        if e.transactional and e.producer_epoch == epoch:
            return True
    return False


def kafka_txn_produce_answer(  # no mutate: the reference of txn_produce_answer_per_kafka (a property), not a rule
    leader: part.PartitionLeader,
    request: ProduceRequest,
    verification: str,
    sequence_space: int,
    verification_enabled: bool = True,
) -> tuple[str, int, bool]:
    """``(error, duplicate offset or -1, verified)``: what Kafka's leader answers, and whether it verifies first.

    ``verification_enabled``: the broker verifies transactional batches at all
    (``transaction.partition.verification.enable``, Kafka 3.6+, or transaction version 2); before KIP-890 it
    appends a batch that opens a transaction without asking the coordinator."""
    pid = request.producer_id
    first = request.base_sequence
    last = (first + len(request.records) - 1) % sequence_space
    mine = [(offset, e) for offset, e in enumerate(leader.log) if e.producer_id == pid]
    known = leader.entry(pid) is not None and bool(mine)
    epoch = mine[-1][1].producer_epoch if known else -1
    current = _current_batches(mine, epoch) if known else []
    if known and request.producer_epoch == epoch:
        for offset, e in current:
            if e.base_sequence == first and (e.base_sequence + len(e.records) - 1) % sequence_space == last:
                return Errors.NONE, offset, False
    if known and request.producer_epoch < epoch:
        return Errors.INVALID_PRODUCER_EPOCH, -1, False
    verify = (
        verification_enabled and request.transactional and not (known and _open_at_epoch(mine, request.producer_epoch))
    )
    if verification != Errors.NONE:
        return _VERIFICATION_ANSWER.get(verification, verification), -1, verify
    if not known:
        return (Errors.OUT_OF_ORDER_SEQUENCE_NUMBER if not leader.log and first != 0 else Errors.NONE), -1, verify
    if request.producer_epoch > epoch or not current:
        return (Errors.NONE if first == 0 else Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, verify
    _, newest = current[-1]
    expected = (newest.base_sequence + len(newest.records)) % sequence_space
    return (Errors.NONE if first == expected else Errors.OUT_OF_ORDER_SEQUENCE_NUMBER), -1, verify


def unexpected_txn_answer(  # no mutate: the judge of txn_produce_answer_per_kafka (a property), not a rule
    before: part.PartitionLeader,
    after: part.PartitionLeader,
    request: ProduceRequest,
    verification: str,
    verified: bool,
    response_error: str,
    response_offset: int,
    sequence_space: int,
    verification_enabled: bool = True,
    inline: bool = False,
) -> str | None:
    """How the leader's handling of a transactional batch differs from :func:`kafka_txn_produce_answer`, or
    ``None``.  ``verified``: whether the leader asked the coordinator; the answer is the response's error and
    offset, and whether the log grew by exactly this batch at that offset.  ``inline``: the leader decided
    whether to verify on this same state (no round trip), so that decision is judged both ways -- a
    verification Kafka would not make (a broker that does not verify, a duplicate, a stale epoch, a batch that
    joins a transaction open at its epoch) is a wrong answer too, not only a missing one."""
    error, dup_offset, must_verify = kafka_txn_produce_answer(
        before, request, verification, sequence_space, verification_enabled
    )
    appended = len(after.log) - len(before.log)
    want = error if error != Errors.NONE else ("duplicate" if dup_offset >= 0 else "append")
    got = (
        response_error
        if response_error != Errors.NONE
        else ("duplicate" if appended == 0 else "append" if appended == 1 else "nothing")
    )
    recs = ",".join(prod.record_label(r) for r in request.records)
    head = f"partition {request.partition}: batch {recs} (pid {request.producer_id}, epoch {request.producer_epoch}"
    unverified = must_verify and not verified and error == Errors.NONE and dup_offset < 0
    if unverified:  # no branch: the violation side, only a defect takes it
        return f"{head}) opens a transaction on the partition but was appended without verification"
    if (inline or not verification_enabled) and verified and not must_verify:  # no branch: the violation side
        return f"{head}) was verified with the coordinator; Kafka's leader does not verify it"
    wrong = want != got or appended != (1 if want == "append" else 0)
    if wrong:  # no branch: the violation side, only a defect takes it
        return f"{head}, seq {request.base_sequence}) was answered {got} (log +{appended}); Kafka answers {want}"
    wanted_offset = dup_offset if want == "duplicate" else len(before.log) if want == "append" else -1
    if response_offset != wanted_offset:  # no branch: the violation side, only a defect takes it
        return f"{head}) was answered at offset {response_offset}; Kafka answers offset {wanted_offset}"
    return None


def needless_verification(  # no mutate: the judge of txn_produce_answer_per_kafka (a property), not a rule
    leader: part.PartitionLeader, request: ProduceRequest, sequence_space: int, verification_enabled: bool = True
) -> str | None:
    """Why a leader that holds ``request`` back for verification should not have, or ``None``: Kafka answers a
    duplicate of a retained batch, and a stale epoch, at once, and verifies only a batch that opens a transaction
    on the partition (:func:`kafka_txn_produce_answer`; ``hasOngoingTransaction(pid, epoch)``, PR #20534)."""
    error, dup, verify = kafka_txn_produce_answer(leader, request, Errors.NONE, sequence_space, verification_enabled)
    head = f"partition {request.partition}: batch of pid {request.producer_id}, epoch {request.producer_epoch}"
    if not verification_enabled:  # no branch: the violation side, only a defect takes it
        return f"{head} was held back for verification by a broker that does not verify (before KIP-890)"
    if dup >= 0:  # no branch: the violation side, only a defect takes it
        return f"{head} is a duplicate of offset {dup} but was held back for verification"
    if error == Errors.INVALID_PRODUCER_EPOCH:  # no branch: the violation side, only a defect takes it
        return f"{head} has a stale epoch but was held back for verification"
    if not verify:  # no branch: the violation side, only a defect takes it
        return f"{head} joins a transaction open on the partition but was held back for verification"
    return None


def _guard_lost(  # no mutate: the reference of txn_produce_answer_per_kafka (a property), not a rule
    before: part.PartitionLeader, answer: VerifyPartitionResponse, tv2: bool
) -> bool:
    """Whether the verification entry the request started with is gone, read from the log: a transactional batch
    (data or marker) of the producer id reached the log since (``UnifiedLog.updateProducers`` clears the entry) --
    except, under TV2, a marker at the batch's own epoch, which ended the previous transaction while this one was
    verifying (``isV2NextTransactionStarted``, Kafka trunk 2025).  (A leader change is judged before: the deposed
    leader answers NOT_LEADER_OR_FOLLOWER.)"""
    req = answer.produce
    return any(
        e.producer_id == req.producer_id
        and e.transactional
        and not (tv2 and e.control and e.producer_epoch == req.producer_epoch)
        for e in before.log[answer.log_end :]
    )


def unexpected_verified_answer(  # no mutate: the judge of txn_produce_answer_per_kafka (a property), not a rule
    before: part.PartitionLeader,
    after: part.PartitionLeader,
    answer: VerifyPartitionResponse,
    response_error: str,
    response_offset: int,
    sequence_space: int,
    tv2: bool = True,
) -> str | None:
    """How the leader's callback for a verification answer differs from Kafka's, or ``None``.

    ``ReplicaManager.handleProduceAppend`` (``postVerificationCallback``): a refusal is answered translated and
    nothing is appended; a verified batch is appended through ``UnifiedLog.analyzeAndValidateProducerState``,
    which answers a duplicate, then refuses INVALID_TXN_STATE when no transaction of the batch's producer id and
    epoch is open on the partition and the verification's entry is gone (:func:`_guard_lost`) -- a stale epoch
    first (PR #20534) -- then applies the rules of :func:`kafka_txn_produce_answer` (Kafka trunk ``1eb7644349cb``;
    KIP-890 part 1's ABA race)."""
    req = answer.produce
    appended = len(after.log) - len(before.log)
    recs = ",".join(prod.record_label(r) for r in req.records)
    head = f"partition {req.partition}: verified batch {recs} (pid {req.producer_id}, epoch {req.producer_epoch})"
    want = ""
    if answer.error != Errors.NONE:
        want = _VERIFICATION_ANSWER.get(answer.error, answer.error)
    elif before.leader_epoch != answer.leader_epoch:  # Partition.appendRecordsToLeader on a deposed leader
        want = Errors.NOT_LEADER_OR_FOLLOWER
    else:
        error, dup, _ = kafka_txn_produce_answer(before, req, Errors.NONE, sequence_space)
        mine = [(offset, e) for offset, e in enumerate(before.log) if e.producer_id == req.producer_id]
        open_txn = before.entry(req.producer_id) is not None and _open_at_epoch(mine, req.producer_epoch)
        stale = error == Errors.INVALID_PRODUCER_EPOCH  # checked before the guard since PR #20534 (2025)
        if dup < 0 and not stale and not open_txn and _guard_lost(before, answer, tv2):
            want = Errors.INVALID_TXN_STATE
    if want:
        if response_error != want or appended != 0 or response_offset != -1:  # no branch: the violation side
            return f"{head} was answered {response_error} (log +{appended}); Kafka answers {want}"
        return None
    return unexpected_txn_answer(
        before, after, req, Errors.NONE, True, response_error, response_offset, sequence_space
    )


def kafka_lso(leader: part.PartitionLeader) -> int:  # no mutate: the reference of lso_per_kafka (a property)
    """``UnifiedLog.lastStableOffset`` read from the log: the first offset of a transaction no control batch of
    its producer id has closed yet, capped at the high watermark."""
    first_open: dict[int, int] = {}
    for offset, e in enumerate(leader.log):
        if e.control:
            first_open.pop(e.producer_id, None)
        elif e.transactional and e.producer_id not in first_open:
            first_open[e.producer_id] = offset
    return min([*first_open.values(), leader.high_watermark])


def lso_mismatch(q: int, leader: part.PartitionLeader) -> str | None:  # no mutate: the judge of lso_per_kafka
    """Why the leader's last stable offset is not :func:`kafka_lso`, or ``None``."""
    got, want = part.last_stable_offset(leader), kafka_lso(leader)
    if got == want:  # no branch: the other side describes a defect
        return None
    return f"partition {q}: last stable offset {got}, but the log's first open transaction puts it at {want}"


def late_ack_misread(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    before: prod.Producer, after: prod.Producer, response: ProduceResponse, log: tuple[part.LogEntry, ...]
) -> str | None:
    """How the client's last acknowledged sequence after a late NONE / DUPLICATE_SEQUENCE_NUMBER answer differs
    from Kafka's, or ``None``; a ``client_reaction:`` label.

    A late answer is one on the client's open data connection that no in-flight batch awaits: the request of a
    batch ``delivery.timeout.ms`` failed in flight (the model duplicates no message on the data path), still held by
    ``NetworkClient`` -- also across a new producer id or epoch (InitProducerId, a TV2 EndTxn), which closes no
    connection.  ``Sender.completeBatch`` -> ``TransactionManager.handleCompletedBatch`` (trunk @1eb7644349cb) raises
    the partition's last acknowledged sequence to the batch's last one if the partition is tracked
    (``TxnPartitionMap.maybeUpdateLastAckedSequence``: a plain comparison, whatever epoch the entry is at by now).
    The batch is read from the leader's log at the answered offset (its first record names the request's batch:
    ``correlation_id``), not from the client's record of expired batches.
    """
    if response.error not in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER):
        return None
    if response.connection != before.connection:
        return None
    if any(prod.answers(b, response) for b in before.batches) or not 0 <= response.base_offset < len(log):
        return None
    e = log[response.base_offset]
    if not e.records or e.records[0] != response.correlation_id // prod.MAX_ATTEMPTS:
        return None
    q = response.partition
    last = e.base_sequence + len(e.records) - 1
    wrong = prod.late_ack_misjudged(before.partitions[q], after.partitions[q], last)
    if wrong is None:
        return None
    got, want = wrong
    return (
        f"client_reaction:producer {response.producer}: the late {response.error} answer to a batch that expired in "
        f"flight (last sequence {last}) left partition {q}'s last acknowledged sequence at {got}; Kafka's is {want}"
    )


def restamps_misread(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    before: prod.Producer, after: prod.Producer, response: ProduceResponse, retries: int, fatal: bool
) -> tuple[str, ...]:
    """``client_reaction:`` labels for each sequenced batch, or partition's next sequence, that a produce answer left
    otherwise than Kafka's ``TransactionManager`` does; ``()`` when it matches.

    Kafka's rule (trunk @1eb7644349cb), written apart from :func:`model.clients.producer._fail` so that a defect
    there is judged by it: an answer changes the stamps (producer id, epoch, base sequence) of no batch but its own
    and the next sequence of no partition but its own, except when it fails its batch
    (``Sender.failBatch`` -> ``TransactionManager.handleFailedBatch``): a transactional producer that is not fatal
    by then, whose failed batch had its retries left (``adjustSequenceNumbers``) and whose error is not
    UNKNOWN_PRODUCER_ID (``resetSequenceForPartition``), gives the batch's sequences back
    (``TxnPartitionEntry.adjustSequencesDueToFailedBatch``): the partition's next sequence goes down by the batch's
    record count, and so does the base sequence of each of the partition's sent batches from the failed one's on;
    earlier ones and other partitions' keep theirs.  A fatal producer sends nothing more: not judged.
    """
    if fatal or response.connection != before.connection:
        return ()
    mine = [b for b in before.batches if prod.answers(b, response)]
    if not mine:
        return ()
    a = mine[0]
    left = {b.records: b for b in after.batches if b.records}
    failed = a.records not in left and response.error not in (Errors.NONE, Errors.DUPLICATE_SEQUENCE_NUMBER)
    adjust = failed and a.has_sequence and a.attempts <= retries and response.error != Errors.UNKNOWN_PRODUCER_ID
    if failed and response.error == Errors.UNKNOWN_PRODUCER_ID:
        return ()
    n = len(a.records) if adjust else 0
    out: list[str] = []
    for b in before.batches:
        kept = left.get(b.records)
        if b is a or not b.has_sequence or kept is None:
            continue
        moved = b.partition == a.partition and b.base_sequence >= a.base_sequence
        want = (b.producer_epoch, b.base_sequence - n if moved else b.base_sequence)
        got = (kept.producer_epoch, kept.base_sequence)
        if got != want:  # no branch: the violation side, only a defect takes it
            out.append(
                f"client_reaction:producer {response.producer}: the {response.error} answer to partition "
                f"{a.partition}'s batch at sequence {a.base_sequence} re-stamped partition {b.partition}'s batch "
                f"(epoch, sequence) {b.producer_epoch, b.base_sequence} to {got}; Kafka's is {want}"
            )
    for q, (old, new) in enumerate(zip(before.partitions, after.partitions, strict=True)):
        want_next = old.next_sequence - (n if q == a.partition else 0)
        if new.producer_epoch == old.producer_epoch and new.next_sequence != want_next:  # no branch: a defect's
            out.append(
                f"client_reaction:producer {response.producer}: the {response.error} answer to partition "
                f"{a.partition}'s batch left partition {q}'s next sequence at {new.next_sequence}; "
                f"Kafka's is {want_next}"
            )
    return tuple(out)


def resolution_misread(  # no mutate: the judge of client_reacts_as_kafka (a property), not a rule
    before: tuple[prod.Producer, str, bool],
    after: tuple[prod.Producer, str, bool],
    tv: int,
    kip_360: bool,
    client: int,
) -> tuple[str, ...]:
    """``client_reaction:`` labels where a transactional producer's ``maybeResolveSequences`` step (``before`` and
    ``after``: its producer data, ``TransactionManager`` state and ``epochBumpRequired``) differs from Kafka's.

    Kafka's rule (``TransactionManager.maybeResolveSequences``, trunk @1eb7644349cb), written apart from
    :func:`model.clients.transactional_producer.resolve_sequences`: a partition with an unresolved sequence is
    settled only once none of its sent batches is outstanding (``hasInflightBatches``); it is resolved if its next
    sequence is the one after the last acknowledged (``isNextSequence``: a later batch proved the expired one
    written); otherwise the sequence is lost and the producer -- with KIP-360 (``canBumpEpoch``; under TV2 the
    coordinator bumps instead, KAFKA-17898) -- owes an epoch bump and becomes abortable (skipped while
    ABORTING_TRANSACTION or fatal), without KIP-360 fatal.  Settled partitions leave the unresolved set; the others
    stay in it.
    """
    old, old_state, old_bump = before
    new, new_state, new_bump = after
    out: list[str] = []
    settle = {
        q
        for q, e in enumerate(old.partitions)
        if e.unresolved and not any(b.partition == q and b.has_sequence for b in old.batches)
    }
    for q, (o, n) in enumerate(zip(old.partitions, new.partitions, strict=True)):
        want = False if q in settle else o.unresolved
        if n.unresolved != want:  # no branch: the violation side, only a defect takes it
            out.append(f"client_reaction:producer {client}: maybeResolveSequences left partition {q} unresolved="
                       f"{n.unresolved}; Kafka's is {want}")
    lost = any(old.partitions[q].next_sequence != old.partitions[q].last_acked_sequence + 1 for q in settle)
    fatal = "FATAL_ERROR"
    if not lost:
        want_state, want_bump = old_state, old_bump
    elif not kip_360:
        want_state, want_bump = fatal, new_bump
    else:
        keep = old_state in (fatal, "ABORTING_TRANSACTION")
        want_state = old_state if keep else "ABORTABLE_ERROR"
        want_bump = old_bump or tv < 2 if old_state != fatal else new_bump
    if (new_state, new_bump) != (want_state, want_bump):  # no branch: the violation side, only a defect takes it
        out.append(f"client_reaction:producer {client}: maybeResolveSequences (sequence lost: {lost}) left "
                   f"{new_state}, epochBumpRequired {new_bump}; Kafka's is {want_state}, {want_bump}")
    return tuple(out)
