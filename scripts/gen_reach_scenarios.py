"""Generate the ``reach`` scenario family: hostile and stale inputs for the idempotence and transactions models.

Issue 23 (reach): the default gate never drove some of the model's rules -- a TV1 zombie's EndTxn and
produce, InitProducerId with a stale (pid, epoch), verification answering a stale epoch, producers
configured with acks=1/0 or without idempotence, reordered and restarted producers.  Rather than one
hand-written scenario per branch, this script sweeps a small grid of parameters and writes one TOML
scenario per cell into ``scenarios/reach_*.toml`` (``sets = ["reach"]``, run by ``keos check --set reach``;
the cells in :data:`DEFAULT_CELLS`, a few seconds each, join the default gate too):

* transactions: transaction version (``kafka`` = TV2 with KIP-890, ``tv1`` = TV1 with verification and
  KIP-360) x shape (``zombie``: two instances of one transactional.id, the older a zombie, with a stale
  request in flight; ``faulty``: one instance over two partitions with every coordinator-side fault;
  ``pending*``: Kafka's coordinator granularity, ``pending_transitions``, where a shape's ``tvs`` names the
  versions it is affordable for).
* idempotence: producer configurations Kafka accepts but that give up a guarantee (acks=1 and acks=0
  without idempotence: the lost and duplicated records are *permitted*, the rest is still checked), and
  an idempotent producer whose messages are reordered or whose process restarts.

``tests/test_reach_scenarios.py`` checks that the committed files are what this script writes, so the
grid is the single source.  Run ``python scripts/gen_reach_scenarios.py`` after changing it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent / "scenarios"

TXN_VARIANTS = {
    "tv2": ("kafka", "transaction.version 2 (KIP-890 part 2, verification, KIP-360)"),
    "tv1": ("tv1", "transaction.version 1 with KIP-890 part 1 verification and KIP-360 (Kafka 3.6-3.9)"),
}

#: Cells cheap enough (a few seconds of CPU each) to pay for their time in the default gate as well.
DEFAULT_CELLS = frozenset(
    {
        "reach_txn_tv2_faulty",
        "reach_txn_tv1_faulty",
        # two requests in flight (session 24): a failed batch with a later one behind it
        # (adjustSequencesDueToFailedBatch) and an expired one settled after the next is answered
        # (maybeResolveSequences), ~1-2 CPU-s each
        "reach_txn_tv2_inflight",
        "reach_txn_tv1_inflight",
        "reach_txn_tv1_inflight_partitions",  # ~6 CPU-s: another partition's batch beside the failed one
        "reach_idempotence_acks1",
        "reach_idempotence_acks0",
        "reach_idempotence_reorder_restart",
        "reach_idempotence_epoch_exhaustion",
        "reach_idempotence_exhaustion_restamp",
        "reach_idempotence_window",
        "reach_idempotence_replication",
        "reach_idempotence_expiry",
        # one leader forgets a producer still writing to the other partition (session 27): ~2 CPU-s
        "reach_idempotence_expiry_partitions",
        "reach_idempotence_retries",
        "reach_idempotence_wrap",
        "reach_idempotence_wrap_batches",
        "reach_idempotence_late_request",
        "reach_idempotence_not_leader_written",
        "reach_idempotence_kafka_14034",
        "reach_idempotence_kafka_14034_fix",
        "reach_txn_tv1_pending",
        # the TV1 fence's failed append at the pending granularity (abort_transit: hasFailedEpochFence, KAFKA-9666),
        # then the fence again from the cached epoch: ~7 CPU-s, the only default run of that path (session 21)
        "reach_txn_tv1_pending_zombie",
        "reach_txn_tv1_stale_init",
        "reach_txn_tv2_pending_overflow",
        "reach_txn_tv2_double_rotation",
        "reach_txn_tv2_exhausted_timeout",
        "reach_txn_tv2_overflow_end_retry",
        "reach_txn_tv2_late_end_after_rotation",
    }
)

#: Two instances of one transactional.id at Kafka's coordinator granularity (the ``pending_*zombie*`` shapes).
PENDING_ZOMBIES: dict[str, Any] = {
    "producers": 2,
    "partitions": 1,
    "transactions_per_producer": 1,
    "records_per_transaction": 1,
    "shared_transactional_id": True,
    "voluntary_abort": True,
    "pending_transitions": True,
    "retries": 1,
}

TXN_SHAPES: dict[str, dict[str, Any]] = {
    "zombie": {
        "text": "two instances of one transactional.id, one transaction each; the older becomes a zombie when "
        "the newer calls initTransactions, and a request of either may time out and land late, or the "
        "coordinator may time the transaction out. The zombie must end fenced (never another "
        "fatal error), its writes never committed.",
        "transactions": {
            "producers": 2,
            "partitions": 1,
            "transactions_per_producer": 1,
            "records_per_transaction": 1,
            "shared_transactional_id": True,
            "voluntary_abort": True,
            "retries": 1,
        },
        "faults": {"request_timeout": 1, "txn_timeout": 1, "total": 1},
    },
    "faulty": {
        "text": "one transactional producer, two transactions over two partitions, the application may abort; "
        "batches expire, responses are lost, the log append fails, and the transactional.id may expire "
        "between transactions (its next InitProducerId gets a new producer id).",
        "transactions": {
            "producers": 1,
            "partitions": 2,
            "transactions_per_producer": 2,
            "records_per_transaction": 1,
            "voluntary_abort": True,
            "retries": 1,
        },
        "faults": {"drop": 1, "batch_expiry": 1, "append_failure": 1, "txn_id_expiry": 1, "total": 2},
    },
    "inflight": {
        "text": "one transactional producer, one transaction of two records on one partition, two requests in "
        "flight at a time (max.in.flight.requests.per.connection = 2; Kafka's default is 5), the application may "
        "abort: a response is lost, a batch expires, or the coordinator times the transaction out (its epoch fence "
        "refuses the batches in flight). A failed batch has a later batch of its partition behind it, whose "
        "sequence Kafka pulls down over the failed one (TxnPartitionEntry.adjustSequencesDueToFailedBatch); an "
        "expired batch's sequence is settled only once the later batch is answered (maybeResolveSequences: "
        "hasInflightBatches) -- resolved if it succeeded, else the sequence is lost and the producer bumps.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 1,
            "records_per_transaction": 2,
            "max_in_flight": 2,
            "voluntary_abort": True,
            "retries": 1,
        },
        "faults": {"drop": 1, "batch_expiry": 1, "txn_timeout": 1, "total": 2},
    },
    "inflight_partitions": {
        "tvs": ("tv1",),
        "text": "the inflight shape over two partitions, one record each, both requests in flight at once: a "
        "batch that fails or expires has the other partition's batch beside it, whose sequence and epoch its "
        "failure must leave as they are (adjustSequencesDueToFailedBatch re-stamps only the failed batch's own "
        "partition; maybeResolveSequences settles each partition on its own).",
        "transactions": {
            "producers": 1,
            "partitions": 2,
            "transactions_per_producer": 1,
            "records_per_transaction": 2,
            "max_in_flight": 2,
            "voluntary_abort": True,
            "retries": 1,
        },
        "faults": {"drop": 1, "batch_expiry": 1, "txn_timeout": 1, "total": 2},
    },
    "pending": {
        "tvs": ("tv1",),
        "text": "Kafka's coordinator granularity (pending_transitions): one transactional producer, two "
        "transactions of one record, the application may abort; every coordinator request prepares its "
        "transition and completes it in the __transaction_state append's callback. One fault: an append "
        "fails, the coordinator fails over (losing an append in flight, re-sending the markers of a "
        "Prepare* it loads), or the transaction times out (never while a transition is pending).",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 2,
            "records_per_transaction": 1,
            "voluntary_abort": True,
            "pending_transitions": True,
            "retries": 1,
        },
        "faults": {"append_failure": 1, "coordinator_failover": 1, "txn_timeout": 1, "total": 1},
    },
    "pending_failover": {
        "tvs": ("tv2",),
        "text": "Kafka's coordinator granularity (pending_transitions) with zombies: two instances of one "
        "transactional.id, one transaction each; the newer one's InitProducerId fences the older one's "
        "transaction. The coordinator may fail over once: with the fence's append in flight (lost: the "
        "zombie's transaction is Ongoing again at the new coordinator), while the abort's markers are "
        "written (re-sent at the new coordinator epoch), or between any other prepare and its callback. The aborts "
        "are the fence's, no voluntary one (session 31: with voluntary_abort 136,834 states and 47 CPU-s, without "
        "51,102 and 19, the same verdicts and 21/21 partners; under keos coverage only 15 arcs of the client's own "
        "AbortTransaction path are no longer taken, each by dozens of default-gate scenarios).",
        "transactions": {k: v for k, v in PENDING_ZOMBIES.items() if k != "voluntary_abort"},
        "faults": {"coordinator_failover": 1, "total": 1},
    },
    "pending_zombie": {
        "tvs": ("tv1",),
        "text": "Kafka's coordinator granularity (pending_transitions) with zombies: two instances of one "
        "transactional.id, one transaction each; the newer one's InitProducerId fences the older one's "
        "transaction through a PrepareAbort appended before it is answered. One append fails: the fence's "
        "(its bump stays cached, hasFailedEpochFence), a request's (the pending state is reset), or the "
        "completion's (retried with its pending state kept).",
        "transactions": PENDING_ZOMBIES,
        "faults": {"append_failure": 1, "total": 1},
    },
    "stale_init": {
        "tvs": ("tv1",),
        "text": "two instances of one transactional.id, one transaction each, no request lost: a batch of either "
        "may expire, so the instance aborts and (KIP-360) sends InitProducerId with the (producer id, epoch) it "
        "holds -- possibly after the other instance's initTransactions bumped the epoch past it. A stale "
        "epoch that is neither the current one nor the lastProducerEpoch of a lost bump must be answered "
        "PRODUCER_FENCED (TransactionCoordinator.handleInitProducerId), never handed the current epoch.",
        "transactions": {
            "producers": 2,
            "partitions": 1,
            "transactions_per_producer": 1,
            "records_per_transaction": 1,
            "shared_transactional_id": True,
            "retries": 1,
        },
        "faults": {"batch_expiry": 1, "total": 1},
    },
    "stale_retry_fenced": {
        "tvs": ("tv1",),
        "text": "one producer, two transactions of one record (KAFKA-12906/KAFKA-14402 shapes): a batch may expire, "
        "so the producer aborts and (KIP-360) bumps its epoch with InitProducerId(producer id, epoch); that "
        "request may time out and be re-sent, its first copy still in flight, and the next transaction may be "
        "timed out by the coordinator (an epoch fence that resets lastProducerEpoch). When the first copy lands "
        "after the fence it names neither the current epoch nor lastProducerEpoch: PRODUCER_FENCED "
        "(TransactionMetadata.prepareIncrementProducerEpoch), never the fenced epoch's successor.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 2,
            "records_per_transaction": 1,
            "retries": 1,
        },
        "faults": {"batch_expiry": 1, "request_timeout": 1, "txn_timeout": 1, "total": 3},
        # the timed-out request may be the first transaction's EndTxn(COMMIT) instead: under TV1 it lands in the
        # second transaction at the same epoch (KAFKA-17754, fixed by TV2's bump per transaction) and the
        # healthy producer's abort is answered INVALID_TXN_STATE -- Kafka 3.x's behaviour, permitted here.  A batch
        # that expires while the producer commits makes it abortable without an epoch bump (maybeTransitionToErrorState:
        # canBumpEpoch() && !isCompleting(), KAFKA-8805), so its request, still on the wire, may land in the next
        # transaction of the same epoch: the TV1 zombie write KIP-890 part 2 removes -- permitted too (only a batch
        # expired on its first attempt leaves it open: one expired in retry leaves its sequence unresolved and
        # maybeResolveSequences owes the bump after all, so committed_transactions_visible, which the model broke
        # while it skipped maybeResolveSequences for a transactional producer, holds)
        "permitted": ["healthy_producer_not_failed", "atomic_commit"],
    },
    "double_rotation": {
        "tvs": ("tv2",),
        "text": "one producer, six transactions of one record at the smallest epoch limit (max_producer_epoch = "
        "3 stands for Short.MAX_VALUE, so epoch 2 is exhausted): every TV2 end of transaction bumps the epoch, "
        "so the producer id rotates twice (nextProducerId, TransactionMetadata.prepareComplete: epoch 0 of the "
        "new id, previousProducerId the old one, nextProducerId cleared). The coordinator may time a "
        "transaction out once, before or after a rotation: its epoch fence writes PrepareAbort from the "
        "rotated entry, and the id it completes on must be the entry's own -- never an earlier producer id "
        "again (producer_ids_never_reused), every transition one of TransactionState's.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 6,
            "records_per_transaction": 1,
            "max_producer_epoch": 3,
            "retries": 1,
        },
        "faults": {"txn_timeout": 1, "total": 1},
        # found here, as Kafka 4.0 behaves (endTransaction checks the producer id before the pending state,
        # PR #18467): when the next transaction's first batch exhausts its retries on CONCURRENT_TRANSACTIONS
        # while the rotating end's markers are written, its abort names nextProducerId and is answered
        # INVALID_PRODUCER_ID_MAPPING, fatal to the client -- recorded at that answer as Kafka's own failure
        # (kafka_known_failures), so healthy_producer_not_failed still judges every other fatal error here
    },
    "exhausted_timeout": {
        "tvs": ("tv2",),
        "text": "one producer, four transactions of one record at the smallest epoch limit (max_producer_epoch = "
        "3 stands for Short.MAX_VALUE, so epoch 2 is exhausted), the application may abort; the coordinator may "
        "time a transaction out once. Timed out at the exhausted epoch, the epoch fence's PrepareAbort must "
        "allocate nextProducerId like every TV2 completion (KAFKA-20090, PR #21506): the producer's late "
        "EndTxn(ABORT) at the exhausted epoch is then the overflow retry, answered with (nextProducerId, 0), and "
        "its next transaction never bumps the epoch past the limit (epoch_within_limit).",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 4,
            "records_per_transaction": 1,
            "max_producer_epoch": 3,
            "voluntary_abort": True,
            "retries": 1,
        },
        "faults": {"txn_timeout": 1, "total": 1},
    },
    "failover_end_retry": {
        # TV1 only with KAFKA-17754 (a timed-out EndTxn(COMMIT) landing in the next transaction): tv1_stale_retry_fenced
        "tvs": ("tv2",),
        "text": "Kafka's coordinator granularity (pending_transitions): one producer, two transactions of one "
        "record. The coordinator may fail over once -- with the EndTxn's PrepareCommit/PrepareAbort append in "
        "flight (lost: the new coordinator loads Ongoing) or after it (the new coordinator loads Prepare* and "
        "re-sends its markers, CompleteX pending) -- and the client's EndTxn may time out and be retried at "
        "the new coordinator, its first copy landing late (KAFKA-12671 / KAFKA-17507 shapes). The retry must be "
        "answered CONCURRENT_TRANSACTIONS while the markers are written and NONE once the end is complete, "
        "under TV2 at the bumped epoch; the transaction ends exactly once.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 2,
            "records_per_transaction": 1,
            "pending_transitions": True,
            "retries": 1,
        },
        "faults": {"coordinator_failover": 1, "request_timeout": 1, "total": 2},
    },
    "overflow_end_retry": {
        "tvs": ("tv2",),
        "text": "one producer, one transaction of one record at the smallest epoch limit (max_producer_epoch = "
        "3): three requests may time out and be retried, so InitProducerId retries bump the epoch to the exhausted "
        "value and the transaction's end rotates the producer id (nextProducerId). When that EndTxn is retried with "
        "its (producer id, exhausted epoch) after the rotation completed, the coordinator must recognise the "
        "retry (retryOnOverflow: previousProducerId and epoch 0) and answer NONE with the new id -- never "
        "INVALID_PRODUCER_ID_MAPPING to the producer that rotated it.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 1,
            "records_per_transaction": 1,
            "max_producer_epoch": 3,
            "retries": 1,
        },
        "faults": {"request_timeout": 3, "total": 3},
    },
    "late_end_after_rotation": {
        "tvs": ("tv2",),
        "text": "one producer, four transactions of one record at the smallest epoch limit (max_producer_epoch = 3): "
        "every end bumps the epoch, so the third transaction's end rotates the producer id (nextProducerId) and the "
        "fourth ends on the new id; one request may time out, so an EndTxn of the old producer id at the exhausted "
        "epoch can land after the new id has ended a transaction of its own. That late EndTxn is no retry of the "
        "rotation any more (retryOnOverflow needs the rotation's completion at epoch 0): Kafka answers it "
        "INVALID_PRODUCER_ID_MAPPING, never NONE with the new id's current epoch (coordinator_answers_per_kafka_table, "
        "acknowledged_to_holder).",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 4,
            "records_per_transaction": 1,
            "max_producer_epoch": 3,
            "retries": 1,
        },
        "faults": {"request_timeout": 1, "total": 1},
    },
    "exhausted_zombie": {
        "tvs": ("tv1",),
        "text": "two instances of one transactional.id at a small epoch limit (max_producer_epoch = 3 stands for "
        "Short.MAX_VALUE), one transaction each: the newer instance's initTransactions and a KIP-360 bump after "
        "an expired batch bring the epoch to the exhausted value, where the next InitProducerId rotates the "
        "producer id. The older instance, a zombie whose batch expired too, then sends InitProducerId with its "
        "stale (producer id, epoch): it must be fenced, never handed the rotated producer id.",
        "transactions": {
            "producers": 2,
            "partitions": 1,
            "transactions_per_producer": 1,
            "records_per_transaction": 1,
            "shared_transactional_id": True,
            "max_producer_epoch": 3,
            "retries": 1,
        },
        "faults": {"batch_expiry": 2, "total": 2},
    },
    "pending_takeover": {
        "tvs": ("tv2",),
        "text": "Kafka's coordinator granularity (pending_transitions) at producer-epoch exhaustion with two "
        "instances of one transactional.id (max_producer_epoch = 3), two transactions each, no fault: the "
        "epoch reaches the exhausted value through initTransactions and TV2 ends of transaction, so an "
        "InitProducerId rotates the producer id (taking the next one before its append completes) or an EndTxn "
        "allocates nextProducerId; the instance left on the old producer id is answered "
        "INVALID_PRODUCER_ID_MAPPING.",
        "transactions": {
            "producers": 2,
            "partitions": 1,
            "transactions_per_producer": 2,
            "records_per_transaction": 1,
            "shared_transactional_id": True,
            "max_producer_epoch": 3,
            "pending_transitions": True,
            "retries": 1,
        },
        "faults": {"total": 0},
        # as in txn_epoch_overflow: the rotating EndTxn is answered (nextProducerId, 0) while its markers are
        # written (KAFKA-18660); a first batch that spends its retries on CONCURRENT_TRANSACTIONS in that window
        # makes the producer abort naming the new id, answered INVALID_PRODUCER_ID_MAPPING (the producer-id check
        # precedes the pending check, PR #18467): fatal -- Kafka's own race, recorded at that answer
        # (kafka_known_failures) and excused there, not permitted wholesale
    },
    "pending_overflow": {
        "tvs": ("tv2",),
        "text": "Kafka's coordinator granularity (pending_transitions) at producer-epoch exhaustion "
        "(max_producer_epoch = 3 stands for Short.MAX_VALUE): one producer, three transactions of one record; "
        "every TV2 end of transaction bumps the epoch, so an EndTxn (a commit, an abort, or the empty abort "
        "of a transaction whose batch expired) reaches the exhausted epoch and allocates the next producer id "
        "before its PrepareCommit/PrepareAbort append completes (generateTxnTransitMetadataForTxnCompletion): "
        "the id is taken while the append is in flight, and the producer moves to it only when the "
        "completion is logged.",
        "transactions": {
            "producers": 1,
            "partitions": 1,
            "transactions_per_producer": 3,
            "records_per_transaction": 1,
            "max_producer_epoch": 3,
            "pending_transitions": True,
            "retries": 1,
        },
        "faults": {"batch_expiry": 1, "total": 1},
    },
}

IDEMPOTENCE_CELLS: dict[str, dict[str, Any]] = {
    "acks1": {
        "text": "a producer without idempotence, acks=1, two requests in flight: the leader acknowledges before "
        "replication (ReplicatePartition is a separate step), fails over and loses the acknowledged record, "
        "a retry duplicates it, or delivery.timeout.ms fails a batch. Loss and duplicates are what Kafka "
        "promises not to prevent here (permitted); order and the sequence table are still checked.",
        "permitted": ["no_acked_loss", "no_duplicate_append", "per_partition_order"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 2},
        "producer": {"enable_idempotence": False, "acks": "1", "retries": 1, "max_in_flight": 2},
        "faults": {"drop": 1, "leader_restart": 1, "request_timeout": 1, "batch_expiry": 1, "total": 1},
    },
    "acks0": {
        "text": "a producer without idempotence and acks=0: a batch counts as sent once it is on the wire, "
        "the leader answers nothing, a reset connection loses it (permitted: acks=0 promises nothing), "
        "or delivery.timeout.ms fails it before it is written.",
        "permitted": ["no_acked_loss"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 2},
        "producer": {"enable_idempotence": False, "acks": "0", "retries": 1, "max_in_flight": 2},
        "faults": {"drop": 1, "leader_restart": 1, "batch_expiry": 1, "total": 1},
    },
    "reorder_restart": {
        "text": "an idempotent producer with two requests in flight whose messages may be reordered on the "
        "connection (a fault TCP never produces; a batch that overtakes the first one of a partition that never "
        "held a record is refused, KAFKA-15591), duplicated, whose leader fails over, whose process restarts (a "
        "new InitProducerId, a new producer id), or whose batch expires.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 2, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "faults": {
            "reorder": 1,
            "producer_restart": 1,
            "duplicate": 1,
            "leader_restart": 1,
            "batch_expiry": 1,
            "total": 1,
        },
    },
    "epoch_exhaustion": {
        "text": "an idempotent producer whose epoch is exhausted after one bump (max_producer_epoch = 1 stands for "
        "Short.MAX_VALUE): an expired batch or a lost sequence makes it bump its epoch (KIP-360), and at the "
        "limit it forgets its producer id and asks for a new one; its remaining batches are stamped afresh.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"max_producer_epoch": 1},
        "faults": {"batch_expiry": 2, "request_timeout": 1, "leader_restart": 1, "total": 2},
    },
    "exhaustion_restamp": {
        "text": "an idempotent producer already at its last epoch (max_producer_epoch = 0 stands for Short.MAX_VALUE) "
        "whose state the leader expired while it was idle: of two pipelined batches the first is answered "
        "NOT_LEADER_OR_FOLLOWER, the second is appended as an unknown producer's, and the retry of the first is "
        "refused OUT_OF_ORDER_SEQUENCE_NUMBER as the next sequence, so the client requests a KIP-360 bump while "
        "it holds that batch -- at the limit the bump resets the producer id "
        "(bumpIdempotentEpochAndResetIdIfNeeded) and the held batch loses its stamp, to be stamped afresh under "
        "the next id.  A message may be duplicated or the leader fail over too.  The retry may be overtaken "
        "(KAFKA-19880, as in idempotence_expired_not_leader) and a failover that lost an answer may duplicate "
        "(KAFKA-14034): both permitted, and reproduced; the partition's order itself holds at these bounds and "
        "is judged, as are the reset, the acknowledgements, failed sends and every answer of the leader.",
        "permitted": ["retried_batch_not_overtaken", "no_duplicate_append"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 2, "max_in_flight": 2},
        "broker": {"producer_id_expiration": True, "max_producer_epoch": 0},
        "faults": {"not_leader": 1, "duplicate": 1, "leader_restart": 1, "total": 2},
    },
    "window": {
        "text": "an idempotent producer with five requests in flight, as many as the leader caches batches per "
        "producer (max.in.flight.requests.per.connection <= 5 = NUM_BATCHES_TO_RETAIN, KAFKA-5494): a reset "
        "connection makes it resend all five after the leader appended them, so the oldest retry is recognised "
        "only if all five are still cached; a batch may expire, a message be duplicated, the leader fail over.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 5},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 5},
        "faults": {"drop": 1, "duplicate": 1, "batch_expiry": 1, "leader_restart": 1, "total": 1},
    },
    "retries": {
        "text": "an idempotent producer that may retry a batch twice: a request times out while the batch ahead "
        "of it expires in flight, so the retry overtakes it on a new connection and is answered "
        "OUT_OF_ORDER_SEQUENCE_NUMBER while retries remain (retried, KIP-360 bump when no earlier batch explains "
        "the gap: TransactionManager.canRetry, for the batch right after the expired one "
        "isNextSequenceForUnresolvedPartition); connections reset, the leader fails over. The bump re-stamps "
        "a batch whose attempt on the old connection may still be written: a second copy under the new epoch "
        "is Kafka's behaviour (KAFKA-14034 family, permitted); a copy under one epoch is not "
        "(no_duplicate_within_epoch).",
        "permitted": ["no_duplicate_append"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 2, "max_in_flight": 2},
        "faults": {"drop": 1, "request_timeout": 1, "batch_expiry": 1, "leader_restart": 1, "total": 2},
    },
    "wrap": {
        "text": "sequences wrap to 0 after 5 (sequence_space = 6 stands for Int.MAX_VALUE + 1, one more than the "
        "five batches the leader caches, as Kafka's space is far above them): seven records go round once; the "
        "leader must accept 0 after 5 (ProducerAppendInfo.inSequence), recognise a retry across the wrap and "
        "not mistake the new batch 0 for the old one. Past the wrap the client's last acknowledged sequence "
        "stays at the top (TxnPartitionEntry.maybeUpdateLastAckedSequence compares plainly). A connection "
        "resets, a message is duplicated, a batch expires, or the leader fails over -- or a misbehaving client (a "
        "pre-KIP-360 client that restarted its sequences without a new epoch, one that bumped its epoch but kept "
        "its sequences as KAFKA-12152's did, a hostile one) sends the leader two of the producer's records again as "
        "one batch under its producer id with a first sequence that is not the next one: 0 before the top, one "
        "past the next (1 after the top), or the next under a new epoch. ProducerAppendInfo.checkSequence/"
        "inSequence answers it OUT_OF_ORDER_SEQUENCE_NUMBER; an append is a duplicate (produce_answer_per_kafka, "
        "no_duplicate_append). No client reads that answer.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 7},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"sequence_space": 6},
        "faults": {
            "drop": 1,
            "duplicate": 1,
            "batch_expiry": 1,
            "leader_restart": 1,
            "forged_sequence": 1,
            "total": 1,
        },
    },
    "wrap_batches": {
        "text": "batches of two records go round the sequence space (sequence_space = 5): a batch can straddle the "
        "top, (4, 0), so the leader must store its last sequence wrapped (RecordBatch.lastSequence, "
        "DefaultRecordBatch.incrementSequence; KAFKA-7692: stored as baseSequence + count - 1 it lay above the top), "
        "recognise a retry of it by the wrapped pair and accept the next batch at 1 (ProducerAppendInfo.inSequence "
        "compares the stored value as it is). With six records in batches of one or two, a new batch can equal one "
        "still cached from the previous lap: the leader answers it as a duplicate and the record is lost -- "
        "Kafka's own behaviour when sequences wrap within NUM_BATCHES_TO_RETAIN batches (why its space is 2^31), "
        "permitted here. A message is dropped or duplicated, a batch expires, or the leader fails over.",
        "permitted": ["acknowledged_offset_in_log", "no_acked_loss"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 6, "records_per_batch": 2},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"sequence_space": 5},
        "faults": {"drop": 1, "duplicate": 1, "batch_expiry": 1, "leader_restart": 1, "total": 1},
    },
    "late_request": {
        "text": "a stale request arrives late: a request timeout moves the idempotent producer to a new "
        "connection while its requests on the old one may still reach the leader at any later point (the broker "
        "still handles what it read from the old socket); six records, two in flight, so by the time an old "
        "request arrives the leader may have appended five later batches of the producer and no longer cache it "
        "(NUM_BATCHES_TO_RETAIN): Kafka answers it OUT_OF_ORDER_SEQUENCE_NUMBER, not as a duplicate, and the "
        "answer goes to a connection the client has left. A batch expires, or the leader fails over.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 6},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "faults": {"request_timeout": 1, "batch_expiry": 1, "leader_restart": 1, "total": 1},
    },
    "kafka_14034": {
        "text": "KAFKA-14034 at the smallest bounds found (idempotence_deep_kafka_14034 is the deep one): "
        "four records, three in flight, one retry. A request times out, the oldest batch expires, the "
        "retry of the next one is answered OUT_OF_ORDER_SEQUENCE_NUMBER with its retries spent, and the "
        "KIP-360 bump re-stamps the batch still waiting from sequence 0 -- written twice if its first "
        "attempt reached the leader. The duplicate is Kafka's behaviour (permitted); the re-stamping "
        "itself (order, sequence table, acknowledgements, failed sends) is judged.",
        "permitted": ["no_duplicate_append"],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 4},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 3},
        "faults": {"request_timeout": 1, "batch_expiry": 1, "leader_restart": 1, "total": 2},
    },
    "kafka_14034_fix": {
        "text": "the bounds of reach_idempotence_kafka_14034 under the fix proposed for KAFKA-14034 (variant "
        "kafka_14034_fix, PR #13796): the OUT_OF_ORDER_SEQUENCE_NUMBER after the last retry leaves the "
        "partition's sequence unresolved, the bump waits until the earlier batches complete, and no record is "
        "written twice.",
        "variant": "kafka_14034_fix",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 4},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 3},
        "faults": {"request_timeout": 1, "batch_expiry": 1, "leader_restart": 1, "total": 2},
    },
    "replication": {
        "text": "acks=all answered only after a separate replication step (the produce purgatory, "
        "DelayedProduce): the leader can fail over with batches appended but not replicated, the new leader "
        "rebuilds the producer state from the log it kept (ProducerStateManager.truncateAndReload), and a "
        "retry can reach the leader before its original is acknowledged (a duplicate that waits for the same "
        "high watermark). Connections reset, requests time out, batches expire, messages are duplicated.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"separate_replication": True},
        "faults": {
            "drop": 1,
            "duplicate": 1,
            "request_timeout": 1,
            "batch_expiry": 1,
            "leader_restart": 1,
            "total": 2,
        },
    },
    "not_leader_written": {
        "text": "KAFKA-15591's fix (PR #23234, Kafka 4.5) covers only a partition that never held a record: here "
        "one producer has written to the partition when another, with no state there, pipelines two batches and "
        "the first is answered NOT_LEADER_OR_FOLLOWER (the broker has not applied its leadership yet); the second "
        "is appended as an unknown producer's batch at any sequence, and every retry of the first is answered "
        "OUT_OF_ORDER_SEQUENCE_NUMBER until the producer gives it up. Kafka's behaviour, not prevented before "
        "KAFKA-19880 (PR #22619, open): permitted here; duplicates, order, acknowledgements and failures are judged. "
        "acks=all is answered after a separate replication step, so the other producer's batch may be in the "
        "leader's log but not yet replicated: the rule reads the log end the producer state was built from "
        "(ProducerStateManager.mapEndOffset), not the high watermark.",
        "permitted": ["retried_batch_not_overtaken"],
        "topology": {"producers": 2, "partitions": 1, "records_per_producer": 2},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"separate_replication": True},
        "faults": {"not_leader": 1, "leader_restart": 1, "total": 1},
    },
    "expiry": {
        "text": "the leader's producer.id.expiration.ms drops the state of an idle producer id (a protocol "
        "step, not a fault): the producer's next batch continues at its sequence and must be accepted as "
        "from an unknown producer (KIP-360, KAFKA-8710); the producer may restart (its old id expires too), "
        "a batch expire, a connection reset, a message be duplicated, the leader fail over and rebuild the "
        "producer state from its log.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 1, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"producer_id_expiration": True},
        "faults": {
            "drop": 1,
            "duplicate": 1,
            "batch_expiry": 1,
            "leader_restart": 1,
            "producer_restart": 1,
            "total": 1,
        },
    },
    "expiry_partitions": {
        "text": "expiry is per partition (each leader's ProducerStateManager.removeExpiredProducers reads its own "
        "entry's lastTimestamp): one partition's leader forgets an idempotent producer that is still writing to "
        "the other partition, two requests in flight. Its next batch there is an unknown producer's and must be "
        "accepted at its sequence (KIP-360) while the other partition's sequences go on; a connection resets, a "
        "batch expires, a message is duplicated or a leader fails over and rebuilds the producer state from its log.",
        "permitted": [],
        "topology": {"producers": 1, "partitions": 2, "records_per_producer": 3},
        "producer": {"enable_idempotence": True, "acks": "all", "retries": 1, "max_in_flight": 2},
        "broker": {"producer_id_expiration": True},
        "faults": {"drop": 1, "duplicate": 1, "batch_expiry": 1, "leader_restart": 1, "total": 1},
    },
}


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _table(name: str, body: dict[str, Any]) -> list[str]:
    return [f"[{name}]", *(f"{k} = {_value(v)}" for k, v in body.items())]


def _doc(name: str, text: str, model: str, top: dict[str, Any], tables: dict[str, dict[str, Any]]) -> str:
    lines = [f'name = "{name}"', f'description = """{text}"""', f'model = "{model}"', 'sets = ["reach"]']
    if name in DEFAULT_CELLS:
        lines.append("default = true")
    lines += [f"{k} = {_value(v)}" for k, v in top.items()]
    for t, body in tables.items():
        lines += ["", *_table(t, body)]
    return (
        "# generated by scripts/gen_reach_scenarios.py -- edit the grid there, not this file\n"
        + "\n".join(lines)
        + "\n"
    )


def scenarios() -> dict[str, str]:
    """File name -> TOML text of every cell of the grid."""
    out: dict[str, str] = {}
    for tv, (variant, tv_text) in TXN_VARIANTS.items():
        for shape, cell in TXN_SHAPES.items():
            if tv not in cell.get("tvs", TXN_VARIANTS):
                continue
            name = f"reach_txn_{tv}_{shape}"
            text = f"Reach family, {tv_text}: {cell['text']}"
            top: dict[str, Any] = {"variant": variant} if variant != "kafka" else {}
            if cell.get("permitted"):
                top["permitted"] = cell["permitted"]
            out[f"{name}.toml"] = _doc(
                name, text, "transactions", top, {"transactions": cell["transactions"], "faults": cell["faults"]}
            )
    for key, cell in IDEMPOTENCE_CELLS.items():
        name = f"reach_idempotence_{key}"
        top = {k: cell[k] for k in ("variant", "permitted") if cell.get(k)}
        tables = {k: cell[k] for k in ("topology", "producer", "broker", "faults") if k in cell}
        out[f"{name}.toml"] = _doc(name, f"Reach family: {cell['text']}", "idempotence", top, tables)
    return out


def main() -> int:
    for fname, text in scenarios().items():
        (HERE / fname).write_text(text, encoding="utf-8")
        print(f"wrote scenarios/{fname}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
