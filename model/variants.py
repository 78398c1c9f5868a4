"""Protocol switches and the named variants built from them.

A *variant* is the real protocol with one rule changed or removed.  Each
weakened variant names the invariant expected to catch it and the scenario in
which it is caught, so ``keos mutants`` can prove the gate catches every one
(a mutation score for the verifier itself).  The switches are data, read by
the step functions, the z3 encoder and the reports alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any

__all__ = ["AUTHORIZATION_CHECKS", "VARIANTS", "ProtocolFlags", "Variant", "get_variant"]

#: Kafka's sequence numbers are int32 and wrap after ``Int.MAX_VALUE``.
KAFKA_SEQUENCE_SPACE = 2**31


@dataclass(frozen=True)
class ProtocolFlags:
    """Switches the model's handlers read.

    Attributes:
        check_epoch: the partition leader rejects a batch whose epoch is below
            the stored one (``ProducerAppendInfo.checkProducerEpoch``).
        check_sequence: the leader enforces consecutive sequences (``ProducerAppendInfo.checkSequence``).
        duplicate_window: how many batches' metadata the leader caches per
            producer (``NUM_BATCHES_TO_RETAIN``, 5 in Kafka).
        sequence_space: sequences wrap to 0 after ``sequence_space - 1`` (set by
            the system from the scenario; Kafka's is 2**31).
        force_idempotence_off: the producer runs with ``enable.idempotence=false``
            whatever the scenario says (the at-least-once baseline).
        transaction_version: the ``transaction.version`` feature level (fact
            sheet "TV"): 2 = KIP-890 part 2, the epoch is bumped at every
            transaction end and the client adds partitions implicitly through
            the partition leader; 0 or 1 = the classic protocol.
        partition_verification: ``transaction.partition.verification.enable``
            (KIP-890 part 1, ``VerificationStateEntry.java``): a transactional write that opens a
            transaction on a partition is checked with the coordinator first.
        txn_offset_commit_verification: on ``transaction.version`` 1 with partition verification the group
            coordinator verifies a TxnOffsetCommit that opens a transaction on ``__consumer_offsets`` too
            (KAFKA-15449, Kafka 3.7: ``CoordinatorPartitionWriter.maybeStartTransactionVerification``);
            without it only produce requests are verified.
        txn_offset_commit_validates_after_verification: with ``[eos] txn_offset_commit_round_trip`` the group
            coordinator checks the member and generation of a verified TxnOffsetCommit in the verification's
            callback, atomically with the append (``GroupCoordinator.handleTxnCommitOffsets`` ->
            ``postVerificationCallback`` -> ``doTxnCommitOffsets`` under the group lock, the KAFKA-15784 fix,
            apache/kafka PR #14774, 3.7; ``CoordinatorRuntime.scheduleTransactionalWriteOperation`` verifies before the
            write event since 3.7/4.0); without it the checks run when the request arrives and the append follows the
            verification whatever the group did meanwhile (Kafka 3.6).
        txn_offset_commit_guard_checked: with ``[eos] txn_offset_commit_round_trip`` the verified TxnOffsetCommit is
            appended only while the ``__consumer_offsets`` partition's verification entry of the producer id still holds
            the guard its verification started with (``ReplicaManager.appendForGroup``'s ``verificationGuards`` ->
            ``UnifiedLog.analyzeAndValidateProducerState``, Kafka 3.7+); without it a verification answered while the
            transaction was open stages its offset after the marker that ended it.
        timeout_abort_bumps_epoch: the coordinator's timeout abort goes through
            PrepareEpochFence and bumps the epoch (``abortTimedOutTransactions``, the KAFKA-6119 fix).
        send_error_aborts_transaction: a ``send()`` that fails synchronously (``KafkaProducer.doSend``'s
            ``ApiException``: the record never reached the accumulator) makes the open transaction abortable
            (``maybeTransitionToErrorState``, KAFKA-9279, PR #11508, Kafka 3.2); without it the transaction may
            commit without the record.
        kip_360: clients bump their epoch with InitProducerId(pid, epoch) after
            an abortable error (KIP-360); without it OUT_OF_ORDER is fatal.
        complete_after_markers: the coordinator writes CompleteCommit/Abort only
            once every WriteTxnMarkers succeeded (``TransactionMarkerChannelManager``).
        generation_fencing: the group coordinator rejects an offset commit whose
            generation is not the group's with ILLEGAL_GENERATION (KIP-447 §3.2;
            the KAFKA-2555 fix, PR #221).
        offsets_in_transaction: the consume-transform-produce application commits
            its input offsets with ``sendOffsetsToTransaction`` (KIP-98); without
            it, with a plain OffsetCommit after ``commitTransaction``.
        seek_after_abort: after ``abortTransaction`` the application seeks back
            to the committed offset (the consumer position does not rewind by
            itself, KAFKA-17582).
        connect_reread_after_producer_init: a Connect worker re-reads the config
            topic after instantiating an exactly-once task's producer and aborts
            the start-up on a new task-config generation (KIP-618 §5.5 step 6).
        connect_transactional_leader: the Connect leader writes the config topic
            with its transactional producer ``connect-cluster-${groupId}`` (KIP-618).
        connect_offsets_in_transaction: an exactly-once source task writes its
            source offsets inside the transaction of their records (``ExactlyOnceWorkerSourceTask.commitTransaction``).
        connect_zombie_fencing: an exactly-once source task asks the leader for a
            zombie-fencing round before it starts (``prepareToInitializeTask``, ``doFenceZombieSourceTasks``).
        ongoing_txn_check_epoch: the partition leader treats a transactional
            batch as joining an open transaction only if the open transaction
            has the batch's producer epoch (``UnifiedLog.hasOngoingTransaction(
            producerId, producerEpoch)``, KAFKA-14563, PR #17698, Kafka 4.0);
            without it (Kafka 3.x's ``hasOngoingTransaction(producerId)``) a TV2
            batch at epoch e+1 skips verification and joins the transaction of
            epoch e that is still waiting for its marker.
        marker_retry_same_epoch: under TV2 the partition leader accepts a marker
            at the stored epoch when no transaction is open on the partition (an
            idempotent retry after a coordinator failover or a lost response,
            KAFKA-19999, PR #21176); without it the retry is rejected with
            INVALID_PRODUCER_EPOCH and the transaction stays in Prepare*.
        marker_retriable_errors_retried: the transaction coordinator re-enqueues
            a WriteTxnMarkers entry answered with a retriable error
            (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
            REQUEST_TIMED_OUT, ...: ``TransactionMarkerRequestCompletionHandler``);
            without it such an error cancels the transaction's markers like
            INVALID_PRODUCER_EPOCH does and the transaction stays in Prepare*.
        marker_cancel_checks_transaction: a WriteTxnMarkers answer that arrives
            under an older coordinator epoch cancels only the pending completion
            it was sent for (``removeMarkersForTxn(pendingCompleteTxn)``,
            KAFKA-16352, PR #15524, Kafka 3.8); without it the cancellation
            removes the transactional id's entry of ``transactionsWithPendingMarkers``
            whatever transaction it belongs to -- the one the reloading coordinator
            registered for its own markers -- and the transaction is never
            completed.
        marker_storage_error_retried: a WriteTxnMarkers entry answered
            KAFKA_STORAGE_ERROR (the partition leader's log directory failed) is
            re-enqueued like the other retriable errors (KAFKA-9749, PR #8336,
            Kafka 2.6); without it the completion handler throws on the code,
            the marker is never re-sent and the transaction stays in Prepare*.
        txn_reload_replaces_cache: loading a ``__transaction_state`` partition
            replaces whatever the coordinator still caches for it
            (``addLoadedTransactionsToCache``, KAFKA-9307, PR #7840, Kafka 2.5);
            without it a reload on the broker that already leads the partition
            (a new leader epoch, no resignation in between) throws and the
            partition never leaves ``loadingPartitions``.
        failed_fence_keeps_bump: after a failed transaction-log append of an
            epoch fence the coordinator keeps the bumped epoch in memory and sets
            ``hasFailedEpochFence``, so the next fence reuses that epoch
            (KAFKA-9666, PR #8239, Kafka 2.5 to 3.9; the TV0/TV1 fence); the TV2
            fence of Kafka 4.0.1+ caches nothing before its append and sets no
            flag (KAFKA-19367, PRs #19910 and #19976).  Without it the epoch is
            rolled back (TV1) or never cached (TV2) but the flag is kept, and the
            next fence writes PrepareAbort at the unchanged epoch.
        end_txn_concurrent_in_prepare: under TV2 the coordinator answers an
            EndTxn that arrives while the previous transaction is in Prepare*
            with CONCURRENT_TRANSACTIONS before checking the epoch (KAFKA-18464,
            PR #18467, Kafka 4.0); without it a client that already holds the
            bumped epoch is answered PRODUCER_FENCED and fences itself.
        end_txn_answers_completed_ids: a successful EndTxn is answered with the
            producer id and epoch of the completion it prepared
            (``newPreSendMetadata``: at an exhausted epoch under TV2 the rotated
            ``nextProducerId`` at epoch 0; KAFKA-18660, PR #18730, Kafka 4.0);
            without it, with the PrepareCommit/PrepareAbort's (the old id at the
            exhausted epoch), so the producer's next transaction is answered
            INVALID_PRODUCER_ID_MAPPING once the id rotated.
        commit_retry_after_abort_fenced: under TV2 a commit at the retry epoch
            that finds the transaction aborted by the coordinator (CompleteAbort)
            is answered PRODUCER_FENCED (KAFKA-20785, PR #23204); without it,
            INVALID_TXN_STATE, which the client treats as fatal.
        tv2_empty_abort_in_table: PrepareAbort's valid previous states include
            Empty/CompleteCommit/CompleteAbort for the TV2 empty abort
            (TransactionState.java, 2025); without it (the Oct-2024 Scala row)
            the empty abort is an illegal transition answered
            UNKNOWN_SERVER_ERROR.
        single_fence_bump: a TV2 epoch fence bumps the epoch once (KAFKA-19367,
            PR #19910, Kafka 4.0.1/4.1); without it the fence bumps and the TV2
            abort bumps again.
        fence_rotates_exhausted_producer_id: under TV2 an epoch fence (the
            timeout abort, or InitProducerId on an Ongoing transaction) at an
            exhausted epoch allocates ``nextProducerId`` into its PrepareAbort like
            every TV2 completion, so CompleteAbort moves to (nextProducerId, 0)
            (KAFKA-20090, PR #21506); without it the fence completes at
            Short.MAX_VALUE on the old id and the producer's late abort is
            answered with that epoch.
        transit_records_previous_producer_id: every prepared transition records the entry's current producer id
            as the target's ``prevProducerId`` and the append's callback installs it (``TransactionMetadata.
            prepareTransitionTo`` / ``completeTransitionTo``, ``TransactionMetadata.java`` @07b06d06, 2025), so
            after any transition but a rotation ``prevProducerId`` is the entry's own id; without it the entry
            keeps an older rotation's id (the model before session 20) and an instance of that old id at an
            exhausted epoch still passes ``handleInitProducerId``'s producer-id check.
        authorize_transactional_id: coordinator requests (InitProducerId,
            AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, TxnOffsetCommit) need Write
            on their TransactionalId (KIP-98 §9; only read when a scenario has ACLs).
        authorize_transactional_produce: a Produce with transactional batches needs
            Write on its transactional.id (KIP-98 §9, the endless-transaction guard).
        authorize_add_partitions_topic: AddPartitionsToTxn needs Write on every
            topic it adds (``KafkaApis.handleAddPartitionsToTxnRequest``,
            TOPIC_AUTHORIZATION_FAILED; KIP-98 §9).
        authorize_marker_cluster_action: WriteTxnMarkers needs ClusterAction (or
            Alter) on the cluster: markers are inter-broker only (KIP-98 §9).
        reject_client_control_records: the log refuses control batches in a
            client's Produce (``LogValidator``, INVALID_RECORD; KIP-98 §9).
        authorize_offsets_group: AddOffsetsToTxn and TxnOffsetCommit need Read on
            the consumer group (``KafkaApis.handleAddOffsetsToTxnRequest``,
            ``handleTxnOffsetCommitRequest``: GROUP_AUTHORIZATION_FAILED).
        authorization_check_skipped: one ``authHelper.authorize`` call of KafkaApis'
            transactional handlers left out, named ``Api:ResourceType`` (an entry of
            :data:`AUTHORIZATION_CHECKS`; "" for none).  Each handler makes its checks
            independently (``KafkaApis.scala`` at apache/kafka 1eb7644: InitProducerId
            l. 2250, EndTxn 2300, AddPartitionsToTxn 2557, AddOffsetsToTxn 2626/2631,
            TxnOffsetCommit 2697/2700, Produce 619 and its topic filter), so a real
            defect drops or misnames one of them while the next handler still checks
            the same binding -- the switches above drop a binding in every handler
            at once.
        apply_acl_changes: the broker's authorizer applies an ACL removal to every
            request handled after it (KRaft ``StandardAuthorizer`` applying the
            metadata log's ACL records); off: it keeps authorizing by the ACLs it
            loaded at startup (a stale ACL cache).
        connect_failed_task_stays_failed: a rebalance that keeps a FAILED task on
            its worker at the same task-config generation leaves it FAILED; only a
            restart request (``POST /connectors/{c}/tasks/{n}/restart``) starts it
            again (``DistributedHerder.startWork`` starts only the tasks not in the
            running assignment, incremental cooperative protocol).  Off: every
            rebalance restarts failed tasks, as the eager protocol
            (``connect.protocol=eager``) did.
        connect_config_update_fails_fencing: a task-config update the leader reads
            while a zombie-fencing round awaits its task-count record fails the
            round at once with 409 CONFLICT and removes it, so a later fencing
            request starts a new round (``DistributedHerder.ConfigUpdateListener
            .onTaskConfigUpdate``, ``ZombieFencing.completeExceptionally``; Kafka
            4.0).  Off: the round stays until its re-read before the record.
        connect_tombstone_to_global_first: a connector-specific offsets commit
            that carries tombstones first writes the tombstones to the worker's
            global offsets topic and writes the connector topic only if that
            succeeded (KAFKA-15018, ``ConnectorOffsetBackingStore.set``).
        connect_abort_commits_offsets: a connector-defined abort
            (``TransactionContext.abortTransaction``) discards the records and
            still commits their offsets in a new transaction, so they are not
            reprocessed (``ExactlyOnceWorkerSourceTask``).  Off: the task rewinds
            to its committed offsets and re-emits the discarded records.
        connect_stopping_task_skips_producer: a source task revoked while its
            start-up was blocked returns before ``producer.initTransactions()``
            (``ExactlyOnceWorkerSourceTask.prepareToInitializeTask``, KIP-618
            §Source task startup step 4).  Off: it initialises the producer anyway.
        connect_failed_task_skips_final_commit: a source task that failed (here: a
            send its producer reported failed, not fenced) is stopped without its
            final offset commit -- ``ExactlyOnceWorkerSourceTask.finalOffsetCommit``
            ("Skipping final offset commit as task has failed"); its open
            transaction is left to the next instance's ``initTransactions``.  Off:
            stopping a failed task commits its open transaction with the offsets of
            every record it dispatched, the failed one too.
        connect_running_task_commits_on_stop: a running exactly-once source task that
            a rebalance stops commits its open transaction first
            (``AbstractWorkerSourceTask.close`` -> ``finalOffsetCommit(false)`` ->
            ``commitTransaction`` with poll and interval boundaries, KIP-618 §Source
            task startup step 8).  Off: it stops with the transaction open, which the
            next instance's ``initTransactions`` aborts (its records are re-polled).
        connect_connector_boundary_stop_keeps_batch_open: with connector-defined
            transaction boundaries a stopped exactly-once source task commits its open
            batch only if the connector asked to (``ExactlyOnceWorkerSourceTask``:
            ``shouldCommitFinalTransaction`` is ``shouldCommitTransactionForBatch``,
            Kafka 4.0); the model's connector has no request pending then, so the
            batch stays open for the next instance to abort.  Off: the stop commits
            the batch the connector never finished.
        connect_fencing_conflict_on_new_generation: a zombie-fencing round re-reads the
            config topic before its task-count record and fails with 409 CONFLICT when
            the task-config generation moved (``ZombieFencing.onZombieFencingSuccess``,
            Kafka 4.0).  Off: the stale round's record clears the newer generation's
            pending fencing.
        connect_task_configs_effective_at_commit: a worker's snapshot of the config
            topic applies a set of task configs only when it reads the set's commit
            record (``KafkaConfigBackingStore.processTaskConfigRecord`` defers them,
            ``processTasksCommitRecord`` applies them), which the leader writes in
            a second privileged write after the task configs (``putTaskConfigs``).
            Off: a set of task configs is effective as soon as it is read -- also a
            set whose commit record a paused, crashed or fenced leader never wrote.
        connect_commit_only_flushed_offsets: an exactly-once source task commits
            its transaction only if the offset writer flushed the transaction's
            offsets (``ExactlyOnceWorkerSourceTask.commitTransaction``, KAFKA-14339's
            fix); else it fails with the transaction open.  Off: the records are
            committed without their offsets, then the task fails.
        connect_ignore_deleted_connector_commits: a commit record of task configs
            read while the connector has no config (after its tombstone) is ignored
            (``KafkaConfigBackingStore.processTasksCommitRecord``, KAFKA-16838's fix).
            Off: it applies the task configs of a deleted connector.
        connect_tombstone_drops_task_configs: a connector's tombstone drops its task
            configs and task count from the snapshot
            (``processConnectorRemoval``, KAFKA-8869's fix).  Off: the deleted
            connector's tasks stay in the snapshot and are assigned.
        connect_config_write_failure_answers_fencing: a failed privileged write of
            task configs or a connector tombstone (the leader was fenced from the
            config topic) also fails the zombie-fencing requests waiting at the
            leader (500) -- in Kafka only the round's own completion answers them
            (``DistributedHerder.ZombieFencing``; Kafka 4.0).  On only in a
            weakened variant.
        connect_offsets_skip_foreign_keys: the offsets reader (``KafkaOffsetBackingStore``'s consume callback) skips
            an offsets-topic record whose key is not Connect's ``[connector, partition]`` JSON and applies the records
            after it (``OffsetUtils.processPartitionKey`` catches the DataException, Kafka 3.7+, KAFKA-15800); without
            it the exception ends ``KafkaBasedLog.poll``'s batch and the records after the foreign one are never read.
        connect_plain_send_failure_fails_task: an at-least-once source task (``WorkerSourceTask``) whose send fails
            keeps the record unacknowledged (its offset is never committed) and fails (``producerSendFailed``,
            KAFKA-8586's fix, Kafka 2.4).  Off: the callback only logs the error and counts the record as sent, so
            the next offset flush commits the offset of a record that was never written.
        connect_own_offsets_first: the combined offsets view of a connector with its own offsets topic reads
            that topic first and the worker's global topic only for partitions it lacks
            (``ConnectorOffsetBackingStore.get``, Kafka 4.0, apache/kafka 1eb7644: the connector store's
            values override the worker store's).  Off: the global topic wins, which may hold older offsets (its
            copy is a logged-only secondary write).
        connect_commit_error_fails_task: an exactly-once source task whose ``producer.commitTransaction()``
            throws after the offsets' flush fails, its offsets unreported (``ExactlyOnceWorkerSourceTask
            .commitTransaction``, Kafka 4.0, apache/kafka 1eb7644: ``commitTaskRecord`` and ``commitSourceTask``
            run only after the commit returned).  Off: the error is ignored and the task goes on as if the
            transaction had committed.
        connect_fence_recorded_task_ids: a zombie-fencing round fences the transactional ids of tasks
            0..record-1, the task count of the latest task-count record (``Worker.fenceZombies(connName,
            taskCountRecord, ...)``, KIP-618 §Zombie fencing).  Off: it fences the ids of the current task
            count, so a shrunk connector's old tasks above it stay unfenced.
        connect_ignore_empty_abort: an exactly-once source task ignores its connector's
            ``TransactionContext.abortTransaction()`` when the transaction is empty (no record since the last
            boundary): ``ExactlyOnceWorkerSourceTask.maybeAbortTransaction``, KAFKA-14799's fix (PR #13379).
            Off: the task calls ``producer.abortTransaction()`` with no transaction open, the producer's
            ``TransactionManager`` refuses the transition READY -> ABORTING_TRANSACTION
            (IllegalStateException) and the task fails.
        connect_fencing_refreshes_first: the leader's zombie-fencing request handler reads the
            config topic to the end before it checks that the connector exists.  Off (Kafka:
            ``DistributedHerder.doFenceZombieSourceTasks``, trunk 1eb7644) it checks the herder's
            ``configState`` first -- not refreshed since the herder's last tick, so a connector the
            leader deleted in the same tick still exists there -- and only then refreshes; the round
            goes on for a deleted connector.  On only in the variant ``fencing_refreshes_first`` (the
            order ``modifyConnectorOffsetsChecks`` uses).
        connect_plain_config_write_acknowledged: a plain (non-transactional: exactly.once.source.support
            disabled) leader awaits the acknowledgement of its config-topic writes, so a failed send makes
            ``putTaskConfigs`` throw and the reconfiguration is retried (``KafkaConfigBackingStore.sendPrivileged``,
            KAFKA-14455's fix, PR #12984, Kafka 3.5).  Off: the send is fire-and-forget and the herder goes on as
            if the commit record were written.
        txn_offset_commit_starts_transaction: under TV2 the producer counts its
            transaction as started once it enqueues a TxnOffsetCommit (the group
            coordinator adds ``__consumer_offsets`` itself, KIP-890 part 2;
            ``TransactionManager.sendOffsetsToTransaction``, Kafka 4.0), so an
            abort sends EndTxn even when no answer came back.  Off: only a
            successful answer adds the partition, and an offsets-only transaction
            whose TxnOffsetCommit failed is aborted locally, left Ongoing at the
            coordinator.
        abort_keeps_queued_add_offsets: TV0/TV1 consume-transform-produce: a
            voluntary abortTransaction leaves an AddOffsetsToTxn that
            sendOffsetsToTransaction queued in ``pendingRequests``; it is sent
            before EndTxn (``TransactionManager.beginAbort`` clears only
            ``newPartitionsInTransaction``; trunk ``1eb7644349cb``).  Off: the
            abort drops it, and a transaction whose AddOffsetsToTxn reached the
            coordinator may end locally while the coordinator holds it Ongoing.
        tv2_offsets_without_add_offsets: TV2 consume-transform-produce:
            sendOffsetsToTransaction enqueues the TxnOffsetCommit directly, the
            group coordinator adds ``__consumer_offsets`` to the transaction
            (KIP-890 part 2; ``TransactionManager.sendOffsetsToTransaction``
            with ``isTransactionV2Enabled``, Kafka 4.0).  Off: the TV2 client
            still sends AddOffsetsToTxn first, as a TV0/TV1 client does.
        defer_bump_until_resolved: an idempotent producer whose batch fails with
            OUT_OF_ORDER_SEQUENCE_NUMBER after its last retry marks the partition's
            sequence unresolved instead of requesting an epoch bump at once, so the
            bump (which re-stamps the partition's outstanding batches from
            sequence 0) waits until every earlier batch has completed -- the fix
            proposed for KAFKA-14034 (PR #13796, not merged: Kafka 3.9's
            ``TransactionManager.handleFailedBatch`` requests the bump at once).
        bump_on_next_sequence_refusal: an idempotent producer whose batch is refused
            OUT_OF_ORDER_SEQUENCE_NUMBER while it has retries left, and is the next
            sequence after the last acknowledged one (no earlier batch explains
            the refusal), requests a KIP-360 epoch bump before it resends it
            (``TransactionManager.canRetry``/``requestIdempotentEpochBumpForPartition``,
            Kafka 3.9).  Off: it resends the batch unchanged, into the same refusal,
            until its retries are spent.
        retry_by_unresolved_sequence: a producer whose batch is refused
            OUT_OF_ORDER_SEQUENCE_NUMBER on a partition with an unresolved sequence
            (a sent batch failed without an answer) judges the refusal by that
            sequence, not by the last acknowledged one (``TransactionManager.canRetry``,
            ``hasUnresolvedSequence`` / ``isNextSequenceForUnresolvedPartition``, since
            KAFKA-8710, Kafka 2.5): an idempotent producer requests the KIP-360 bump
            for the batch right after the failed one and retries the others as they
            are; a transactional one fails the batch (abortable).  Off: the unresolved
            state is ignored, so the batch right after an expired one is retried
            unchanged into the same refusal until its retries are spent.
        resolve_by_last_acked_sequence: an idempotent producer whose partition has
            an unresolved sequence (a sent batch expired) and nothing outstanding
            there resolves it without a bump when the last acknowledged sequence
            is the one before the next sequence -- a later batch succeeded, so
            the expired one was written (``TransactionManager.maybeResolveSequences``,
            ``isNextSequence``).  Off: every unresolved sequence bumps the epoch.
        producer_expiry_keeps_open_transactions: ``producer.id.expiration.ms``
            never removes a producer with an ongoing transaction on the partition
            (``ProducerStateManager.isProducerExpired`` requires no
            ``currentTxnFirstOffset``).
        mark_unresolved_only_in_retry: a batch that ``delivery.timeout.ms`` expires leaves its partition's
            sequence unresolved only if it was in retry (``Sender.sendProducerData``: ``expiredBatch.inRetry()``
            before ``markSequenceUnresolved``).  Off: every expired batch that was sent marks it, on its first
            attempt too, holding back the partition's new batches until it resolves.
        retry_disconnected_batches: a request cancelled by a closed connection is completed with
            NETWORK_EXCEPTION (``wasDisconnected``) or REQUEST_TIMED_OUT (``wasTimedOut``) for each of its
            batches (``Sender.handleProduceResponse``), retriable errors: a batch with retries left is
            re-enqueued.  Off: the batches of the cancelled requests fail at once.
        expired_requests_hold_in_flight: a request whose batch expired while it was in flight still holds its
            place among the ``max.in.flight.requests.per.connection`` requests ``NetworkClient`` keeps until the
            response is read or the connection closes.  Off: the expired batch's request frees its place at once,
            so a batch behind it is drained while it is still on the wire.
        held_requests_count_in_flight: a transactional producer's request that the partition leader holds back
            while it verifies the transaction (KIP-890: ``AddPartitionsToTxnManager`` keeps it until the coordinator
            answers) stays in ``NetworkClient.InFlightRequests`` -- its batch may have expired meanwhile -- and
            counts against ``max.in.flight.requests.per.connection`` like one on the wire.  Off: only requests on
            the wire count, so a batch is drained behind a held request of an expired batch.
        sender_within_max_in_flight: the transactional producer's ``NetworkClient.canSendMore`` admits at most
            ``max.in.flight.requests.per.connection`` produce requests per connection (the idempotence system's
            producer is held to it by :func:`model.clients.producer.can_drain` the same way).  Off: the
            transactional system's Sender admits one request more than configured, so a batch is drained while
            the configured number of requests is outstanding (judged by ``requests_in_flight_per_kafka``,
            ``invariants/txn_in_flight.py``).
        failed_batch_bump_outside_completion: a transactional producer whose batch fails sets
            ``epochBumpRequired`` (KIP-360, TV < 2) only when it is not completing a transaction
            (``maybeTransitionToErrorState``: ``canBumpEpoch() && !isCompleting()``).  Off: a batch failing while
            COMMITTING_TRANSACTION sets it too.
        txn_failed_batch_adjusts_sequences: a transactional producer's batch that fails with retries left gives its
            sequences back (``TxnPartitionEntry.adjustSequencesDueToFailedBatch``, KAFKA-5494): the partition's next
            sequence and its later sent batches' sequences go down by its record count.  Off: they are kept.
        txn_resolve_waits_for_inflight: a transactional producer settles a partition's unresolved sequence only once
            none of its sent batches is outstanding (``maybeResolveSequences``: ``hasInflightBatches``).  Off: at once,
            before a later batch can prove the expired one written.
        retried_batch_keeps_transaction: a transactional producer's connection that closes (a reset or
            ``request.timeout.ms``) fails the transaction only through a batch it gives up
            (``TransactionManager.handleFailedBatch`` runs from ``Sender.failBatch``); a batch re-enqueued for a
            retry leaves the transaction as it is.  Off: every closed connection with a batch in flight makes
            the transaction abortable.
        txn_resolve_sequences: a transactional producer runs ``maybeResolveSequences`` first in every Sender
            loop: a partition whose expired batch left its sequence unresolved is resolved once no batch of it is
            outstanding, or (the last acknowledged sequence not caught up) makes the producer abortable with an
            epoch bump owed (KIP-360) or fatal (without).  Off: the unresolved partitions are left alone and
            restart after their last acknowledged sequence when the transaction ends.
        add_partitions_unexpected_abortable: ``AddPartitionsToTxnHandler`` counts an error it does not name
            (UNKNOWN_SERVER_ERROR of a ``__transaction_state`` record too large) as a partition error and ends with
            ``abortableError`` (``TransactionManager.java`` @1eb7644349cb).  Off: the producer is made fatal, as
            InitProducerId's and EndTxn's handlers do with an unexpected error.
        late_success_updates_last_acked: the NONE / DUPLICATE_SEQUENCE_NUMBER answer to a batch that expired while
            its request was in flight still raises the partition's last acknowledged sequence
            (``Sender.completeBatch`` -> ``handleCompletedBatch``; ``ProducerBatch.complete`` then only logs that
            the batch had already failed).  Off: the answer is ignored, so the partition's unresolved sequence
            cannot resolve through it.
        acked_sequence_only_raised: a NONE / DUPLICATE_SEQUENCE_NUMBER answer to a batch in flight raises the
            partition's last acknowledged sequence to the batch's last, never lowers it
            (``TxnPartitionEntry.maybeUpdateLastAckedSequence``).  Off: every answer sets it, so an answer that
            arrives after a later batch's lowers it.
        producer_knows_storage_error: the producer knows KAFKA_STORAGE_ERROR (code 56, KIP-112: Produce v4+ clients;
            ``KafkaStorageException`` is an ``InvalidMetadataException``, so ``Sender.canRetry`` retries it).  Off:
            the client reads it as the non-retriable ``UnknownServerException`` (``Errors.forCode`` of an unknown
            code) and fails the batch -- what a Produce v3 client does when the broker does not translate the code to
            NOT_LEADER_FOR_PARTITION (``ProduceResponse``, KAFKA-4763 fc93fb4b611).
        retriable_produce_error_keeps_epoch: an idempotent producer retries a batch answered with a
            ``RetriableException`` unchanged -- same producer epoch, same sequence (``Sender.completeBatch`` ->
            ``reenqueueBatch``; only OUT_OF_ORDER_SEQUENCE_NUMBER / UNKNOWN_PRODUCER_ID may request an epoch bump,
            ``TransactionManager.canRetry``, trunk @1eb7644349cb).  Off: every retried error requests a KIP-360 bump
            that re-stamps the partition's batches from sequence 0 at the new epoch, so a batch the leader did
            append (REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND from the produce purgatory) is appended again.
        produce_retries_only_retriable: ``Sender.canRetry`` re-enqueues a batch only for an error whose exception is a
            ``RetriableException`` (or an OUT_OF_ORDER_SEQUENCE_NUMBER ``TransactionManager.canRetry`` explains),
            trunk @1eb7644349cb.  Off: any error is retried while retries are left.
        failed_batch_makes_transaction_abortable: a transactional batch the Sender gives up (``failBatch``: its
            retries spent, or a non-retriable error) goes to ``TransactionManager.handleFailedBatch``, whose
            ``maybeTransitionToErrorState`` makes the transaction abortable (trunk @1eb7644349cb).  Off: only the
            batch's future fails; the transaction stays open and its commit goes through (KAFKA-5385's shape).
        retry_drained_in_turn: a retried batch is drained only as its partition's first sequence in flight
            (``RecordAccumulator.shouldStopDrainBatchesForPartition``, ``firstInFlightSequence``).  Off: it goes as
            soon as it is re-enqueued, ahead of an earlier batch still being retried.
        empty_abort_rotates_producer_id: the TV2 empty abort allocates the next
            producer id when the epoch is exhausted, like every TV2 completion
            (``generateTxnTransitMetadataForTxnCompletion``); without it the
            epoch is bumped past Short.MAX_VALUE - 1.
        init_pid_retry_by_last_epoch: the transaction coordinator answers an InitProducerId(pid, epoch) whose
            epoch is the one it last bumped from (``lastProducerEpoch``) with the current epoch: the retry of a
            KIP-360 bump whose response was lost (``TransactionCoordinator.handleInitProducerId``, KIP-360
            §InitProducerId retries); without it the retry is answered PRODUCER_FENCED.
        complete_written_to_log: the coordinator completes a transaction (CompleteCommit/CompleteAbort) through
            ``prepareComplete`` and a transaction-log append (``TransactionStateManager.appendTransactionToLog``,
            then ``completeTransitionTo``); without it the cache is set to Complete* directly.
        producer_id_block_advances: the producer-id allocator moves past every id it hands out
            (``ProducerIdManager`` allocates increasing blocks); without it the next InitProducerId that needs
            a fresh id (a new or expired transactional id, an exhausted epoch) gets the same id again.
        offset_commit_generation_check: the group coordinator rejects a plain
            OffsetCommit from a member it does not know (UNKNOWN_MEMBER_ID) or of
            another generation (ILLEGAL_GENERATION), ``ClassicGroup.validateOffsetCommit``.
        offset_commit_stale_generation_check: of those, the generation check: a known member's
            OffsetCommit of another generation is ILLEGAL_GENERATION (the KAFKA-2555 fix, PR #221;
            before it the coordinator accepted commits from any generation of a member it knew).
        load_keeps_pending_offsets: a group coordinator loading ``__consumer_offsets`` keeps a
            transactional offset pending until its producer's marker (``OffsetMetadataManager.replay``);
            without it the offset is loaded as committed.
        materialize_in_log_order: a COMMIT marker on ``__consumer_offsets`` materialises a pending
            transactional offset only if its record is later in the log than the committed offset's
            (``OffsetMetadataManager.replayEndTransactionMarker``: the KAFKA-5247 fix, Kafka 0.11.0.1); without
            it the transaction's offset overwrites a plain commit that landed after it.
        offset_commit_waits_for_log: the group coordinator answers an OffsetCommit
            only once its records are committed to ``__consumer_offsets``
            (``CoordinatorRuntime`` defers the response to the high watermark).
        cooperative_revoke_before_reassign: the cooperative-sticky leader withholds a
            partition that changes owner until its old owner has revoked it
            (``CooperativeStickyAssignor.adjustAssignment``, KIP-429).
        offset_fetch_require_stable: the consume-transform-produce application's consumer
            sends OffsetFetch with ``requireStable`` (KIP-447, OffsetFetch v7; ``ConsumerCoordinator``
            retries UNSTABLE_OFFSET_COMMIT).
        acks_all_waits_for_replication: with separate replication, the partition leader answers an acks=all
            produce only once the high watermark passes the batch (``DelayedProduce`` in the produce purgatory,
            ``ReplicaManager.appendRecords``); without it the leader answers after its local append, as for acks=1.
        truncation_rebuilds_producer_state: a new leader's producer state is built from the log it keeps
            (``ProducerStateManager.truncateAndReload``; a follower builds it from the batches it replicated);
            without it the entries of batches cut off with the unreplicated tail survive the failover.
        leader_move_completes_purgatory: when a partition's leadership moves away from a running broker
            (``ReplicaManager.makeFollowers``, ``completeDelayedOperationsWhenNotPartitionLeader``), the produce
            requests parked in its purgatory complete with NOT_LEADER_OR_FOLLOWER (``DelayedProduce.tryComplete``)
            and their clients retry them (KAFKA-2960); without it they stay parked and a later high watermark
            releases them as NONE at offsets the new log holds other batches at.
        producer_state_survives_log_start_offset: when the log start offset advances (DeleteRecords, retention:
            ``UnifiedLog.maybeIncrementLogStartOffset``) the partition keeps every producer's state
            (``ProducerStateManager.onLogStartOffsetIncremented``; KAFKA-7190, Kafka 2.5, KIP-360); without it
            ``truncateHead`` forgets each producer whose last batch was deleted, and a retry of that batch is
            appended again as an unknown producer's.
        follower_tracks_transactions: a follower applies the transactional updates of every batch it replicates
            (``ProducerAppendInfo`` with origin REPLICATION: the open transaction's first offset, markers closing
            it, their coordinator epoch, ``LogSegment.updateTxnIndex``'s aborted ranges), so a partition leader
            elected from it (``Partition.makeLeader``; :mod:`model.log.leader_election`) holds the last stable
            offset at the open transactions and filters the aborted ones; without it the new leader knows only
            the idempotent producer state.
        delayed_fetch_keeps_isolation: a Fetch completed from the purgatory (``DelayedFetch.onComplete``) reads the
            log with the isolation level the request asked for (KAFKA-5355, fix 6a5a908, 0.11.0); without it the
            read is read_uncommitted -- up to the high watermark, no aborted transactions -- whatever the consumer
            asked (:mod:`model.log.fetch`).
        delayed_fetch_carries_aborted: the response ``DelayedFetch.onComplete`` builds carries the aborted
            transactions of the read (``FetchPartitionData.abortedTransactions``, KAFKA-5376, fix 2bb48a4, 0.11.0);
            without it the list is empty and the read_committed consumer cannot drop the aborted batches.
        read_uncommitted_bounded_by_high_watermark: a read_uncommitted read (``FetchIsolation.HIGH_WATERMARK``,
            Kafka's default isolation) stops at the high watermark (``UnifiedLog.read`` bounds it by
            ``highWatermarkMetadata``); without it the read's bound is the log end offset -- what KAFKA-9196 (fix
            7eafea0, 2.4) did after a segment roll left the high watermark's offset metadata pointing at the old
            segment, exposing the unreplicated tail to consumers (:mod:`model.log.fetch`).
        aborted_txn_lso_counts_open_transactions: an aborted transaction's index entry records the partition's
            last stable offset once it completed -- the first offset of the earliest transaction of another
            producer still open, else the marker's offset + 1 (``ProducerStateManager.lastStableOffset(
            completedTxn)``) -- which a read_committed fetch's index scan stops at
            (``TransactionIndex.collectAbortedTxns``); without it the marker's offset + 1 is recorded, and a fetch
            that ends before it drops the aborted transactions indexed after it.
        first_sequence_zero_on_empty_log: the partition leader answers OUT_OF_ORDER_SEQUENCE_NUMBER to a batch of a
            producer it has no state for whose first sequence is not 0, on a partition that never held a record
            (``ProducerStateManager.mapEndOffset() == 0``; KAFKA-15591, PR #23234, Kafka 4.5); without it (Kafka 2.5
            to 4.4) any first sequence of an unknown producer is appended there too.
        pending_offsets_wait_for_marker: a TxnOffsetCommit's offset stays pending until the
            transaction's COMMIT marker reaches ``__consumer_offsets``
            (``OffsetMetadataManager.replayEndTransactionMarker``); without it OffsetFetch already
            answers the pending offset.
        txn_timeout_fires_while_clients_wait: the coordinator's ``transaction.timeout.ms`` abort
            (``TransactionCoordinator.abortTimedOutTransactions``, on its own scheduler) fires while the only
            enabled client steps are retries that change nothing (an OffsetFetch answered
            UNSTABLE_OFFSET_COMMIT); without it a polling client starves the timeout and the transaction hangs.
        append_failure_resets_pending: when the transaction coordinator's append to
            ``__transaction_state`` fails, the callback resets ``pendingState`` before answering the
            error (KAFKA-5351, PR #3184); without it the entry keeps its pending transition and every
            later request is answered CONCURRENT_TRANSACTIONS (read with ``pending_transitions``).
        append_callback_checks_coordinator_epoch: the callback of an append to ``__transaction_state`` acts on the
            cache only under the coordinator epoch that prepared it (``appendTransactionToLog``'s
            ``updateCacheCallback``): an old instance's append that calls back after a failover answers
            NOT_COORDINATOR and leaves the new instance's entry alone (read with ``loading_window``).
        complete_not_coordinator_skipped: a CompleteCommit/CompleteAbort append that fails NOT_COORDINATOR (the
            leader lost the partition) is dropped with its pending state reset (``tryAppendToLog``; ``retryOnError``
            is only COORDINATOR_NOT_AVAILABLE); without it the append is re-enqueued like a retriable one.
        log_restores_last_producer_epoch: a coordinator loading ``__transaction_state`` restores each entry's
            ``lastProducerEpoch`` from its flexible (transaction.version >= 1) record (KAFKA-20357, PR #22096); without
            it the loaded entry has NO_PRODUCER_EPOCH and a KIP-360 InitProducerId retry of a bump the old coordinator
            logged but never answered is PRODUCER_FENCED.
        loading_answers_load_in_progress: a coordinator still loading its ``__transaction_state`` partition answers
            COORDINATOR_LOAD_IN_PROGRESS (``getTransactionState`` while the partition is in ``loadingPartitions``);
            without it requests are served before the load completes (read with ``loading_window``).
        complete_retry_keeps_pending: a failed CompleteCommit/CompleteAbort append keeps its pending
            state and is re-enqueued (``retryOnError``, KAFKA-5416, PR #3287); without it the failure
            resets the pending state and the retried append's ``completeTransitionTo`` throws, leaving
            the transaction in Prepare* (read with ``pending_transitions``).
        expiry_failure_resets_pending: when the tombstone of an expired transactional.id fails to be
            appended, ``removeFromCacheCallback`` resets the pending Dead (KAFKA-7519, PR #5820); without it
            the id answers CONCURRENT_TRANSACTIONS until the coordinator moves (read with
            ``pending_transitions``).
        timeout_abort_skips_pending: ``TransactionStateManager.timedOutTransactions`` and
            ``abortTimedOutTransactions`` skip a transaction with a transition pending; without it the
            timeout's epoch fence is prepared over the pending transition (``prepareTransitionTo``'s
            IllegalStateException).
        verification_guard_checked: a verified transactional batch is appended only while the partition's
            verification entry still holds the guard its verification started with
            (``UnifiedLog.analyzeAndValidateProducerState``, ``batchMissingRequiredVerification``, KIP-890 part
            1, KAFKA-14884); without it a verification the coordinator answered before the transaction ended
            appends after the marker (read with ``verification_round_trip``).
        verification_guard_fresh: every verification entry gets a guard no earlier entry of the partition had
            (``VerificationGuard`` is a new object per ``VerificationStateEntry``, compared by identity); without it
            a callback of a verification whose entry a marker cleared passes the guard check of the next entry of
            the same producer id (read with ``verification_round_trip``).
        marker_clears_verification: a marker appended for a producer id removes its verification entry
            (``UnifiedLog.updateProducers`` -> ``clearVerificationStateEntry``); without it the guard of a
            verification started before the marker stays valid after it (read with ``verification_round_trip``).
        marker_keeps_next_transaction_verification: a TV2 marker leaves in place a verification entry at the
            marker's own epoch -- the producer's next transaction already verifying (``UnifiedLog.updateProducers``,
            ``isV2NextTransactionStarted``, Kafka trunk 2025); without it that transaction's first batch is refused
            INVALID_TXN_STATE, fatal for the producer (read with ``verification_round_trip``).
        join_unchanged_answers_current_generation: the group coordinator answers a JoinGroup from a
            known member whose subscription metadata did not change with the current generation
            (in CompletingRebalance any member, in Stable a follower) instead of rebalancing
            (``GroupMetadataManager.classicGroupJoinExistingMember``, ``member.matches``).
        rebalance_in_progress_rejoins: a consumer answered REBALANCE_IN_PROGRESS (JoinGroup, SyncGroup,
            Heartbeat, OffsetCommit) rejoins (``AbstractCoordinator.requestRejoin``); without it the error
            is unexpected and raised from ``poll()`` (the consumer fails).
        commit_on_revoke: a consumer commits its positions before it gives partitions up
            (``ConsumerCoordinator.onJoinPrepare``'s auto-commit, or the application's
            ``ConsumerRebalanceListener.onPartitionsRevoked``; also on close).
        coordinator_change_keeps_membership: a Stable consumer that finds a new group coordinator keeps its
            member id, generation and assignment and goes on heartbeating (``AbstractCoordinator.
            markCoordinatorUnknown`` does not request a rejoin); without it the consumer rejoins.
        retriable_join_error_keeps_member: a JoinGroup or SyncGroup that failed for a coordinator change
            (NOT_COORDINATOR, a disconnect: retriable) is sent again with the member id, generation and partitions
            the consumer has (``AbstractCoordinator.joinGroupIfNeeded``, the KAFKA-13214 fix, apache/kafka PR #11231,
            3.1); without it the failure resets the member (``resetStateAndRejoin``): the consumer rejoins as a new
            member and loses its partitions without committing.
        failed_sync_requests_rejoin: a SyncGroup that failed for a coordinator change leaves the consumer in the
            rebalance (``rejoinNeeded`` cleared only by a successful SyncGroup, the KAFKA-5154 fix, apache/kafka
            commit 1b16acaaa18, 0.11); without it the JoinGroup answer had already cleared it and the consumer goes
            back to consuming the assignment its eager ``onJoinPrepare`` revoked.
        rebalance_in_progress_keeps_generation: a consumer answered REBALANCE_IN_PROGRESS rejoins keeping its
            generation and partitions (``requestRejoin``), unlike ILLEGAL_GENERATION
            (``resetGenerationOnResponseError``: generation reset, partitions lost).
        join_prepare_retries_commit: ``ConsumerCoordinator.onJoinPrepare`` (Kafka 4.0, trunk 1eb7644) answered a
            retriable error for its auto-commit (NOT_COORDINATOR: the coordinator moved mid-commit) returns false:
            it revokes nothing and sends no JoinGroup, and retries the commit once the coordinator is found again;
            without it the consumer revokes its partitions with their positions uncommitted.
        close_commit_retried: ``KafkaConsumer.close()``'s auto-commit answered a retriable error (NOT_COORDINATOR: the
            group coordinator moved mid-commit) is sent again to the new coordinator before the consumer revokes its
            partitions and leaves (``ConsumerCoordinator.close`` -> ``maybeAutoCommitOffsetsSync``, Kafka 3.2+, trunk
            1eb7644); without it (KAFKA-7540: ``maybeAutoCommitOffsetsAsync``, never retried) the consumer leaves with
            its positions uncommitted.
        standalone_commit_in_empty_group: an OffsetCommit without group metadata (generation -1: the admin client's
            ``alterConsumerGroupOffsets``, a consumer using ``assign()``) is accepted by an Empty classic group whatever
            member id and ``group.instance.id`` it carries (``ClassicGroup.validateOffsetCommit``, Kafka 3.4+ since
            KAFKA-14201, trunk 1eb7644); without it a commit carrying an instance id goes through the member checks
            and is refused UNKNOWN_MEMBER_ID.
        expiry_deletes_group: an Empty classic group whose offsets all expired is deleted with its tombstone
            (``GroupCoordinatorShard.cleanupGroupMetadata`` -> ``GroupMetadataManager.maybeDeleteGroup``; replaying
            the tombstone removes the group, Kafka trunk 1eb7644): the next JoinGroup starts a new group at generation
            0, as a coordinator loading the partition does; without it the live group keeps its generation.
        offset_fetch_checks_loading: the group coordinator answers an OffsetFetch COORDINATOR_LOAD_IN_PROGRESS while
            it is still loading the group (``CoordinatorRuntime.withActiveContextOrThrow``, Kafka trunk 1eb7644);
            without it a loading shard answers from whatever its cache holds.
        offset_fetch_honours_require_stable: the group coordinator answers UNSTABLE_OFFSET_COMMIT for a pending
            transactional offset only to an OffsetFetch that sets ``requireStable`` (KIP-447; ``OffsetMetadataManager.
            fetchOffsets``, Kafka trunk 1eb7644); without it every reader -- ``Admin.listConsumerGroupOffsets``, whose
            default is ``requireStable=false`` -- is refused while a transaction of the group is open.
        offset_fetch_on_assign: a consumer fetches the group's committed offset of every partition a
            rebalance gives it and starts there (``ConsumerCoordinator.initWithCommittedOffsetsIfNeeded``);
            without it the consumer starts every new partition at ``auto.offset.reset`` (earliest).
        load_restores_subscriptions: a group coordinator loading ``__consumer_offsets`` gives every member of the
            loaded group the subscription metadata its ``GroupMetadataValue.MemberMetadata.subscription`` carries
            (``GroupMetadataManager.replay``: it becomes the member's supported protocol, Kafka trunk 1eb7644);
            without it the loaded members hold no subscription.
        static_member_fencing: the group coordinator checks a request's ``group.instance.id`` before its member id
            (``ClassicGroup.validateMember``, KIP-345): an instance id mapped to another member id is
            FENCED_INSTANCE_ID, fatal to the replaced process; without it the replaced member id is merely
            UNKNOWN_MEMBER_ID and the old process rejoins, replacing the new one in turn.
        sync_rebalance_keeps_generation: a consumer whose SyncGroup is answered REBALANCE_IN_PROGRESS rejoins keeping
            its member id, generation and partitions (``AbstractCoordinator.SyncGroupResponseHandler``:
            ``requestRejoin``, Kafka 4.0 trunk 1eb7644, the KAFKA-14016 fix); without it the answer resets the
            generation and loses the partitions, as the handler did after KAFKA-13891.
        join_prepare_revokes_after_fenced_commit: an eager ``onJoinPrepare`` whose auto-commit was fenced
            (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION: not retriable) still revokes the partitions and joins (Kafka 4.0
            trunk 1eb7644); without it the member keeps them, its generation reset, and sends no JoinGroup.
        join_prepare_pauses_partitions: while an eager ``onJoinPrepare``'s asynchronous auto-commit is in flight the
            partitions about to be revoked are pending revocation, not fetchable (``SubscriptionState.
            markPendingRevocation`` / ``ConsumerCoordinator.onJoinPrepare``, the KAFKA-14196 fix, apache/kafka PR
            #12603, 3.3); without it poll goes on returning their records, whose positions the revocation that
            follows never commits: the next owner processes them again.
        join_prepare_commit_resets_identity: the JoinGroup after an eager ``onJoinPrepare`` whose auto-commit was fenced
            carries the identity ``OffsetCommitResponseHandler`` reset (``resetStateOnResponseError``: no member id
            after UNKNOWN_MEMBER_ID, no generation after ILLEGAL_GENERATION; Kafka 4.0 trunk 1eb7644); without it it
            carries the member id and generation the commit was fenced for.
        static_member_stays_on_close: a static member (KIP-345) sends no LeaveGroup when it closes or its poll timeout
            expires (``AbstractCoordinator.maybeLeaveGroup``, Kafka 4.0 trunk 1eb7644: dynamic members only): it stays
            in the group until its session expires or a new process of its ``group.instance.id`` replaces it; without
            it every bounce of a static member removes it and rebalances the group.
        static_rejoin_keeps_generation: a static member's new process joining a Stable group takes its place without
            a rebalance (``updateStaticMemberThenRebalanceOrCompleteJoin``, KIP-345); without it every restart of a
            static member rebalances the group as a new member would.
        static_rejoin_completing_rebalances: a static member's new process joining a CompletingRebalance group
            rebalances it (``updateStaticMemberThenRebalanceOrCompleteJoin``: the leader may have assigned to the old
            member id; the KAFKA-9801 fix, Kafka 2.5); without it the new member id waits for an assignment the
            leader computed without it, and is given none.
        fenced_member_loses_partitions: a consumer answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION (Heartbeat,
            SyncGroup, OffsetCommit, its parked JoinGroup) drops its partitions without committing
            (``onPartitionsLost``, ``ConsumerCoordinator.onJoinPrepare`` for a fenced generation, KIP-429) before it
            rejoins; without it it keeps them, and their positions, into the next generation.
        heartbeat_response_checks_generation: a consumer ignores a Heartbeat's UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION /
            FENCED_INSTANCE_ID when the Heartbeat was sent with a member id or generation it no longer has
            (``AbstractCoordinator.HeartbeatResponseHandler``: ``generationUnchanged()``, Kafka 4.0 trunk 1eb7644);
            without it a late response resets a member that completed a rebalance since.
        join_updates_member_metadata: the group coordinator stores the subscription metadata (ownedPartitions, their
            generation) of a known member's JoinGroup (``GroupMetadataManager.updateMemberAndRebalance``,
            ``ClassicGroupMember.setSupportedProtocols``, Kafka 4.0 trunk 1eb7644); without it the member keeps the
            metadata of its first JoinGroup.
        sync_response_checks_generation: a consumer whose SyncGroup answer arrives after its generation was reset
            (or after it left COMPLETING_REBALANCE) fails the rebalance and rejoins
            (``AbstractCoordinator.SyncGroupResponseHandler``: ``hasGenerationReset``, Kafka 4.0 trunk 1eb7644);
            without it it takes the assignment anyway.
        commit_response_checks_generation: a consumer that is answered UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION for an
            OffsetCommit sent with a member id or generation it no longer has, while its JoinGroup is out, only raises
            RebalanceInProgressException, and FENCED_INSTANCE_ID of such an identity is not fatal
            (``ConsumerCoordinator.OffsetCommitResponseHandler``: ``generationUnchanged()``, KAFKA-9823, Kafka trunk
            1eb7644); without it a late commit answer resets the member it has since become.
        pending_member_cleared_on_join: a pending member (KIP-394) that joins with its id stops being pending
            (``ClassicGroup.add`` removes it from ``pendingJoinMembers``, Kafka trunk 1eb7644); without it the join
            barrier (``hasAllMembersJoined``) waits for a member that has already joined.
        pending_member_kept_on_other_join: a JoinGroup that admits one member leaves every *other* pending member
            (KIP-394) pending (``ClassicGroup.add`` removes only the joining id from ``pendingJoinMembers``, Kafka trunk
            1eb7644); without it another consumer's JoinGroup with its pending id is answered UNKNOWN_MEMBER_ID.
        pending_members_expire: a pending member whose JoinGroup never comes back is removed when its session timeout
            expires (``removePendingMemberAndUpdateClassicGroup``, KAFKA-7909); without it the join barrier waits
            for it for ever.
        rebalance_timeout_advances_generation: when ``rebalance.timeout.ms`` completes the join without the dynamic
            members that did not rejoin, the next generation starts (``completeClassicGroupJoin`` ->
            ``initNextGeneration``, Kafka trunk 1eb7644); without it the members that rejoined are answered with the
            generation the removed members (still consuming) hold.
        rebalance_timeout_answers_new_group: that completion answers the waiting members from the group it has just
            completed (their JoinGroup responses carry the new generation); without it they are answered from the
            group as it was before the timeout -- the generation the coordinator has left, and the removed members too.
        timeout_elects_joined_leader: that completion keeps the old leader only if it rejoined, else elects a member
            that did (``maybeElectNewJoinedLeader``, KAFKA-8220); without it a static leader kept without rejoining
            leads the next generation, though no JoinGroup of its is pending to carry the member list.
        rebalance_timeout_keeps_static: that completion keeps the static members (KIP-345) that did not rejoin
            (``notYetRejoinedMembers`` filtered on ``!isStaticMember()``); without it they are removed like dynamic
            ones.
        append_replication_errors_mapped: the group coordinator translates a NOT_ENOUGH_REPLICAS failure of its append
            to ``__consumer_offsets`` (``min.insync.replicas`` not met) into COORDINATOR_NOT_AVAILABLE before answering
            the JoinGroup, SyncGroup or OffsetCommit that waited for it (``appendGroupMetadataErrorToResponseError`` /
            ``handleOperationException``, Kafka 4.0 trunk 1eb7644; ``storeGroup``/``storeOffsets`` since 0.10.1,
            KAFKA-3590); without it the broker's storage error reaches the consumer, which does not know it and fails.
        offset_fetch_write_failures_remapped: the group coordinator answers a requireStable OffsetFetch whose write
            operation failed with UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS or REQUEST_TIMED_OUT with
            NOT_COORDINATOR (``GroupCoordinatorService.handleOffsetFetchException``, KAFKA-17267, Kafka 3.9); without
            it the error reaches the consumer as itself, and a consumer before 3.9 fails on it.
        offset_fetch_retries_retriable: the consumer's ``OffsetFetchResponseHandler`` rediscovers the coordinator on
            COORDINATOR_NOT_AVAILABLE and retries every retriable error (KAFKA-17279, Kafka 3.9); without it only
            COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR are retried and the rest is fatal.
        leader_checks_assignment_snapshot: the group leader compares the metadata snapshot its assignment was computed
            on (taken when its JoinGroup was answered, ``onLeaderElected``) with the metadata it has once the
            rebalance completes, and rejoins if they differ (``ConsumerCoordinator.rejoinNeededOrPending``, KAFKA-3949,
            Kafka 0.10.1); without it partitions added during a rebalance are never assigned.
        expired_timer_checks_member: a member id's session timer that fires finds the member the group holds under
            that id before removing it (``expireClassicGroupMemberHeartbeat``, Kafka 4.0 trunk 1eb7644; the Scala
            ``onExpireHeartbeat``, KAFKA-7196 / KAFKA-8896): a static member's replaced id, whose timer Kafka 4.0 leaves
            scheduled, expires without effect; without it the coordinator acts on an id it no longer holds and
            rebalances the group.
        join_rebalance_in_progress_retried: a consumer whose JoinGroup is answered REBALANCE_IN_PROGRESS -- a 2.x-3.9
            coordinator's answer when its write of the group metadata times out (``GroupMetadataManager.storeGroup``)
            -- retries it (``AbstractCoordinator.JoinGroupResponseHandler``, KAFKA-10870, Kafka 2.8); without it the
            error is unexpected and raised from ``poll()``.
        pending_sync_expires: ``rebalance.timeout.ms`` after the join barrier lifted, the members whose SyncGroup has
            not arrived are removed and the group rebalances (``expirePendingSync``, KAFKA-12890, Kafka 3.0); without
            it a member that heartbeats but never syncs holds the group in CompletingRebalance for ever.
    """

    check_epoch: bool = True
    check_sequence: bool = True
    duplicate_window: int = 5
    sequence_space: int = KAFKA_SEQUENCE_SPACE
    force_idempotence_off: bool = False
    transaction_version: int = 2
    partition_verification: bool = True
    txn_offset_commit_verification: bool = True
    txn_offset_commit_validates_after_verification: bool = True
    txn_offset_commit_guard_checked: bool = True
    timeout_abort_bumps_epoch: bool = True
    kip_360: bool = True
    send_error_aborts_transaction: bool = True
    complete_after_markers: bool = True
    generation_fencing: bool = True
    offsets_in_transaction: bool = True
    seek_after_abort: bool = True
    connect_reread_after_producer_init: bool = True
    connect_transactional_leader: bool = True
    connect_offsets_in_transaction: bool = True
    connect_zombie_fencing: bool = True
    ongoing_txn_check_epoch: bool = True
    marker_retry_same_epoch: bool = True
    marker_retriable_errors_retried: bool = True
    marker_cancel_checks_transaction: bool = True
    marker_storage_error_retried: bool = True
    txn_reload_replaces_cache: bool = True
    failed_fence_keeps_bump: bool = True
    end_txn_concurrent_in_prepare: bool = True
    end_txn_answers_completed_ids: bool = True
    commit_retry_after_abort_fenced: bool = True
    tv2_empty_abort_in_table: bool = True
    single_fence_bump: bool = True
    fence_rotates_exhausted_producer_id: bool = True
    transit_records_previous_producer_id: bool = True
    authorize_transactional_id: bool = True
    authorize_transactional_produce: bool = True
    authorize_marker_cluster_action: bool = True
    authorize_add_partitions_topic: bool = True
    reject_client_control_records: bool = True
    authorize_offsets_group: bool = True
    authorization_check_skipped: str = ""
    apply_acl_changes: bool = True
    connect_failed_task_stays_failed: bool = True
    connect_config_update_fails_fencing: bool = True
    connect_tombstone_to_global_first: bool = True
    connect_abort_commits_offsets: bool = True
    connect_stopping_task_skips_producer: bool = True
    connect_failed_task_skips_final_commit: bool = True
    connect_running_task_commits_on_stop: bool = True
    connect_connector_boundary_stop_keeps_batch_open: bool = True
    connect_fencing_conflict_on_new_generation: bool = True
    txn_offset_commit_starts_transaction: bool = True
    abort_keeps_queued_add_offsets: bool = True
    tv2_offsets_without_add_offsets: bool = True
    connect_config_write_failure_answers_fencing: bool = False
    connect_task_configs_effective_at_commit: bool = True
    connect_ignore_deleted_connector_commits: bool = True
    connect_commit_only_flushed_offsets: bool = True
    connect_tombstone_drops_task_configs: bool = True
    connect_fencing_refreshes_first: bool = False
    connect_ignore_empty_abort: bool = True
    connect_own_offsets_first: bool = True
    connect_offsets_skip_foreign_keys: bool = True
    connect_plain_send_failure_fails_task: bool = True
    connect_commit_error_fails_task: bool = True
    connect_fence_recorded_task_ids: bool = True
    connect_plain_config_write_acknowledged: bool = True
    producer_expiry_keeps_open_transactions: bool = True
    defer_bump_until_resolved: bool = False
    resolve_by_last_acked_sequence: bool = True
    bump_on_next_sequence_refusal: bool = True
    retry_by_unresolved_sequence: bool = True
    mark_unresolved_only_in_retry: bool = True
    retry_disconnected_batches: bool = True
    expired_requests_hold_in_flight: bool = True
    sender_within_max_in_flight: bool = True
    held_requests_count_in_flight: bool = True
    failed_batch_bump_outside_completion: bool = True
    txn_failed_batch_adjusts_sequences: bool = True
    txn_resolve_waits_for_inflight: bool = True
    retried_batch_keeps_transaction: bool = True
    txn_resolve_sequences: bool = True
    add_partitions_unexpected_abortable: bool = True
    late_success_updates_last_acked: bool = True
    acked_sequence_only_raised: bool = True
    producer_knows_storage_error: bool = True
    retriable_produce_error_keeps_epoch: bool = True
    produce_retries_only_retriable: bool = True
    failed_batch_makes_transaction_abortable: bool = True
    retry_drained_in_turn: bool = True
    empty_abort_rotates_producer_id: bool = True
    init_pid_retry_by_last_epoch: bool = True
    complete_written_to_log: bool = True
    producer_id_block_advances: bool = True
    offset_commit_generation_check: bool = True
    offset_commit_stale_generation_check: bool = True
    load_keeps_pending_offsets: bool = True
    materialize_in_log_order: bool = True
    offset_commit_waits_for_log: bool = True
    cooperative_revoke_before_reassign: bool = True
    offset_fetch_require_stable: bool = True
    pending_offsets_wait_for_marker: bool = True
    txn_timeout_fires_while_clients_wait: bool = True
    acks_all_waits_for_replication: bool = True
    truncation_rebuilds_producer_state: bool = True
    leader_move_completes_purgatory: bool = True
    producer_state_survives_log_start_offset: bool = True
    follower_tracks_transactions: bool = True
    aborted_txn_lso_counts_open_transactions: bool = True
    delayed_fetch_keeps_isolation: bool = True
    delayed_fetch_carries_aborted: bool = True
    read_uncommitted_bounded_by_high_watermark: bool = True
    append_failure_resets_pending: bool = True
    complete_retry_keeps_pending: bool = True
    timeout_abort_skips_pending: bool = True
    verification_guard_checked: bool = True
    verification_guard_fresh: bool = True
    marker_clears_verification: bool = True
    marker_keeps_next_transaction_verification: bool = True
    expiry_failure_resets_pending: bool = True
    append_callback_checks_coordinator_epoch: bool = True
    log_restores_last_producer_epoch: bool = True
    complete_not_coordinator_skipped: bool = True
    loading_answers_load_in_progress: bool = True
    first_sequence_zero_on_empty_log: bool = True
    join_unchanged_answers_current_generation: bool = True
    rebalance_in_progress_rejoins: bool = True
    commit_on_revoke: bool = True
    offset_fetch_on_assign: bool = True
    load_restores_subscriptions: bool = True
    static_member_fencing: bool = True
    static_member_stays_on_close: bool = True
    join_prepare_revokes_after_fenced_commit: bool = True
    join_prepare_pauses_partitions: bool = True
    join_prepare_commit_resets_identity: bool = True
    sync_rebalance_keeps_generation: bool = True
    static_rejoin_keeps_generation: bool = True
    static_rejoin_completing_rebalances: bool = True
    fenced_member_loses_partitions: bool = True
    coordinator_change_keeps_membership: bool = True
    retriable_join_error_keeps_member: bool = True
    failed_sync_requests_rejoin: bool = True
    rebalance_in_progress_keeps_generation: bool = True
    heartbeat_response_checks_generation: bool = True
    join_updates_member_metadata: bool = True
    sync_response_checks_generation: bool = True
    commit_response_checks_generation: bool = True
    pending_member_cleared_on_join: bool = True
    pending_member_kept_on_other_join: bool = True
    pending_members_expire: bool = True
    rebalance_timeout_advances_generation: bool = True
    rebalance_timeout_answers_new_group: bool = True
    rebalance_timeout_keeps_static: bool = True
    pending_sync_expires: bool = True
    join_rebalance_in_progress_retried: bool = True
    append_replication_errors_mapped: bool = True
    expired_timer_checks_member: bool = True
    leader_checks_assignment_snapshot: bool = True
    offset_fetch_write_failures_remapped: bool = True
    offset_fetch_retries_retriable: bool = True
    timeout_elects_joined_leader: bool = True
    join_prepare_retries_commit: bool = True
    close_commit_retried: bool = True
    standalone_commit_in_empty_group: bool = True
    expiry_deletes_group: bool = True
    offset_fetch_checks_loading: bool = True
    offset_fetch_honours_require_stable: bool = True

    def to_json(self) -> dict[str, Any]:
        """The switches as a JSON object."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Variant:
    """A named protocol variant.

    Attributes:
        name: the switch name users pass to ``--variant``.
        description: what changes, in protocol terms.
        flags: the switches.
        weakened: ``True`` if a rule of the real protocol is removed.
        breaks: invariants expected to catch it (weakened variants only).
        scenarios: scenarios in which it is expected to be caught -- in each of them (`keos mutants` runs them all).
        bug: the historical bug or rule it reproduces.
    """

    name: str
    description: str
    flags: ProtocolFlags = field(default_factory=ProtocolFlags)
    weakened: bool = False
    breaks: tuple[str, ...] = ()
    scenarios: tuple[str, ...] = ()
    bug: str = ""


_REAL = ProtocolFlags()

VARIANTS: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant(
            name="kafka",
            description="The protocol as Kafka implements it (idempotence per KIP-98/KIP-360).",
            flags=_REAL,
        ),
        Variant(
            name="no_idempotence",
            description="Producers run with enable.idempotence=false: no producer id, no sequences.",
            flags=replace(_REAL, force_idempotence_off=True),
            weakened=True,
            breaks=("no_duplicate_append", "no_duplicate_within_epoch"),
            scenarios=("idempotence_retry",),
            bug="at-least-once delivery before KIP-98: a retried batch is appended twice",
        ),
        Variant(
            name="broker_accepts_any_sequence",
            description="The partition leader skips the sequence check (ProducerAppendInfo.checkSequence, with "
            "its first-sequence rule for a partition that never held a record).",
            flags=replace(_REAL, check_sequence=False, first_sequence_zero_on_empty_log=False),
            weakened=True,
            breaks=("per_partition_order", "sequence_table_consistent", "produce_answer_per_kafka"),
            scenarios=("idempotence_retry",),
            bug="gaps accepted: a batch whose predecessor was lost is appended, then the retry lands behind it",
        ),
        Variant(
            name="broker_skips_epoch_check",
            description="The partition leader accepts batches with an epoch below the stored one.",
            flags=replace(_REAL, check_epoch=False),
            weakened=True,
            breaks=(
                "per_partition_order",
                "sequence_table_consistent",
                "produce_answer_per_kafka",
                "txn_produce_answer_per_kafka",
                "no_hanging_transaction",
            ),
            scenarios=("idempotence_epoch_bump", "txn_tv1_zombie"),
            bug="a batch from before a KIP-360 epoch bump rolls the producer state back; a fenced zombie's "
            "transactional batch is appended and opens a transaction no coordinator will end "
            "(INVALID_PRODUCER_EPOCH missing)",
        ),
        Variant(
            name="acks_all_before_replication",
            description="With separate replication, the leader answers acks=all right after its local append, "
            "before the followers have the batch.",
            flags=replace(_REAL, acks_all_waits_for_replication=False),
            weakened=True,
            breaks=("no_acked_loss",),
            scenarios=("reach_idempotence_replication",),
            bug="acks=all acknowledged before the in-sync replicas have the batch: a failover loses an "
            "acknowledged record (the guarantee idempotence's acks=all requirement rests on, KIP-98)",
        ),
        Variant(
            name="producer_state_survives_truncation",
            description="A new leader keeps the old leader's producer state instead of rebuilding it from the "
            "log it kept.",
            flags=replace(_REAL, truncation_rebuilds_producer_state=False),
            weakened=True,
            breaks=("sequence_table_consistent", "no_acked_loss", "produce_answer_per_kafka"),
            scenarios=("reach_idempotence_replication",),
            bug="producer state not truncated with the log (ProducerStateManager.truncateAndReload): the cache "
            "names batches the new leader does not have, so their retries are acknowledged as duplicates",
        ),
        Variant(
            name="purgatory_survives_leader_move",
            description="A broker that stops leading a partition keeps the produce requests parked in its purgatory "
            "instead of answering them NOT_LEADER_OR_FOLLOWER; a later high watermark completes them NONE.",
            flags=replace(_REAL, leader_move_completes_purgatory=False),
            weakened=True,
            breaks=("no_acked_loss", "sends_complete"),
            scenarios=("reach_idempotence_leader_move",),
            bug="KAFKA-2960 (fixed in 0.10.0, ReplicaManager.makeFollowers completes the delayed produces of the "
            "partitions it moves): a DelayedProduce outlived its broker's leadership and, once the broker led the "
            "partition again, was answered NONE for a batch truncated away -- an acknowledged record lost",
        ),
        Variant(
            name="no_kafka_7190_fix",
            description="When the log start offset advances, the partition leader forgets every producer whose last "
            "batch lies below it (ProducerStateManager.truncateHead), idle or not.",
            flags=replace(_REAL, producer_state_survives_log_start_offset=False),
            weakened=True,
            breaks=("sequence_table_consistent", "no_duplicate_append", "no_duplicate_within_epoch"),
            scenarios=("idempotence_delete_records",),
            bug="KAFKA-7190 (fixed in 2.5 by PR #7388, KIP-360: kafka/log/Log.scala and "
            "kafka/log/ProducerStateManager.scala stop calling truncateHead when the log start offset moves): "
            "retention or DeleteRecords removed the state of a producer still writing, so the retry of a batch "
            "that was written (its answer lost) and then deleted met a leader that did not know the producer id "
            "and appended it again",
        ),
        Variant(
            name="follower_forgets_transactions",
            description="A follower elected partition leader knows only the idempotent producer state of the log "
            "it replicated: no open transaction, no aborted range, no marker's coordinator epoch.",
            flags=replace(_REAL, follower_tracks_transactions=False),
            weakened=True,
            breaks=("lso_per_kafka", "no_aborted_read"),
            scenarios=("txn_partition_leader_election",),
            bug="a new leader's producer state without the transactional updates of ProducerAppendInfo (origin "
            "REPLICATION): the last stable offset jumps past open transactions and read_committed fetches lose "
            "the aborted ranges",
        ),
        Variant(
            name="aborted_txn_lso_ignores_open_transactions",
            description="An aborted transaction's index entry records the marker's offset + 1 as the last stable "
            "offset, ignoring the transactions of other producers still open on the partition.",
            flags=replace(_REAL, aborted_txn_lso_counts_open_transactions=False),
            weakened=True,
            breaks=("read_committed_from_any_offset",),
            scenarios=("reach_txn_interleaved_aborts",),
            bug="a wrong lastStableOffset in an AbortedTxn (LogSegment.updateTxnIndex): the index scan of a "
            "read_committed fetch (TransactionIndex.collectAbortedTxns) stops before the entry of an earlier-opened "
            "transaction aborted later, and the fetch returns that transaction's records",
        ),
        Variant(
            name="no_kafka_5355_fix",
            description="A read_committed Fetch completed from the purgatory (DelayedFetch) reads the log "
            "read_uncommitted: up to the high watermark, with no aborted transactions (Kafka 0.11.0 before the fix).",
            flags=replace(_REAL, delayed_fetch_keeps_isolation=False),
            weakened=True,
            breaks=("read_committed_consumer_reads_committed",),
            scenarios=("txn_read_committed_long_poll",),
            bug="KAFKA-5355 (PR #3221, fix 6a5a908, 0.11.0; core/src/main/scala/kafka/server/DelayedFetch.scala): "
            "DelayedFetch.onComplete called ReplicaManager.readFromLog without the request's isolationLevel, so a "
            "read_committed consumer whose fetch had waited in the purgatory got every batch below the high "
            "watermark -- records of transactions still open, later aborted",
        ),
        Variant(
            name="no_kafka_9196_fix",
            description="A read_uncommitted Fetch reads up to the log end offset instead of the high watermark: a "
            "consumer reads records no follower has yet (Kafka 2.0-2.3 after a segment roll, before the fix).",
            flags=replace(_REAL, read_uncommitted_bounded_by_high_watermark=False),
            weakened=True,
            breaks=("consumed_records_durable",),
            scenarios=("idempotence_consumer_failover",),
            bug="KAFKA-9196 (PR #7695, fix 7eafea0, 2.4; core/src/main/scala/kafka/log/Log.scala "
            "updateLogEndOffset): after a segment roll the high watermark's LogOffsetMetadata still named the old "
            "segment while the high watermark equalled the log end offset, and a read bounded by that metadata "
            "returned batches appended after it -- above the high watermark -- which a leader failover then "
            "truncated: consumers had read records the partition no longer holds",
        ),
        Variant(
            name="no_kafka_5376_fix",
            description="A Fetch completed from the purgatory (DelayedFetch) answers the read's batches without "
            "its aborted transactions (Kafka 0.11.0 before the fix).",
            flags=replace(_REAL, delayed_fetch_carries_aborted=False),
            weakened=True,
            breaks=("read_committed_consumer_reads_committed",),
            scenarios=("txn_read_committed_long_poll",),
            bug="KAFKA-5376 (PR #3239, fix 2bb48a4, 0.11.0; DelayedFetch.scala, ReplicaManager.scala): "
            "DelayedFetch.onComplete built FetchPartitionData without result.info.abortedTransactions (the "
            "parameter defaulted to None), so a read_committed consumer whose fetch had waited in the purgatory "
            "could not drop the aborted batches of its range and returned aborted records",
        ),
        Variant(
            name="no_kafka_15591_fix",
            description="The partition leader appends a batch of a producer it has no state for at any first "
            "sequence, also on a partition that never held a record (Kafka 2.5 to 4.4).",
            flags=replace(_REAL, first_sequence_zero_on_empty_log=False),
            weakened=True,
            breaks=("retried_batch_not_overtaken", "produce_answer_per_kafka"),
            scenarios=("idempotence_not_leader",),
            bug="KAFKA-15591 (fixed by PR #23234, Kafka 4.5; also KAFKA-14312, KAFKA-19880): the first request to "
            "a new partition is answered NOT_LEADER_OR_FOLLOWER, the next one in flight is appended, and every "
            "retry of the first is answered OUT_OF_ORDER_SEQUENCE_NUMBER until the producer gives its records up",
        ),
        Variant(
            name="small_duplicate_window",
            description="The leader caches one batch per producer, fewer than the five the client may have in flight.",
            flags=replace(_REAL, duplicate_window=1),
            weakened=True,
            breaks=("no_duplicate_append", "produce_answer_per_kafka"),
            scenarios=("idempotence_retry",),
            bug="KAFKA-5494: a cache smaller than max.in.flight turns a retry into OUT_OF_ORDER_SEQUENCE_NUMBER, "
            "the epoch bump re-sequences the next batch and it is written twice",
        ),
        Variant(
            name="kafka_14034_fix",
            description="The idempotent producer as Kafka, plus the fix proposed for KAFKA-14034: an "
            "OUT_OF_ORDER_SEQUENCE_NUMBER after the last retry leaves the sequence unresolved, so the epoch "
            "bump waits until the partition's earlier batches complete instead of re-stamping them.",
            flags=replace(_REAL, defer_bump_until_resolved=True),
        ),
        Variant(
            name="empty_abort_fails_task",
            description="Connect: a connector's abortTransaction() with no record in the current transaction makes "
            "the exactly-once source task call producer.abortTransaction() with no transaction open; the producer "
            "throws IllegalStateException (READY -> ABORTING_TRANSACTION) and the task fails.",
            flags=replace(_REAL, connect_ignore_empty_abort=False),
            weakened=True,
            breaks=("healthy_task_never_failed",),
            scenarios=("connect_connector_boundaries",),
            bug="KAFKA-14799 (apache/kafka PR #13379): source tasks fail if the connector requests an abort of an "
            "empty transaction",
        ),
        Variant(
            name="global_offsets_first",
            description="Connect: the combined offsets view of a connector with its own offsets topic prefers the "
            "worker's global offsets topic, whose copy of the offsets is a secondary write Kafka only logs when it "
            "fails: a task resuming after such a failure restarts from an older offset and emits records twice.",
            flags=replace(_REAL, connect_own_offsets_first=False),
            weakened=True,
            breaks=("exactly_once_source_delivery",),
            scenarios=("connect_offset_copy_failure",),
        ),
        Variant(
            name="offsets_reader_stops_at_foreign_key",
            description="Connect: a record of the offsets topic whose key is not Connect's [connector, partition] JSON "
            "(another tool, cluster or connector wrote it) makes the offsets reader drop the rest of its fetch: a "
            "task that starts afterwards resumes from an offset older than its last commit and emits records twice.",
            flags=replace(_REAL, connect_offsets_skip_foreign_keys=False),
            weakened=True,
            breaks=("exactly_once_source_delivery", "offsets_committed_with_records"),
            scenarios=("connect_foreign_offset_record",),
            bug="KAFKA-15800 (989618a56e3, PR #14718, Kafka 3.7; OffsetUtils.processPartitionKey, "
            "KafkaOffsetBackingStore, KafkaBasedLog.poll): the DataException of an unparsable offsets-topic key was "
            "a KafkaException KafkaBasedLog.poll only logged, so the rest of that poll's records never reached the "
            "offset store",
        ),
        Variant(
            name="plain_send_failure_ignored",
            description="Connect: an at-least-once source task whose send fails only logs the error and counts the "
            "record as sent: it goes on, and its next offset flush commits the offset of a record that was never "
            "written -- the record is lost.",
            flags=replace(_REAL, connect_plain_send_failure_fails_task=False),
            weakened=True,
            breaks=("exactly_once_source_delivery", "offsets_committed_with_records"),
            scenarios=("connect_at_least_once_send_failure",),
            bug="KAFKA-8586 (237e83dea08, PR #6993, Kafka 2.4; WorkerSourceTask's send callback): a failed send was "
            "logged, recordSent() removed it from the outstanding messages and the task kept polling, so the offset "
            "commit that followed covered the lost record",
        ),
        Variant(
            name="commit_error_ignored",
            description="Connect: an exactly-once source task ignores an error of producer.commitTransaction() "
            "after its offsets were flushed into the transaction, and goes on as if the transaction had "
            "committed: it reports the records and offsets committed (commitRecord, commit) although the EndTxn "
            "never reached the coordinator.",
            flags=replace(_REAL, connect_commit_error_fails_task=False),
            weakened=True,
            breaks=("task_acknowledges_only_committed_records",),
            scenarios=("connect_send_failure",),
            bug="ExactlyOnceWorkerSourceTask.commitTransaction must fail the task when commitTransaction throws "
            "(flushError, then the task fails): the connector would acknowledge source records whose transaction "
            "is still open and may be aborted",
        ),
        Variant(
            name="fencing_round_fences_task_count",
            description="Connect: the leader's zombie-fencing round fences the transactional ids of the current "
            "task count instead of the latest task-count record's, so after a reconfiguration that shrinks the "
            "connector the old generation's tasks above the new count are never fenced.",
            flags=replace(_REAL, connect_fence_recorded_task_ids=False),
            weakened=True,
            breaks=("task_lifecycle_legal",),
            scenarios=("connect_connector_deleted_refresh_first",),
            bug="DistributedHerder.ZombieFencing fences tasksToFence = taskCountRecord task ids (KIP-618 §Zombie "
            "fencing): fencing only the new count leaves zombies of the older, larger generation running",
        ),
        Variant(
            name="plain_config_write_failure_unseen",
            description="Connect: a leader without a transactional config-topic producer (exactly.once.source.support "
            "disabled) sends its config-topic records fire-and-forget: when the commit record of its task configs is "
            "lost, putTaskConfigs returns all the same and the herder goes on as if the connector were reconfigured, "
            "so nothing retries it and the new task configs never take effect.",
            flags=replace(_REAL, connect_plain_config_write_acknowledged=False),
            weakened=True,
            breaks=("acknowledged_config_writes_durable",),
            scenarios=("connect_plain_leader_write_failure",),
            bug="KAFKA-14455 (apache/kafka PR #12984, Kafka 3.5; KafkaConfigBackingStore.sendPrivileged, "
            "putTaskConfigs, putConnectorConfig): Kafka Connect create and update REST APIs did not surface failures "
            "while writing to the config topic",
        ),
        Variant(
            name="fencing_refreshes_first",
            description="Kafka Connect as Kafka, except that the leader's zombie-fencing handler reads the config "
            "topic to the end before it checks that the connector exists (as modifyConnectorOffsetsChecks does): a "
            "connector deleted in the leader's current tick is answered 404 instead of getting a round.",
            flags=replace(_REAL, connect_fencing_refreshes_first=True),
        ),
        Variant(
            name="retry_refused_next_sequence_unchanged",
            description="The idempotent producer retries a batch refused OUT_OF_ORDER_SEQUENCE_NUMBER as the next "
            "sequence after the last acknowledged one without requesting an epoch bump: it resends it unchanged.",
            flags=replace(_REAL, bump_on_next_sequence_refusal=False),
            weakened=True,
            breaks=("out_of_order_failure_requests_bump",),
            scenarios=("idempotence_expired_not_leader",),
            bug="a producer whose canRetry forgets requestIdempotentEpochBumpForPartition for the batch right after "
            "the last acknowledged sequence (TransactionManager.canRetry, KIP-360): the gap the leader saw stays, "
            "the batch is refused on every retry and fails with its retries spent",
        ),
        Variant(
            name="unresolved_sequence_ignored_on_retry",
            description="The idempotent producer judges an OUT_OF_ORDER_SEQUENCE_NUMBER refusal on a partition "
            "with an unresolved sequence by its last acknowledged sequence alone: the batch right after an "
            "expired one is retried unchanged, without an epoch bump.",
            flags=replace(_REAL, retry_by_unresolved_sequence=False),
            weakened=True,
            breaks=("out_of_order_failure_requests_bump",),
            scenarios=("idempotence_retry_expiry",),
            bug="KAFKA-7848 / KAFKA-8710: a producer whose canRetry ignores hasUnresolvedSequence / "
            "isNextSequenceForUnresolvedPartition (TransactionManager, before Kafka 2.5): after a batch expired, the "
            "next one is refused on every retry and fails, where Kafka bumps the epoch and delivers it",
        ),
        Variant(
            name="unresolved_on_first_attempt_expiry",
            description="The idempotent producer marks its partition's sequence unresolved for every sent batch "
            "that expires, also on its first attempt (Kafka: only a batch in retry, ProducerBatch.inRetry).",
            flags=replace(_REAL, mark_unresolved_only_in_retry=False),
            weakened=True,
            breaks=("failed_batch_handled_per_kafka",),
            scenarios=("idempotence_batches",),
            bug="a Sender that calls markSequenceUnresolved for every expired batch (Sender.sendProducerData checks "
            "expiredBatch.inRetry()): the partition stops draining and resolves by a bump Kafka never makes",
        ),
        Variant(
            name="disconnect_fails_batches",
            description="The producer fails every batch of a request cancelled by a closed connection (a reset or "
            "request.timeout.ms) instead of completing it with the retriable NETWORK_EXCEPTION / REQUEST_TIMED_OUT.",
            flags=replace(_REAL, retry_disconnected_batches=False),
            weakened=True,
            breaks=("failed_sends_explained",),
            scenarios=("idempotence_batches",),
            bug="a Sender whose handleProduceResponse drops wasDisconnected()/wasTimedOut() requests' batches "
            "instead of completing them with NETWORK_EXCEPTION/REQUEST_TIMED_OUT (retriable, Sender.canRetry): "
            "records lost to a connection reset with retries left",
        ),
        Variant(
            name="held_request_frees_in_flight",
            description="A transactional producer's request held back by the partition leader for verification "
            "(KIP-890) no longer counts against max.in.flight.requests.per.connection once its batch expired.",
            flags=replace(_REAL, held_requests_count_in_flight=False),
            weakened=True,
            breaks=("requests_in_flight_per_kafka",),
            scenarios=("txn_tv1_verification_aba",),
            bug="a producer whose in-flight accounting sees only requests on the wire: a batch drained while the "
            "request of an expired batch is still held for verification, two requests in flight with "
            "max.in.flight.requests.per.connection=1",
        ),
        Variant(
            name="txn_sender_one_request_too_many",
            description="The transactional producer's Sender admits one produce request more per connection than "
            "max.in.flight.requests.per.connection (an off-by-one in NetworkClient.canSendMore).",
            flags=replace(_REAL, sender_within_max_in_flight=False),
            weakened=True,
            breaks=("requests_in_flight_per_kafka",),
            scenarios=("txn_kafka_6119_timeout_zombie",),
            bug="a Sender/RecordAccumulator.drain that does not stop at max.in.flight.requests.per.connection for a "
            "transactional producer: a batch drained while the configured number of requests is outstanding (with "
            "max.in.flight=1 the ordering guarantee the setting promises is gone)",
        ),
        Variant(
            name="expired_request_frees_in_flight",
            description="A request whose batch expired while in flight no longer counts against "
            "max.in.flight.requests.per.connection, although NetworkClient keeps it in flight until it is answered.",
            flags=replace(_REAL, expired_requests_hold_in_flight=False),
            weakened=True,
            breaks=("requests_in_flight_per_kafka",),
            scenarios=("idempotence_batches",),
            bug="a producer whose in-flight accounting follows its batches, not NetworkClient.InFlightRequests: a "
            "batch drained behind an expired one's request still on the wire",
        ),
        Variant(
            name="failed_batch_bumps_while_committing",
            description="A transactional producer whose batch fails while COMMITTING_TRANSACTION sets "
            "epochBumpRequired (Kafka: maybeTransitionToErrorState checks canBumpEpoch() && !isCompleting()).",
            flags=replace(_REAL, transaction_version=1, failed_batch_bump_outside_completion=False),
            weakened=True,
            breaks=("client_reacts_as_kafka",),
            scenarios=("txn_eos_tv1_request_timeout",),
            bug="a TransactionManager that requests the KIP-360 epoch bump for a batch failing during the commit "
            "(maybeTransitionToErrorState without !isCompleting())",
        ),
        Variant(
            name="kafka_5494_failed_sequences_kept",
            description="A transactional producer whose batch fails with retries left keeps the sequences of the "
            "partition's later batches (Kafka since KAFKA-5494, max.in.flight > 1 with idempotence: "
            "TxnPartitionEntry.adjustSequencesDueToFailedBatch pulls them down over the failed batch, so the "
            "leader sees no gap).",
            flags=replace(_REAL, transaction_version=1, txn_failed_batch_adjusts_sequences=False),
            weakened=True,
            breaks=("client_reacts_as_kafka",),
            scenarios=("reach_txn_tv1_inflight",),
            bug="a TransactionManager without adjustSequencesDueToFailedBatch (KAFKA-5494, Kafka 1.0): the batches "
            "behind a failed one keep sequences past a gap and are refused OUT_OF_ORDER_SEQUENCE_NUMBER",
        ),
        Variant(
            name="unresolved_settled_before_inflight_answered",
            description="A transactional producer settles an expired batch's unresolved sequence while later "
            "batches of the partition are still in flight (Kafka's maybeResolveSequences waits until "
            "hasInflightBatches is false: a later batch's success proves the expired one written).",
            flags=replace(_REAL, txn_resolve_waits_for_inflight=False),
            weakened=True,
            breaks=("client_reacts_as_kafka",),
            scenarios=("reach_txn_tv2_inflight",),
            bug="a TransactionManager whose maybeResolveSequences skips the hasInflightBatches test: an expired "
            "batch's sequence is declared lost (epoch bump, abortable) before the batch behind it is answered",
        ),
        Variant(
            name="retried_batch_aborts_transaction",
            description="A transactional producer whose connection closes with batches in flight (a reset, "
            "request.timeout.ms) makes its transaction abortable although every batch is re-enqueued for a retry "
            "(Kafka: handleFailedBatch runs only for a batch the Sender gives up).",
            flags=replace(_REAL, retried_batch_keeps_transaction=False),
            weakened=True,
            breaks=("batch_failures_explained",),
            scenarios=("reach_txn_tv1_faulty",),
            bug="a producer that aborts its transaction for a transient disconnect or request timeout: "
            "TransactionManager.handleFailedBatch called for a retriable, retried batch",
        ),
        Variant(
            name="txn_unresolved_reset_at_end",
            description="A transactional producer never runs maybeResolveSequences: a partition whose expired "
            "batch left its sequence unresolved ends the transaction unresolved and restarts after its last "
            "acknowledged sequence, without the abortable error and epoch bump (or, without KIP-360, the fatal "
            "error) Kafka's client takes.",
            flags=replace(_REAL, txn_resolve_sequences=False),
            weakened=True,
            breaks=("client_reacts_as_kafka",),
            scenarios=("reach_txn_pre_kip_360_faulty",),
            bug="a TransactionManager whose maybeResolveSequences skips the transactional producer (or whose "
            "completeTransaction resets the unresolved partitions): a batch that may be in the log is forgotten",
        ),
        Variant(
            name="add_partitions_unexpected_error_fatal",
            description="transaction.version 1: the transactional producer treats an AddPartitionsToTxn error its "
            "handler does not name "
            "(UNKNOWN_SERVER_ERROR) as fatal; Kafka's AddPartitionsToTxnHandler makes it an abortable partition "
            "error.",
            flags=replace(_REAL, transaction_version=1, add_partitions_unexpected_abortable=False),
            weakened=True,
            breaks=("client_reacts_as_kafka",),
            scenarios=("txn_tv1_pending_append_too_large",),
            bug="plausible (the model's own rule before session 22): a healthy producer whose AddPartitionsToTxn "
            "hits a coordinator-side error it cannot fix is killed instead of aborting the transaction",
        ),
        Variant(
            name="late_success_ignored",
            description="The idempotent producer ignores the success answer to a batch that expired while its "
            "request was in flight (Kafka: completeBatch still raises the last acknowledged sequence).",
            flags=replace(_REAL, late_success_updates_last_acked=False),
            weakened=True,
            breaks=("failed_batch_handled_per_kafka",),
            scenarios=("idempotence_retry_expiry",),
            bug="a Sender that drops the answer of a request whose batch is already done (finalState FAILED) "
            "before TransactionManager.handleCompletedBatch: an expired batch that was written cannot resolve its "
            "partition's sequence, so the producer bumps its epoch needlessly",
        ),
        Variant(
            name="acked_sequence_lowered",
            description="The idempotent producer sets its partition's last acknowledged sequence from every success "
            "answer, so an answer that arrives after a later batch's lowers it (Kafka only raises it).",
            flags=replace(_REAL, acked_sequence_only_raised=False),
            weakened=True,
            breaks=("failed_batch_handled_per_kafka",),
            scenarios=("idempotence_batches",),
            bug="a TransactionManager that overwrites lastAckedSequence instead of maybeUpdateLastAckedSequence: "
            "after a reordered or duplicated answer canRetry and maybeResolveSequences judge from a stale sequence",
        ),
        Variant(
            name="storage_error_unknown_to_client",
            description="The producer does not know KAFKA_STORAGE_ERROR (a Produce v3 client the broker answers "
            "code 56 untranslated): it reads the refusal of a partition whose log directory is offline as the "
            "non-retriable UnknownServerException and fails the batch instead of refreshing its metadata and "
            "retrying it.",
            flags=replace(_REAL, producer_knows_storage_error=False),
            weakened=True,
            breaks=("failed_sends_explained", "no_duplicate_append", "batch_failures_explained"),
            scenarios=("reach_idempotence_storage_error", "txn_produce_errors"),
            bug="KAFKA-4763 / KIP-112 (fc93fb4b611, Kafka 1.0; clients/.../requests/ProduceResponse.java, "
            "ProduceRequest.json 'version 4 ... must be prepared to handle a KAFKA_STORAGE_ERROR'): a client that "
            "does not recognise the code turns it into UnknownServerException, which is not retriable, so the "
            "broker must answer NOT_LEADER_FOR_PARTITION to Produce v3 and older; without that translation a disk "
            "failure on the leader fails sends that a retry would deliver (and, transactional, aborts the "
            "transaction)",
        ),
        Variant(
            name="retriable_error_bumps_epoch",
            description="The idempotent producer answers every retriable produce error like the refusal of its "
            "next sequence: it requests a KIP-360 epoch bump that re-stamps the batch from sequence 0 before the "
            "retry, so a batch the leader appended before answering late (REQUEST_TIMED_OUT, "
            "NOT_ENOUGH_REPLICAS_AFTER_APPEND) is appended a second time at the new epoch.",
            flags=replace(_REAL, retriable_produce_error_keeps_epoch=False),
            weakened=True,
            breaks=("no_duplicate_append", "per_partition_order", "epoch_bump_needed"),
            scenarios=("reach_idempotence_storage_error",),
            bug="librdkafka #4953 (2025, 'Sporadic message duplication during leader transition with idempotent "
            "producer': an epoch bump on a retriable error whose batch may be persisted resends it as new) and "
            "the Java client's KAFKA-14034 (PR #13796): the sequence of a batch whose outcome is unknown is reset "
            "under it; Kafka's Sender re-enqueues a RetriableException's batch with its epoch and sequence "
            "(Sender.completeBatch -> reenqueueBatch, TransactionManager.canRetry, trunk 1eb7644349cb)",
        ),
        Variant(
            name="failed_batch_leaves_transaction",
            description="A transactional batch the Sender gives up (retries spent on a retriable leader error) "
            "fails its send but leaves the transaction as it was: the application's commit goes through without "
            "the record (Kafka: TransactionManager.handleFailedBatch makes the transaction abortable).",
            flags=replace(_REAL, failed_batch_makes_transaction_abortable=False),
            weakened=True,
            breaks=("client_reacts_as_kafka", "healthy_producer_not_failed", "exactly_once_processing"),
            scenarios=("txn_produce_errors", "txn_eos_produce_errors"),
            bug="KAFKA-5385 (PR #3252, Kafka 0.11.0; clients/.../producer/internals/Sender.java, "
            "RecordAccumulator.java): batches expired in the accumulator completed with producerBatch.done instead "
            "of Sender.failBatch, so the TransactionManager never moved to ABORTABLE_ERROR and commits went through "
            "although a produce had failed; here the batch a produce error made the Sender give up",
        ),
        Variant(
            name="produce_retries_every_error",
            description="The producer retries a batch whatever error the leader answered while retries are left: "
            "a fenced, abortable or refused batch (INVALID_PRODUCER_EPOCH, INVALID_TXN_STATE, TRANSACTION_ABORTABLE) "
            "is sent again instead of failing.",
            flags=replace(_REAL, produce_retries_only_retriable=False),
            weakened=True,
            breaks=("batch_failures_explained",),
            scenarios=("txn_coordinator_faults",),
            bug="the old Scala producer (kafka.producer.async.DefaultEventHandler, removed by KAFKA-6921 in Kafka "
            "2.0, 7132a85fc39) resent every partition whose ProduceResponse status was not NONE, whatever the "
            "error, until message.send.max.retries ran out; the Java Sender retries only a RetriableException "
            "(Sender.canRetry, trunk 1eb7644349cb) -- here a transactional batch the verification refused "
            "INVALID_TXN_STATE is sent again instead of making the transaction abortable",
        ),
        Variant(
            name="retry_drained_out_of_turn",
            description="The idempotent producer resends a retried batch as soon as it is re-enqueued, ahead of an "
            "earlier batch of its partition still being retried.",
            flags=replace(_REAL, retry_drained_in_turn=False),
            weakened=True,
            breaks=("batch_stamped_per_kafka",),
            scenarios=("idempotence_batches",),
            bug="a RecordAccumulator that drains a retry without waiting for firstInFlightSequence "
            "(shouldStopDrainBatchesForPartition): the later batch reaches the leader before the gap is filled and is "
            "refused OUT_OF_ORDER_SEQUENCE_NUMBER, spending its retries",
        ),
        Variant(
            name="bump_on_every_expired_batch",
            description="The idempotent producer bumps its epoch for every batch that expired after it was sent, "
            "even when a later batch of the partition was acknowledged.",
            flags=replace(_REAL, resolve_by_last_acked_sequence=False),
            weakened=True,
            breaks=("epoch_bump_needed",),
            scenarios=("idempotence_retry_expiry",),
            bug="a producer that ignores its last acknowledged sequence when it resolves an expired batch "
            "(TransactionManager.maybeResolveSequences / isNextSequence): needless KIP-360 bumps, each restarting "
            "the partition's sequences at a new epoch",
        ),
        Variant(
            name="pre_kip_890",
            description="Transactions as before KIP-890: transaction.version 1 (no epoch bump per transaction) "
            "and no partition verification before a transactional write.",
            flags=replace(_REAL, transaction_version=1, partition_verification=False),
            weakened=True,
            breaks=("no_hanging_transaction", "atomic_commit"),
            scenarios=("txn_kafka_12671_hanging", "txn_kafka_17754_delayed_endtxn"),
            bug="KAFKA-12671 (a late produce opens a transaction nobody ends: LSO stuck) and KAFKA-17754 "
            "(a delayed EndTxn or produce lands in a later transaction: torn transaction / aborted read)",
        ),
        Variant(
            name="tv1",
            description="transaction.version 1 with KIP-890 part 1 verification and KIP-360 (Kafka 3.6-3.9).",
            flags=replace(_REAL, transaction_version=1),
        ),
        Variant(
            name="tv2_verification_config_off",
            description="transaction.version 2 on brokers configured with transaction.partition.verification."
            "enable=false: TV2 adds partitions (and the group's offsets partition) through the same round trip, "
            "so produce and TxnOffsetCommit are verified all the same (KIP-890 part 2).",
            flags=replace(_REAL, partition_verification=False, txn_offset_commit_verification=False),
        ),
        Variant(
            name="no_kip_360",
            description="transaction.version 1 with verification but without KIP-360: an aborted transaction "
            "keeps its epoch, so the next transaction runs at the same (pid, epoch).",
            flags=replace(_REAL, transaction_version=1, kip_360=False),
            weakened=True,
            breaks=("atomic_commit", "healthy_producer_not_failed"),
            scenarios=("txn_kafka_17754_delayed_endtxn",),
            bug="KIP-890 scenario B: a write of an aborted transaction, delayed past the abort, passes "
            "verification in the next transaction at the same epoch and is committed with it",
        ),
        Variant(
            name="send_error_ignored",
            description="A send() that KafkaProducer.doSend refuses synchronously (an ApiException: "
            "RecordTooLargeException, TopicAuthorizationException, TimeoutException) is only returned as a failed "
            "future: the transaction stays open and may commit without the record (Kafka before 3.2).",
            flags=replace(_REAL, send_error_aborts_transaction=False),
            weakened=True,
            breaks=("atomic_commit", "exactly_once_processing"),
            scenarios=("txn_send_rejected", "txn_eos_send_rejected"),
            bug="KAFKA-9279 (fixed by PR #11508, Kafka 3.2: KafkaProducer.doSend calls "
            "TransactionManager.maybeTransitionToErrorState for an ApiException; clients/.../KafkaProducer.java, "
            "clients/.../internals/TransactionManager.java): silent data loss, commitTransaction succeeded after "
            "a send that failed before reaching the accumulator",
        ),
        Variant(
            name="timeout_abort_without_epoch_bump",
            description="transaction.version 1 with verification and KIP-360, but the coordinator aborts a "
            "timed-out transaction without bumping the producer epoch (under TV2 every abort bumps anyway).",
            flags=replace(_REAL, transaction_version=1, timeout_abort_bumps_epoch=False),
            weakened=True,
            breaks=("atomic_commit", "zombie_fencing", "healthy_producer_not_failed"),
            scenarios=("txn_kafka_6119_timeout_zombie",),
            bug="KAFKA-6119 (fixed by PR #4137): the producer keeps writing at the old epoch after the timeout "
            "abort; its later commit succeeds although part of the transaction was aborted",
        ),
        Variant(
            name="expire_producers_with_open_transactions",
            description="The partition leader's producer.id.expiration.ms also expires a producer whose "
            "transaction on the partition is still open (isProducerExpired without the currentTxnFirstOffset "
            "condition).",
            flags=replace(_REAL, producer_expiry_keeps_open_transactions=False),
            weakened=True,
            breaks=("no_aborted_read", "atomic_commit", "lso_per_kafka", "read_committed_from_any_offset"),
            scenarios=("txn_producer_state_expiry",),
            bug="an expired open transaction no longer holds the last stable offset back (read_committed "
            "consumers read its undecided records), and the partition no longer knows the producer's epoch, so a "
            "record of the next transaction joins the open one and is committed although its transaction aborts",
        ),
        Variant(
            name="complete_without_markers",
            description="The coordinator writes CompleteCommit/CompleteAbort right after Prepare*, without "
            "waiting for the WriteTxnMarkers responses.",
            flags=replace(_REAL, complete_after_markers=False),
            weakened=True,
            breaks=("markers_before_complete",),
            scenarios=("txn_kafka_12671_hanging",),
            bug="a coordinator that forgets a transaction before its markers are written; a failed or late "
            "marker then leaves the partition's transaction open",
        ),
        Variant(
            name="no_reread_after_producer_init",
            description="Connect: an exactly-once source task starts its send loop right after initTransactions, "
            "without re-reading the config topic (postProducerCheck removed).",
            flags=replace(_REAL, connect_reread_after_producer_init=False),
            weakened=True,
            breaks=("exactly_once_source_delivery", "no_commit_by_fenced_generation"),
            scenarios=("connect_worker_lag_before_producer",),
            bug="KIP-618 §Zombie fencing (workers F, O, L): a worker that lags after its fencing round creates its "
            "producer after the next round fenced the old task ids, and writes a reassigned source partition twice",
        ),
        Variant(
            name="leader_writes_without_transactions",
            description="Connect: the leader writes the config topic with a plain producer (no "
            "connect-cluster-${groupId} transactional producer, no claimWritePrivileges fencing).",
            flags=replace(_REAL, connect_transactional_leader=False),
            weakened=True,
            breaks=("no_config_write_by_deposed_leader",),
            scenarios=("connect_zombie_leader",),
            bug="KIP-618 §Leader access to config topic: a deposed (zombie) leader writes a task-count record "
            "after the new leader wrote new task configs, so tasks of the new generation would start without fencing",
        ),
        Variant(
            name="source_offsets_outside_transaction",
            description="Connect: an exactly-once source task commits its records' transaction, then flushes the "
            "source offsets separately (as with exactly.once.source.support=disabled).",
            flags=replace(_REAL, connect_offsets_in_transaction=False),
            weakened=True,
            breaks=(
                "offsets_committed_with_records",
                "exactly_once_source_delivery",
                "task_offsets_only_in_transactions",
            ),
            scenarios=("connect_worker_crash",),
            bug="KIP-618 motivation (source offset accuracy): a worker that dies between the records and their "
            "offsets re-sends the records after a restart",
        ),
        Variant(
            name="no_zombie_fencing_round",
            description="Connect: exactly-once source tasks start without asking the leader for a zombie-fencing "
            "round (no PUT /connectors/{c}/fence, no Admin.fenceProducers, no task-count record).",
            flags=replace(_REAL, connect_zombie_fencing=False),
            weakened=True,
            breaks=("task_starts_after_task_count_record", "exactly_once_source_delivery"),
            scenarios=("connect_worker_lag_before_producer",),
            bug="KIP-618 §Task count records / §Source task startup: tasks of a new generation start while "
            "producers of the previous task ids are still alive",
        ),
        Variant(
            name="fencing_round_survives_config_update",
            description="Connect: new task configs read while a zombie-fencing round awaits its task-count record "
            "leave the round active; the new generation's fencing requests join it and are answered with its "
            "409 at the record's re-read (no completeExceptionally in ConfigUpdateListener.onTaskConfigUpdate).",
            flags=replace(_REAL, connect_config_update_fails_fencing=False),
            weakened=True,
            breaks=("healthy_task_never_failed",),
            scenarios=("connect_reconfiguration_during_fencing_round",),
            bug="KIP-618 §Zombie fencing: the tasks of a reconfigured connector join the stale round of the "
            "previous task configs and fail at start-up with 409 CONFLICT, although nothing went wrong",
        ),
        Variant(
            name="tombstone_to_connector_topic_first",
            description="Connect: a connector-specific offsets commit with tombstones writes the connector's "
            "topic first and copies the offsets to the global topic afterwards, a failure there only logged "
            "(ConnectorOffsetBackingStore.set before KAFKA-15018).",
            flags=replace(_REAL, connect_tombstone_to_global_first=False),
            weakened=True,
            breaks=("tombstoned_offsets_stay_deleted",),
            scenarios=("connect_offset_tombstones",),
            bug="KAFKA-15018 (fixed in Kafka 3.8): the global write fails after the connector topic took the "
            "tombstone, and the combined view falls back to the partition's old offset in the global topic",
        ),
        Variant(
            name="connector_abort_reprocesses",
            description="Connect: a connector-defined abort (TransactionContext.abortTransaction) discards the "
            "records but does not commit their offsets; the task rewinds to its committed offsets.",
            flags=replace(_REAL, connect_abort_commits_offsets=False),
            weakened=True,
            breaks=("exactly_once_source_delivery",),
            scenarios=("connect_connector_boundaries",),
            bug="TransactionContext.abortTransaction promises that the aborted records' offsets are still "
            "committed so that they are not reprocessed; without it the discarded records come back",
        ),
        Variant(
            name="revoked_task_initializes_producer",
            description="Connect: a source task whose worker revoked it while its start-up was blocked on the "
            "zombie-fencing round still calls initTransactions (no isStopping() check before it).",
            flags=replace(_REAL, connect_stopping_task_skips_producer=False),
            weakened=True,
            breaks=("live_tasks_never_fenced",),
            scenarios=("connect_worker_lag_before_producer",),
            bug="KIP-618 §Source task startup step 4: the revoked instance's initTransactions bumps the epoch of "
            "the task id and fences the task's new owner, which then fails",
        ),
        Variant(
            name="tv2_offsets_do_not_start_transaction",
            description="Consume-transform-produce, TV2: the producer does not count an enqueued TxnOffsetCommit "
            "as starting its transaction; an offsets-only transaction whose TxnOffsetCommit was refused "
            "(ILLEGAL_GENERATION) is aborted without EndTxn.",
            flags=replace(_REAL, txn_offset_commit_starts_transaction=False),
            weakened=True,
            breaks=("client_transaction_ends_at_coordinator",),
            scenarios=("txn_eos_offsets_only",),
            bug="KIP-890 part 2: the group coordinator added __consumer_offsets to the transaction before it "
            "refused the offsets; the client's local abort leaves it Ongoing until transaction.timeout.ms, and "
            "the producer's next transaction joins it",
        ),
        Variant(
            name="tv2_client_sends_add_offsets",
            description="Consume-transform-produce, TV2: sendOffsetsToTransaction still sends AddOffsetsToTxn "
            "to the transaction coordinator before the TxnOffsetCommit, as a TV0/TV1 client does.",
            flags=replace(_REAL, tv2_offsets_without_add_offsets=False),
            weakened=True,
            breaks=("client_requests_match_transaction_version",),
            scenarios=("txn_eos_offsets_only",),
            bug="KIP-890 part 2: a TV2 client that kept the TV1 request sequence (the transaction version "
            "negotiated but not read by sendOffsetsToTransaction); the outcomes may be the same, the protocol not",
        ),
        Variant(
            name="abort_drops_queued_add_offsets",
            description="Consume-transform-produce, TV1: abortTransaction drops the AddOffsetsToTxn that "
            "sendOffsetsToTransaction queued, so the abort completes locally while the coordinator may hold "
            "the transaction Ongoing (the request was in flight or is re-sent after a lost answer).",
            flags=replace(_REAL, transaction_version=1, abort_keeps_queued_add_offsets=False),
            weakened=True,
            breaks=("client_transaction_ends_at_coordinator",),
            scenarios=("txn_eos_tv1_abort_queued_add_offsets",),
            bug="TransactionManager.beginAbort clears only newPartitionsInTransaction; dropping the queued "
            "AddOffsetsToTxn leaves a hanging transaction that the producer's next transaction joins",
        ),
        Variant(
            name="config_write_failure_fails_fencing_requests",
            description="Connect: a deposed leader's failed task-config write (PRODUCER_FENCED on "
            "connect-cluster-${groupId}) also fails every task waiting on a zombie-fencing round.",
            flags=replace(_REAL, connect_config_write_failure_answers_fencing=True),
            weakened=True,
            breaks=("task_lifecycle_legal",),
            scenarios=("connect_zombie_leader",),
            bug="a fencing request is answered by the leader's round (DistributedHerder.ZombieFencing callbacks), "
            "not by an unrelated config write: the healthy tasks of the new leader fail at start-up",
        ),
        Variant(
            name="records_committed_without_offsets",
            description="Connect: an exactly-once source task whose offset flush failed (the offsets could not be "
            "serialized) still commits its transaction, with the records but without their offsets, then fails "
            "(KAFKA-14339 before its fix).",
            flags=replace(_REAL, connect_commit_only_flushed_offsets=False),
            weakened=True,
            breaks=("exactly_once_source_delivery", "offsets_committed_with_records"),
            scenarios=("connect_send_failure",),
            bug="KAFKA-14339 (apache/kafka PR #12920): the records are committed without their offsets, so the "
            "task's next instance polls them again from the older committed offset and commits them twice",
        ),
        Variant(
            name="deleted_connector_commit_applied",
            description="Connect: a commit record of task configs read after the connector's tombstone is applied "
            "(KAFKA-16838 before its fix): the set a deposed leader without exactly-once support committed after "
            "the deletion becomes a task-config generation of the deleted connector.",
            flags=replace(_REAL, connect_ignore_deleted_connector_commits=False),
            weakened=True,
            breaks=("deleted_connector_tasks_unassigned",),
            scenarios=("connect_deposed_leader_commit_after_delete",),
            bug="KAFKA-16838 (apache/kafka PR #16122): tasks of a deleted connector are assigned and started",
        ),
        Variant(
            name="deleted_connector_tasks_kept",
            description="Connect: a connector's tombstone leaves its task configs and task count in the snapshot "
            "(KAFKA-8869 before its fix): the assignor still hands out the deleted connector's tasks.",
            flags=replace(_REAL, connect_tombstone_drops_task_configs=False),
            weakened=True,
            breaks=("deleted_connector_tasks_unassigned",),
            scenarios=("connect_connector_deleted",),
            bug="KAFKA-8869 (apache/kafka PR #8444): the deleted connector's tasks stay assigned after the "
            "rebalance, and a connector created again starts with the old incarnation's task configs",
        ),
        Variant(
            name="uncommitted_task_configs_effective",
            description="Connect: a worker acts on a set of task configs as soon as it reads them, before their "
            "commit record (no deferredTaskUpdates in KafkaConfigBackingStore): the set a leader wrote before it "
            "failed to write the commit record becomes a task-config generation.",
            flags=replace(_REAL, connect_task_configs_effective_at_commit=False),
            weakened=True,
            breaks=("task_starts_after_task_count_record", "healthy_task_never_failed"),
            scenarios=("connect_task_configs_uncommitted",),
            bug="KafkaConfigBackingStore javadoc (an incomplete or uncommitted set of task configs must not be "
            "used): tasks start with configs of a generation the config topic never committed, and the fencing "
            "round writes a task-count record for it",
        ),
        Variant(
            name="failed_task_commits_on_stop",
            description="Connect: stopping an exactly-once source task that failed (a send failed with a "
            "non-fencing error) commits its open transaction, with the offsets of every dispatched record.",
            flags=replace(_REAL, connect_failed_task_skips_final_commit=False),
            weakened=True,
            breaks=("offsets_committed_with_records", "every_source_record_delivered"),
            scenarios=("connect_send_failure",),
            bug="ExactlyOnceWorkerSourceTask.finalOffsetCommit skips the commit of a failed task; committing it "
            "writes the offset of a record whose send failed, so the task's next instance never polls it again",
        ),
        Variant(
            name="running_task_skips_final_commit",
            description="Connect: a running exactly-once source task that a rebalance stops skips its final "
            "offset commit; its open transaction is left for the next instance's initTransactions to abort.",
            flags=replace(_REAL, connect_running_task_commits_on_stop=False),
            weakened=True,
            breaks=("task_lifecycle_legal",),
            scenarios=("connect_connector_deleted_refresh_first",),
            bug="ExactlyOnceWorkerSourceTask.finalOffsetCommit(false) not reached on a clean stop (a close path "
            "that skips it): the records of a clean hand-over are discarded and polled again",
        ),
        Variant(
            name="fencing_conflict_ignored",
            description="Connect: a zombie-fencing round whose task configs changed while it ran writes its "
            "task-count record anyway (no 409 CONFLICT after the re-read).",
            flags=replace(_REAL, connect_fencing_conflict_on_new_generation=False),
            weakened=True,
            breaks=("task_lifecycle_legal",),
            scenarios=("connect_disabled_leader_paused",),
            bug="DistributedHerder.ZombieFencing.onZombieFencingSuccess without its taskGen check: a leader that "
            "stalled mid-round clears the pending fencing of task configs written by the leader after it",
        ),
        Variant(
            name="connector_boundary_commits_on_stop",
            description="Connect: with connector-defined transaction boundaries, a running exactly-once source "
            "task that a rebalance stops commits its open batch although the connector never asked to commit it.",
            flags=replace(_REAL, connect_connector_boundary_stop_keeps_batch_open=False),
            weakened=True,
            breaks=("task_lifecycle_legal",),
            scenarios=("connect_connector_boundaries",),
            bug="ExactlyOnceWorkerSourceTask.finalOffsetCommit committing unconditionally "
            "(shouldCommitFinalTransaction true for CONNECTOR boundaries): a stop splits the connector's "
            "transaction, committing half a batch",
        ),
        Variant(
            name="no_generation_fencing",
            description="The group coordinator accepts a TxnOffsetCommit from an old generation (no "
            "ILLEGAL_GENERATION); instances keep one transactional.id each, so nothing else fences a zombie.",
            flags=replace(_REAL, generation_fencing=False),
            weakened=True,
            breaks=(
                "exactly_once_processing",
                "lost_partition_never_committed",
                "txn_offset_commits_fenced_exactly",
                "coordinator_answers_per_kafka_table",
            ),
            scenarios=("txn_eos_consume_transform_produce", "txn_eos_rebalance_session_timeout"),
            bug="pre-KIP-447 / KAFKA-2555 (PR #221): a zombie that lost its input partition in a rebalance "
            "commits its transaction and offsets next to the new owner: the input record is processed twice",
        ),
        Variant(
            name="unverified_txn_offset_commit",
            description="transaction.version 1 with KIP-890 part 1 verification of produce requests only: the "
            "group coordinator appends a TxnOffsetCommit without asking the transaction coordinator whether the "
            "transaction is still ongoing (Kafka 3.6, before KAFKA-15449).",
            flags=replace(_REAL, transaction_version=1, txn_offset_commit_verification=False),
            weakened=True,
            breaks=(
                "no_hanging_transaction",
                "lso_reaches_high_watermark",
                "lso_reaches_high_watermark_eventually",
                "coordinator_answers_per_kafka_table",
            ),
            scenarios=("txn_eos_tv1_request_timeout", "txn_eos_late_txn_offset_commit_rebalance"),
            bug="KAFKA-15449: a TxnOffsetCommit that timed out on the client is retried and the transaction "
            "commits; the first copy reaches the group coordinator late and opens a transaction on "
            "__consumer_offsets that no marker ever ends (its LSO is stuck, OffsetFetch(requireStable) waits)",
        ),
        Variant(
            name="txn_offset_commit_validates_before_verification",
            description="With the TxnOffsetCommit's verification as a round trip, the group coordinator checks the "
            "member and generation when the request arrives and appends after the transaction coordinator's verdict "
            "without checking again: a rebalance in between stages the offsets of a generation the group has left.",
            flags=replace(_REAL, txn_offset_commit_validates_after_verification=False),
            weakened=True,
            breaks=("exactly_once_processing", "lost_partition_never_committed"),
            scenarios=("reach_eos_txn_offset_commit_round_trip",),
            bug="KAFKA-15784 (fixed in 3.7 by apache/kafka PR #14774: "
            "core/.../coordinator/group/GroupCoordinator.scala handleTxnCommitOffsets' postVerificationCallback -> "
            "doTxnCommitOffsets, GroupMetadataManager.scala "
            "storeOffsets, server/ReplicaManager.scala maybeStartTransactionVerificationForPartition): in 3.6 the "
            "offsets were validated and prepared under the group lock, then verified and appended later outside it, "
            "so the in-memory validation and the write were not atomic",
        ),
        Variant(
            name="txn_offset_commit_ignores_verification_guard",
            description="transaction.version 1 with the TxnOffsetCommit's verification as a round trip: the group "
            "coordinator appends a verified TxnOffsetCommit without presenting its verification guard, so a verdict "
            "given while the transaction was open stages the offset after the COMMIT marker that ended it.",
            flags=replace(_REAL, transaction_version=1, txn_offset_commit_guard_checked=False),
            weakened=True,
            breaks=("no_hanging_transaction", "lso_reaches_high_watermark", "lso_reaches_high_watermark_eventually"),
            scenarios=("txn_eos_tv1_txn_offset_commit_round_trip",),
            bug="KIP-890 part 1's VerificationGuard on __consumer_offsets (KAFKA-15784, apache/kafka PR #14774: "
            "ReplicaManager.appendForGroup's verificationGuards, UnifiedLog.analyzeAndValidateProducerState's "
            "batchMissingRequiredVerification): a timed-out TxnOffsetCommit's first copy, verified before its retry "
            "committed the transaction, opens a transaction on __consumer_offsets no marker ever ends",
        ),
        Variant(
            name="offsets_outside_transaction",
            description="The application commits its input offsets with a plain OffsetCommit after "
            "commitTransaction instead of sendOffsetsToTransaction.",
            flags=replace(_REAL, offsets_in_transaction=False),
            weakened=True,
            breaks=("exactly_once_processing", "offsets_committed_with_outputs"),
            scenarios=("txn_eos_abort_and_seek", "txn_eos_consume_transform_produce"),
            bug="at-least-once consume-transform-produce: a rebalance (or crash) between the commit of the "
            "outputs and the offset commit makes the next owner process the input record again",
        ),
        Variant(
            name="no_seek_after_abort",
            description="After abortTransaction the application keeps its consumer position instead of "
            "seeking back to the committed offset.",
            flags=replace(_REAL, seek_after_abort=False),
            weakened=True,
            breaks=("exactly_once_processing", "input_processed_eventually"),
            scenarios=("txn_eos_abort_and_seek",),
            bug="KAFKA-17582 (intended behaviour): the position does not rewind after an abort; an "
            "application that does not seek skips the aborted input record -- it is lost",
        ),
        Variant(
            name="ongoing_txn_check_without_epoch",
            description="TV2, but the partition leader skips verification whenever any transaction of the "
            "producer id is open on the partition, whatever its epoch (UnifiedLog.hasOngoingTransaction("
            "producerId) of Kafka 3.x).",
            flags=replace(_REAL, ongoing_txn_check_epoch=False),
            weakened=True,
            breaks=("transactions_complete", "prepared_transaction_has_markers", "committed_transactions_visible"),
            scenarios=("txn_kafka_17754_delayed_endtxn",),
            bug="before KAFKA-14563 (PR #17698, Kafka 4.0): with no fault at all, the next transaction's batch at "
            "epoch e+1 joins the transaction of epoch e still waiting for its COMMIT marker; the marker at e+1 is "
            "rejected, the coordinator stays in PrepareCommit (the client retries CONCURRENT_TRANSACTIONS forever) "
            "and the committed record is never committed",
        ),
        Variant(
            name="no_kafka_19999_fix",
            description="TV2 partition leaders reject a marker at the stored producer epoch even when no "
            "transaction is open (strict markerEpoch > currentEpoch).",
            flags=replace(_REAL, marker_retry_same_epoch=False),
            weakened=True,
            breaks=("transactions_complete", "prepared_transaction_has_markers"),
            scenarios=("txn_coordinator_faults",),
            bug="KAFKA-19999 (fixed by PR #21176, Dec 2025): after a coordinator failover the re-sent marker of a "
            "reloaded PrepareAbort is rejected with INVALID_PRODUCER_EPOCH and the transaction hangs in Prepare*",
        ),
        Variant(
            name="marker_retriable_error_cancels",
            description="The transaction coordinator treats a retriable WriteTxnMarkers error (the leader moved, "
            "the ISR shrank) like INVALID_PRODUCER_EPOCH: it cancels the transaction's markers.",
            flags=replace(_REAL, marker_retriable_errors_retried=False),
            weakened=True,
            breaks=("prepared_transaction_has_markers", "transactions_complete"),
            scenarios=("txn_marker_retry",),
            bug="plausible: TransactionMarkerRequestCompletionHandler's retriable-error case missing (markers of a "
            "partition whose leader moved are never re-sent; the transaction hangs in Prepare* and the LSO with it)",
        ),
        Variant(
            name="no_kafka_9749_fix",
            description="The transaction coordinator's marker completion handler does not count "
            "KAFKA_STORAGE_ERROR among the retriable errors (Kafka before 2.6): a marker whose partition "
            "leader's log directory failed is neither re-sent nor completed.",
            flags=replace(_REAL, marker_storage_error_retried=False),
            weakened=True,
            breaks=("prepared_transaction_has_markers", "transactions_complete"),
            scenarios=("txn_marker_errors",),
            bug="KAFKA-9749 (PR #8336, fix 4c96b7d, Kafka 2.6; TransactionMarkerRequestCompletionHandler.scala): "
            "a WriteTxnMarkers answered KAFKA_STORAGE_ERROR fell to `case other => throw new "
            "IllegalStateException`, which NetworkClient logs and swallows: the marker is never retried and the "
            "transaction hangs in PrepareCommit/PrepareAbort, the LSO of its partitions with it",
        ),
        Variant(
            name="no_kafka_9307_fix",
            description="Loading a __transaction_state partition the coordinator still caches throws "
            "(addLoadedTransactionsToCache, Kafka before 2.5): after an in-place reload (a new leader epoch on the "
            "same broker) the partition never leaves loadingPartitions.",
            flags=replace(_REAL, txn_reload_replaces_cache=False),
            weakened=True,
            breaks=("clients_settle", "transactions_complete"),
            scenarios=("txn_coordinator_reload",),
            bug="KAFKA-9307 (PR #7840, fix 0f0eb49, Kafka 2.5; TransactionStateManager.scala, "
            "TransactionCoordinator.scala): when the become-follower transition did not run (or failed to unload), "
            "handleTxnImmigration's loadTransactions found the partition's TxnMetadataCacheEntry and threw "
            "IllegalStateException ('this should not happen') before loadingPartitions.remove: every request of "
            "the partition's transactional ids is answered COORDINATOR_LOAD_IN_PROGRESS for ever and Prepare* "
            "transactions never get their markers; the fix replaces the entry and first drops the partition's "
            "queued markers (removeMarkersForTxnTopicPartition in onElection)",
        ),
        Variant(
            name="no_kafka_16352_fix",
            description="A WriteTxnMarkers answer that arrives under an older coordinator epoch removes the "
            "transactional id's pending completion whatever transaction it belongs to "
            "(transactionsWithPendingMarkers.remove(transactionalId), Kafka before 3.8).",
            flags=replace(_REAL, marker_cancel_checks_transaction=False),
            weakened=True,
            breaks=("clients_settle", "transactions_complete"),
            scenarios=("txn_coordinator_faults",),
            bug="KAFKA-16352 (PR #15524, Kafka 3.8; TransactionMarkerChannelManager.scala, "
            "TransactionMarkerRequestCompletionHandler.scala): the coordinator moves away and back while a marker "
            "is out; the reloaded PrepareCommit/PrepareAbort registers its markers again, the old marker's answer "
            "(coordinator epoch changed: cancel) removes that registration, and when the new markers are written "
            "maybeWriteTxnCompletion finds nothing to complete: the transaction is stuck in Prepare*",
        ),
        Variant(
            name="no_kafka_18464_fix",
            description="TV2 coordinators check the epoch of an EndTxn before answering CONCURRENT_TRANSACTIONS "
            "for a transaction still in Prepare* (Kafka 3.8-3.9's order).",
            flags=replace(_REAL, end_txn_concurrent_in_prepare=False),
            weakened=True,
            breaks=("sole_producer_not_fenced",),
            scenarios=("txn_kafka_17754_delayed_endtxn",),
            bug="KAFKA-18464 (fixed by PR #18467, Kafka 4.0): the next transaction's abort reaches the coordinator "
            "while the previous commit's markers are still being written; its epoch is the bumped one, not a "
            "retry, so the only producer of the transactional.id is answered PRODUCER_FENCED",
        ),
        Variant(
            name="no_kafka_18660_end_txn_answer",
            description="TV2 coordinators answer a successful EndTxn with the PrepareCommit/PrepareAbort's producer "
            "id and epoch, not the completion's (Kafka 3.8-3.9 and 4.0 before PR #18730).",
            flags=replace(_REAL, end_txn_answers_completed_ids=False),
            weakened=True,
            breaks=("acknowledged_after_logged",),
            scenarios=("reach_txn_tv2_double_rotation",),
            bug="KAFKA-18660 (fixed by PR #18730, Kafka 4.0): at an exhausted epoch the EndTxn response names the "
            "old producer id at Short.MAX_VALUE although the completion rotated the id to nextProducerId, so the "
            "only producer of the transactional.id fails its next transaction (INVALID_PRODUCER_ID_MAPPING)",
        ),
        Variant(
            name="complete_not_coordinator_retried",
            description="The coordinator re-enqueues a CompleteCommit/CompleteAbort append that failed NOT_COORDINATOR "
            "(the leader moved) with its pending state kept, as if the error were COORDINATOR_NOT_AVAILABLE.",
            flags=replace(_REAL, complete_not_coordinator_skipped=False),
            weakened=True,
            breaks=("coordinator_answers_per_kafka_table",),
            scenarios=("reach_txn_loading_window",),
            bug="an append error mapped to the wrong class in TransactionMarkerChannelManager.tryAppendToLog "
            "(retryOnError must take COORDINATOR_NOT_AVAILABLE only; KAFKA-5416's retry path)",
        ),
        Variant(
            name="no_kafka_20357_fix",
            description="Coordinators load __transaction_state without lastProducerEpoch (Kafka before PR #22096): "
            "the retry of a KIP-360 InitProducerId whose epoch bump a deposed coordinator logged but never answered "
            "is PRODUCER_FENCED by the new one.",
            flags=replace(_REAL, transaction_version=1, log_restores_last_producer_epoch=False),
            weakened=True,
            breaks=("healthy_producer_not_failed",),
            scenarios=("reach_txn_tv1_init_retry_failover",),
            bug="KAFKA-20357 (fixed by PR #22096, 2026, after KAFKA-20310): lastProducerEpoch was not persisted, so "
            "after a coordinator failover the producer's retry of InitProducerId (a bump or an epoch-exhaustion "
            "producer-id rotation whose answer it never got) is rejected PRODUCER_FENCED",
        ),
        Variant(
            name="no_kafka_20785_fix",
            description="TV2 coordinators answer a commit at the retry epoch that finds the transaction aborted "
            "by the coordinator (CompleteAbort) with INVALID_TXN_STATE.",
            flags=replace(_REAL, commit_retry_after_abort_fenced=False),
            weakened=True,
            breaks=("zombie_fenced_not_fatal",),
            scenarios=("txn_fence_append_failures",),
            bug="KAFKA-20785 (fixed by PR #23204, 2026): a zombie whose transaction the new instance's fence "
            "aborted is told INVALID_TXN_STATE (fatal, 'a bug') instead of PRODUCER_FENCED (recoverable by "
            "closing: another instance took over); Kafka Streams threads died on it",
        ),
        Variant(
            name="tv2_with_2024_transition_table",
            description="TV2 with PrepareAbort's valid previous states of the Oct-2024 Scala TransactionState "
            "(Ongoing, PrepareEpochFence): the TV2 empty abort from Empty/Complete* is an illegal transition.",
            flags=replace(_REAL, tv2_empty_abort_in_table=False),
            weakened=True,
            breaks=("no_illegal_transition_attempt", "no_unknown_server_error"),
            scenarios=("txn_coordinator_faults",),
            bug="KIP-890 part 2 needed the empty abort in the table (TransactionState.java 2025): without it the "
            "coordinator throws IllegalStateException and the client gets UNKNOWN_SERVER_ERROR (fatal)",
        ),
        Variant(
            name="kafka_19367_double_bump",
            description="A TV2 epoch fence bumps the producer epoch twice in one InitProducerId (fence, then the "
            "TV2 abort's own bump).",
            flags=replace(_REAL, single_fence_bump=False),
            weakened=True,
            breaks=("epoch_bump_at_most_one", "cached_epoch_follows_log"),
            scenarios=("txn_fence_append_failures",),
            bug="KAFKA-19367 (Kafka 4.0.0, fixed by PR #19910): InitProducerId on an ongoing TV2 transaction "
            "incremented the epoch twice; at epoch 32766 the second bump overflowed Short.MAX_VALUE",
        ),
        Variant(
            name="no_kafka_20090_fix",
            description="A TV2 epoch fence at an exhausted epoch does not allocate nextProducerId: the fence "
            "completes at Short.MAX_VALUE on the old producer id.",
            flags=replace(_REAL, fence_rotates_exhausted_producer_id=False),
            weakened=True,
            breaks=("epoch_within_limit",),
            scenarios=("reach_txn_tv2_exhausted_timeout",),
            bug="KAFKA-20090 (Kafka 4.0-4.2, fixed by PR #21506): a transaction timed out at epoch 32766 was "
            "fenced to 32767 without a new producer id; the producer's late EndTxn(ABORT) was answered with "
            "32767 and its next transaction's end overflowed the epoch, leaving it stuck Ongoing",
        ),
        Variant(
            name="previous_producer_id_kept",
            description="The coordinator's transitions keep the entry's prevProducerId instead of recording the "
            "producer id they start from (the model before session 20).",
            flags=replace(_REAL, transaction_version=1, transit_records_previous_producer_id=False),
            weakened=True,
            breaks=("log_transitions_per_kafka",),
            scenarios=("reach_txn_tv1_init_rotation_retry",),
            bug="a field not overwritten on one path: TransactionMetadata.prepareTransitionTo records the current "
            "producerId as every transition's prevProducerId (TransactionMetadata.java 2025); keeping an older "
            "rotation's id lets a stale instance of that id at an exhausted epoch pass handleInitProducerId's "
            "producer-id check long after the rotation, and the log's PreviousProducerId is wrong after a reload",
        ),
        Variant(
            name="empty_abort_without_rotation",
            description="The TV2 empty abort bumps an exhausted epoch instead of rotating the producer id.",
            flags=replace(_REAL, empty_abort_rotates_producer_id=False),
            weakened=True,
            breaks=("epoch_within_limit",),
            scenarios=("txn_epoch_overflow",),
            bug="the keos model before issue 13 (not a Kafka release): an empty abort at Short.MAX_VALUE - 1 "
            "handed out Short.MAX_VALUE and the next commit bumped past it",
        ),
        Variant(
            name="failed_fence_rolls_back_epoch",
            description="After a failed transaction-log append of an epoch fence the coordinator rolls the epoch "
            "back but keeps hasFailedEpochFence, so the next fence writes PrepareAbort at the unchanged epoch.",
            flags=replace(_REAL, failed_fence_keeps_bump=False),
            weakened=True,
            breaks=("transactions_complete", "prepared_transaction_has_markers", "fence_raises_epoch"),
            scenarios=("txn_fence_append_failures",),
            bug="the KAFKA-19367 fix before its follow-up (PR #19910 without PR #19976, Kafka 4.1 pre-release): the "
            "TV2 fence no longer caches its bump but a failed append still set hasFailedEpochFence, so the next "
            "fence wrote PrepareAbort at the fenced epoch; its marker does not fence the zombie at the partition "
            "(TV2 rejects it) and the transaction hangs",
        ),
        Variant(
            name="no_transactional_id_acl",
            description="The transaction coordinator's APIs (InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, "
            "EndTxn, TxnOffsetCommit) skip the Write check on the request's TransactionalId.",
            flags=replace(_REAL, authorize_transactional_id=False),
            weakened=True,
            breaks=("unauthorized_never_changes_transaction",),
            scenarios=("authz_acls_enforced",),
            bug="KIP-98 §9 without the TransactionalId resource: anyone who can reach the coordinator fences "
            "(InitProducerId) or ends (EndTxn) another producer's transaction",
        ),
        Variant(
            name="markers_without_cluster_action",
            description="WriteTxnMarkers is accepted from any principal (no ClusterAction/Alter check on the cluster).",
            flags=replace(_REAL, authorize_marker_cluster_action=False),
            weakened=True,
            breaks=("control_batches_only_from_markers",),
            scenarios=("authz_acls_enforced",),
            bug="KIP-98 §9: markers are inter-broker only; without ClusterAction a client commits or aborts "
            "another producer's transaction on a partition",
        ),
        Variant(
            name="add_partitions_without_topic_acl",
            description="AddPartitionsToTxn (transaction.version 1) adds a partition without checking Write on its "
            "topic; the Produce's own topic check still refuses the data.",
            flags=replace(_REAL, transaction_version=1, authorize_add_partitions_topic=False),
            weakened=True,
            breaks=("transaction_partitions_authorized", "unauthorized_never_changes_transaction"),
            # missing from the start, and revoked mid-transaction (then only unauthorized_never_changes_transaction
            # judges the added partition: transaction_partitions_authorized reads the ACLs of the start)
            scenarios=("authz_matrix_tv1_write_topic_missing", "authz_matrix_tv1_write_topic_revoked"),
            bug="KIP-98 §9: a principal without Write on a topic gets it into its transaction, and the "
            "coordinator writes that transaction's markers there",
        ),
        Variant(
            name="offsets_without_group_acl",
            description="AddOffsetsToTxn and TxnOffsetCommit skip the Read check on the consumer group.",
            flags=replace(_REAL, authorize_offsets_group=False),
            weakened=True,
            breaks=("transactional_offsets_authorized",),
            scenarios=("authz_matrix_eos_read_group_revoked",),
            bug="KIP-98 §9/KIP-447: a principal without Read on a group commits offsets for it inside its "
            "transaction (KafkaApis.handleTxnOffsetCommitRequest's Group check dropped)",
        ),
        Variant(
            name="acl_changes_not_applied",
            description="The broker's authorizer keeps the ACLs it loaded at startup: a binding an operator "
            "removes still authorizes later requests.",
            flags=replace(_REAL, apply_acl_changes=False),
            weakened=True,
            breaks=("transactional_writes_authorized", "unauthorized_never_changes_transaction"),
            scenarios=("authz_matrix_tv2_write_topic_revoked", "authz_matrix_tv2_write_transactionalid_revoked"),
            bug="a stale authorizer cache (ACL removals not propagated to a broker's StandardAuthorizer): a "
            "revoked producer keeps writing into and committing transactions",
        ),
        Variant(
            name="produce_accepts_control_records",
            description="The log appends control (COMMIT/ABORT) batches that arrive in a client's Produce "
            "(LogValidator's 'Clients are not allowed to write control records' removed).",
            flags=replace(_REAL, reject_client_control_records=False),
            weakened=True,
            breaks=("control_batches_only_from_markers",),
            scenarios=("authz_pid_hijack",),
            bug="KIP-98 §9 ('control messages are not allowed through the Produce API'): a hijacker that may write "
            "transactional data ends the victim's transaction with its own marker",
        ),
        Variant(
            name="produce_without_transactional_id_acl",
            description="A Produce with transactional batches is accepted without Write on its transactional.id, "
            "on a broker before KIP-890 (transaction.version 1, no partition verification).",
            flags=replace(
                _REAL, authorize_transactional_produce=False, transaction_version=1, partition_verification=False
            ),
            weakened=True,
            breaks=(
                "transactional_writes_authorized",
                "endless_transaction_bounded",
                "no_hanging_transaction",
                "lso_reaches_high_watermark",
            ),
            scenarios=("authz_acls_enforced",),
            bug="KIP-98 §9 endless transaction attack: a principal with only Topic Write writes transactional data "
            "that no coordinator transaction covers, and the LSO never advances",
        ),
        # -- issue 23 (reach, idempotence/transactions half) --
        Variant(
            name="init_pid_retry_fenced",
            description="TV1 with KIP-360, but the coordinator answers a retried InitProducerId(pid, epoch) -- the "
            "retry of an epoch bump whose response was lost -- PRODUCER_FENCED instead of the epoch it already "
            "bumped to (no lastProducerEpoch check).",
            flags=replace(_REAL, transaction_version=1, init_pid_retry_by_last_epoch=False),
            weakened=True,
            breaks=("healthy_producer_not_failed",),
            scenarios=("reach_txn_tv1_faulty",),
            bug="KIP-360's retry rule missing: a producer whose abortable error made it bump its epoch, and whose "
            "InitProducerId response was lost, is fenced although no other instance exists (the application must "
            "close a healthy producer)",
        ),
        Variant(
            name="complete_without_transition",
            description="The coordinator sets a transaction's cached state to CompleteCommit/CompleteAbort once its "
            "markers are written, without prepareComplete and the transaction-log append.",
            flags=replace(_REAL, complete_written_to_log=False),
            weakened=True,
            breaks=("coordinator_transitions_explained",),
            scenarios=("txn_kafka_17754_delayed_endtxn",),
            bug="a coordinator whose cache runs ahead of its log: the completion is never logged, so a failover "
            "reloads Prepare* and the client's view and the log disagree about the transaction's end",
        ),
        Variant(
            name="producer_id_reused",
            description="The transaction coordinator's producer-id allocator does not advance: an id re-created "
            "after transactional.id expiry (or rotated at an exhausted epoch) gets a producer id already in use.",
            flags=replace(_REAL, producer_id_block_advances=False),
            weakened=True,
            breaks=("producer_ids_never_reused",),
            scenarios=("txn_producer_state_expiry",),
            bug="a ProducerIdManager that hands an id out twice: the partitions still hold the old owner's producer "
            "state (epoch, sequences) and judge the new producer by it",
        ),
        Variant(
            name="no_offset_commit_generation_check",
            description="The group coordinator accepts a plain OffsetCommit whatever its member id and generation "
            "(ClassicGroup.validateOffsetCommit without the member and generation checks).",
            flags=replace(_REAL, offset_commit_generation_check=False),
            weakened=True,
            breaks=("committed_offsets_never_regress", "revoked_partitions_committed", "commits_fenced_exactly"),
            scenarios=("groups_zombie_commit",),
            bug="a consumer whose session expired (lost heartbeats) keeps processing and commits its older "
            "position after the partition's new owner committed a later one: the committed offset goes "
            "back and the group re-reads records",
        ),
        Variant(
            name="offset_commit_any_generation",
            description="The group coordinator checks that an OffsetCommit's member is in the group but accepts "
            "any generation (ClassicGroup.validateOffsetCommit without the ILLEGAL_GENERATION check).",
            flags=replace(_REAL, offset_commit_stale_generation_check=False),
            weakened=True,
            breaks=("committed_offsets_never_regress", "revoked_partitions_committed", "commits_fenced_exactly"),
            scenarios=("groups_late_commit",),
            bug="KAFKA-2555: a commit sent in an earlier generation by a member that rejoined arrives after the "
            "rebalance and overwrites the offsets committed since -- the committed offset goes back",
        ),
        Variant(
            name="offset_commit_acked_before_log",
            description="The group coordinator updates its offsets and answers an OffsetCommit before the offset "
            "commit records are written to __consumer_offsets.",
            flags=replace(_REAL, offset_commit_waits_for_log=False),
            weakened=True,
            breaks=("offsets_cache_matches_log", "committed_offsets_never_regress", "revoked_partitions_committed"),
            scenarios=("groups_coordinator_failover",),
            bug="an acknowledged commit that is not yet in the log is lost when the coordinator fails over: the "
            "new coordinator loads an older offset and the group re-reads records",
        ),
        Variant(
            name="load_commits_pending_offsets",
            description="A group coordinator that loads __consumer_offsets after a failover takes a transactional "
            "offset commit as committed, without waiting for its transaction's marker.",
            flags=replace(_REAL, load_keeps_pending_offsets=False),
            weakened=True,
            breaks=("exactly_once_processing", "committed_offsets_follow_log_order"),
            scenarios=("txn_eos_group_coordinator_failover",),
            bug="offsets of a transaction that then aborts become the group's committed offset: the records "
            "it consumed are skipped, their output never committed (the replay of a transactional record must "
            "stage it like the live TxnOffsetCommit does)",
        ),
        Variant(
            name="materialize_ignores_log_order",
            description="A COMMIT marker on __consumer_offsets materialises the transaction's pending offsets "
            "whatever the log holds after them: a plain OffsetCommit that landed after the TxnOffsetCommit is "
            "overwritten (KAFKA-5247, before Kafka 0.11.0.1).",
            flags=replace(_REAL, materialize_in_log_order=False),
            weakened=True,
            breaks=("committed_offsets_follow_log_order",),
            scenarios=("txn_eos_mixed_commits",),
            bug="KAFKA-5247: the group's committed offset is no longer the last one in __consumer_offsets, so a "
            "reload of the partition (a coordinator failover) gives another committed offset than the live cache",
        ),
        # -- issue 28: consume-transform-produce on the classic rebalance protocol (KIP-447) --
        Variant(
            name="fetch_without_require_stable",
            description="The consume-transform-produce application's consumer fetches its committed offset "
            "without requireStable (OffsetFetch < v7): a transactional offset whose marker has not reached "
            "__consumer_offsets yet is ignored and the older committed offset is answered.",
            flags=replace(_REAL, offset_fetch_require_stable=False),
            weakened=True,
            breaks=("new_owner_starts_from_stable_offset", "exactly_once_processing"),
            scenarios=("txn_eos_rebalance_join",),
            bug="KIP-447 §OffsetFetch: before requireStable a partition's new owner could start from the "
            "offset before the previous owner's just-committed transaction and process its records again",
        ),
        Variant(
            name="txn_offsets_visible_before_marker",
            description="The group coordinator answers OffsetFetch with a transactional offset as soon as "
            "TxnOffsetCommit staged it, before the transaction's COMMIT marker materialised it (no pending "
            "state, no UNSTABLE_OFFSET_COMMIT).",
            flags=replace(_REAL, pending_offsets_wait_for_marker=False),
            weakened=True,
            breaks=("new_owner_starts_from_stable_offset", "lost_partition_never_committed"),
            scenarios=("txn_eos_rebalance_session_timeout",),
            bug="offsets read uncommitted: a new owner starts after a record whose transaction then aborts "
            "-- the record's output is never committed (OffsetMetadataManager.replayEndTransactionMarker "
            "is what makes a pending offset visible)",
        ),
        Variant(
            name="txn_timeout_starved_by_waiting_client",
            description="The coordinator's transaction.timeout.ms abort fires only when nothing else happens: a "
            "new owner retrying OffsetFetch on UNSTABLE_OFFSET_COMMIT keeps a transaction only its timeout ends "
            "open forever.",
            flags=replace(_REAL, txn_timeout_fires_while_clients_wait=False),
            weakened=True,
            breaks=("transactions_complete", "lso_reaches_high_watermark_eventually"),
            scenarios=("authz_eos_shared_transactional_id_tv2",),
            bug="a hanging transaction (KAFKA-12671's symptom): the partition's last stable offset never "
            "advances and the new owner never starts, although the transaction's timeout has long passed",
        ),
        Variant(
            name="cooperative_assigns_before_revoke",
            description="The cooperative-sticky leader hands a moving partition to its new owner in the same "
            "rebalance instead of withholding it until the old owner revoked it.",
            flags=replace(_REAL, cooperative_revoke_before_reassign=False),
            weakened=True,
            breaks=("no_partition_owned_twice",),
            scenarios=("groups_cooperative_join",),
            bug="KIP-429's rule broken: the old owner keeps consuming the partition through the rebalance "
            "while the new owner already consumes it -- two members of the group own one partition",
        ),
        # -- issue 23 (granularity, transactions half): the coordinator's pending transitions --
        Variant(
            name="append_failure_keeps_pending",
            description="The transaction coordinator answers a failed __transaction_state append with its error "
            "but leaves pendingState set (appendTransactionToLog before KAFKA-5351).",
            flags=replace(_REAL, append_failure_resets_pending=False),
            weakened=True,
            breaks=("clients_settle", "transactions_complete", "coordinator_answers_per_kafka_table"),
            scenarios=("txn_pending_transitions",),
            bug="KAFKA-5351 (PR #3184): after one failed append every retry of the client is answered "
            "CONCURRENT_TRANSACTIONS forever -- the transactional.id is stuck until the coordinator moves",
        ),
        Variant(
            name="complete_retry_resets_pending",
            description="A failed CompleteCommit/CompleteAbort append resets pendingState like any other failed "
            "append, and the retried append's completeTransitionTo finds no pending state.",
            flags=replace(_REAL, complete_retry_keeps_pending=False),
            weakened=True,
            breaks=(
                "no_illegal_transition_attempt", "transactions_complete", "clients_settle",
                "coordinator_answers_per_kafka_table",
            ),
            scenarios=("txn_pending_transitions",),
            bug="KAFKA-5416 (PR #3287): the retry of the transaction's completion throws IllegalStateException "
            "and the transaction stays in PrepareCommit/PrepareAbort with its markers written",
        ),
        Variant(
            name="append_callback_ignores_coordinator_epoch",
            description="The callback of an append to __transaction_state completes or resets the cache entry "
            "whatever coordinator epoch prepared it: an old instance's append that calls back after a failover "
            "acts on the new instance's entry (updateCacheCallback without its coordinator-epoch check).",
            flags=replace(_REAL, append_callback_checks_coordinator_epoch=False),
            weakened=True,
            breaks=("coordinator_answers_per_kafka_table", "no_illegal_transition_attempt", "no_unknown_server_error"),
            scenarios=("reach_txn_loading_window",),
            bug="the emigration/immigration race appendTransactionToLog guards against (its coordinator-epoch "
            "checks): a deposed coordinator's late callback moves the new coordinator's transaction",
        ),
        Variant(
            name="no_loading_window",
            description="A coordinator still loading its __transaction_state partition serves requests from the "
            "entries it has read so far instead of answering COORDINATOR_LOAD_IN_PROGRESS.",
            flags=replace(_REAL, loading_answers_load_in_progress=False),
            weakened=True,
            breaks=("coordinator_answers_per_kafka_table",),
            scenarios=("reach_txn_loading_window",),
            bug="getTransactionState without the loadingPartitions check: a request is answered from a cache the "
            "load has not finished (Prepare* transactions whose markers are not re-sent yet)",
        ),
        Variant(
            name="expiry_failure_keeps_pending_dead",
            description="When the tombstone of an expired transactional.id fails to be appended, the coordinator "
            "leaves the entry's pendingState at Dead.",
            flags=replace(_REAL, expiry_failure_resets_pending=False),
            weakened=True,
            breaks=("clients_settle", "transactions_complete", "coordinator_answers_per_kafka_table"),
            scenarios=("txn_pending_append_failures",),
            bug="KAFKA-7519 (PR #5820): after a failed expiration the transactional.id is untouchable -- every "
            "request is answered CONCURRENT_TRANSACTIONS until a broker restart or coordinator move",
        ),
        Variant(
            name="timeout_abort_ignores_pending",
            description="The coordinator's timeout abort picks an Ongoing transaction whose EndTxn or "
            "AddPartitionsToTxn append is still in flight (timedOutTransactions without the "
            "pendingTransitionInProgress filter).",
            flags=replace(_REAL, timeout_abort_skips_pending=False),
            weakened=True,
            breaks=("no_illegal_transition_attempt",),
            scenarios=("txn_pending_transitions",),
            bug="the timeout's epoch fence is prepared over a pending transition: prepareTransitionTo throws "
            "IllegalStateException (a commit racing transaction.timeout.ms)",
        ),
        Variant(
            name="verification_append_ignores_guard",
            description="A partition leader appends a transactional batch the coordinator verified without "
            "checking that the partition's verification guard is still the one the verification started with.",
            flags=replace(_REAL, transaction_version=1, verification_guard_checked=False),
            weakened=True,
            breaks=("no_hanging_transaction", "txn_produce_answer_per_kafka"),
            scenarios=("txn_verification_round_trip_tv1",),
            bug="KIP-890 part 1's ABA (KAFKA-14884): the coordinator verifies, the client aborts and the abort "
            "marker lands, then the verified batch is appended after it -- a transaction nobody will end, the "
            "LSO stuck (the hanging transaction KIP-890 exists to prevent)",
        ),
        Variant(
            name="verification_guard_reused",
            description="A partition leader gives a new verification entry the guard of the entry a marker "
            "cleared before it, so the callback of the old verification passes the new entry's guard check.",
            flags=replace(_REAL, transaction_version=1, verification_guard_fresh=False),
            weakened=True,
            breaks=("txn_produce_answer_per_kafka", "no_hanging_transaction"),
            # not txn_tv1_verification_aba: it catches it only through its permitted atomic_commit (session 30), and
            # keos mutants wants a variant caught on each scenario it names; the abandoned-retry scenario's stale
            # verification is what leaves the transaction hanging
            scenarios=("txn_verification_tv1_abandoned_retry",),
            bug="KIP-890 part 1's ABA again, one transaction later (KAFKA-14884's reason for a guard object rather "
            "than a state): the late callback of the aborted transaction's verification appends into the next "
            "transaction of the same epoch although its entry was cleared",
        ),
        Variant(
            name="marker_keeps_verification_guard",
            description="A transaction marker leaves the producer id's verification entry in place, so a "
            "verification started before the marker still verifies after it.",
            flags=replace(_REAL, transaction_version=1, marker_clears_verification=False),
            weakened=True,
            breaks=("no_hanging_transaction", "txn_produce_answer_per_kafka"),
            scenarios=("txn_verification_round_trip_tv1",),
            bug="the VerificationStateEntry outlives its transaction (updateProducers without "
            "clearVerificationStateEntry): a late verification answer appends after the abort marker and opens "
            "a transaction the coordinator does not know",
        ),
        Variant(
            name="marker_clears_next_transaction_verification",
            description="Every transaction marker clears its producer id's verification entry, also a TV2 entry at "
            "the marker's epoch that the producer's next transaction created (UnifiedLog.updateProducers before "
            "isV2NextTransactionStarted).",
            flags=replace(_REAL, marker_keeps_next_transaction_verification=False),
            weakened=True,
            breaks=("txn_produce_answer_per_kafka", "sole_producer_not_fenced"),
            scenarios=("txn_verification_round_trip_tv2",),
            bug="under TV2 the next transaction's first batch reaches the leader before the previous transaction's "
            "marker; the marker clears its fresh verification entry and the verified batch is refused "
            "INVALID_TXN_STATE -- a healthy producer's transaction aborted for nothing (abortable since "
            "maybeTransitionToErrorState; fatal in older clients) (KAFKA-18575, PR #18604, Kafka 4.0: the leader "
            "answers CONCURRENT_TRANSACTIONS for a batch whose previous transaction is still open on the partition; "
            "fixed again in Kafka trunk 2025 by keeping the entry). Both the answer table and, in users' terms, "
            "sole_producer_not_fenced (a fault-free sole producer refused for its transaction's state) object",
        ),
        Variant(
            name="rejoin_always_rebalances",
            description="The group coordinator starts a rebalance for every JoinGroup of a known member in a Stable "
            "or CompletingRebalance group, also when its subscription metadata did not change (a JoinGroup retried "
            "after its response was lost).",
            flags=replace(_REAL, join_unchanged_answers_current_generation=False),
            weakened=True,
            breaks=("no_needless_rebalance",),
            scenarios=("groups_lost_join_response",),
            bug="classicGroupJoinExistingMember without member.matches(protocols): every retried JoinGroup -- a "
            "timeout, a broken connection -- restarts the rebalance for the whole group (a rebalance storm)",
        ),
        Variant(
            name="consumer_fails_on_rebalance_in_progress",
            description="The consumer treats REBALANCE_IN_PROGRESS in a group response as an unexpected error "
            "instead of rejoining.",
            flags=replace(_REAL, rebalance_in_progress_rejoins=False),
            weakened=True,
            breaks=("healthy_consumer_never_failed",),
            scenarios=("groups_eager_rebalance",),
            bug="AbstractCoordinator's handlers without the REBALANCE_IN_PROGRESS case: poll() raises a "
            "KafkaException in every member that learns of a rebalance from a heartbeat or a commit, and the "
            "application's loop ends although nothing is wrong with the group",
        ),
        Variant(
            name="rejoin_on_coordinator_change",
            description="A Stable consumer that learns of a new group coordinator (NOT_COORDINATOR, FindCoordinator) "
            "rejoins the group instead of heartbeating to the new coordinator with its generation and assignment.",
            flags=replace(_REAL, coordinator_change_keeps_membership=False),
            weakened=True,
            breaks=("stable_members_rejoin_on_request",),
            scenarios=("groups_coordinator_failover",),
            bug="markCoordinatorUnknown treated as a reason to rejoin: every __consumer_offsets leader change (a "
            "broker restart, a rolling upgrade) makes the group's leader force a rebalance that stops consumption "
            "in the eager protocol",
        ),
        Variant(
            name="rebalance_in_progress_resets_generation",
            description="A consumer answered REBALANCE_IN_PROGRESS (Heartbeat, OffsetCommit, SyncGroup) resets its "
            "generation and drops its partitions unrevoked, as for ILLEGAL_GENERATION, before it rejoins.",
            flags=replace(_REAL, rebalance_in_progress_keeps_generation=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_eager_rebalance",),
            bug="requestRejoin confused with resetGenerationOnResponseError: every member that learns of a rebalance "
            "from a heartbeat calls onPartitionsLost instead of committing in onPartitionsRevoked, and joins as if "
            "fenced (a cooperative member then gives up partitions that were not moving)",
        ),
        Variant(
            name="stale_heartbeat_resets_member",
            description="A consumer applies a Heartbeat's ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID whatever member id "
            "and generation the Heartbeat was sent with: a response that arrives after the member rejoined resets "
            "the generation it just got.",
            flags=replace(_REAL, heartbeat_response_checks_generation=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_late_heartbeat",),
            bug="HeartbeatResponseHandler without its generationUnchanged() check: the heartbeat thread's late "
            "response to a Heartbeat of the previous generation makes a member that just synced drop its partitions "
            "(onPartitionsLost) and rejoin, so every rebalance triggers another (a rebalance storm)",
        ),
        Variant(
            name="stale_commit_response_resets_member",
            description="A consumer applies an OffsetCommit's ILLEGAL_GENERATION / UNKNOWN_MEMBER_ID whatever member "
            "id and generation the commit was sent with: a commitAsync answer that arrives while the consumer rejoins "
            "under a new member id resets the member id its pending JoinGroup carries.",
            flags=replace(_REAL, commit_response_checks_generation=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_late_commit",),
            bug="OffsetCommitResponseHandler before KAFKA-9823 (no sentGeneration): a late commit answer of the old "
            "generation resets the member that is already rejoining; its JoinGroup's member id is abandoned and the "
            "group waits for it until the rebalance timeout",
        ),
        Variant(
            name="pending_member_stays_pending",
            description="A pending member (KIP-394) that joins with the member id MEMBER_ID_REQUIRED handed out is "
            "added to the group but not removed from the pending members: the join barrier waits for it for ever.",
            flags=replace(_REAL, pending_member_cleared_on_join=False),
            weakened=True,
            breaks=("rebalance_completes", "coordinator_holds_subscription"),
            scenarios=("groups_member_id_required",),
            bug="ClassicGroup.add without pendingJoinMembers.remove: hasAllMembersJoined never holds again once a "
            "consumer used the KIP-394 round trip, so every rebalance of a v4+ group hangs until the pending "
            "member's session times out -- which a live, heartbeating member never does",
        ),
        Variant(
            name="join_forgets_other_pending_members",
            description="A JoinGroup that admits a member forgets every other pending member (KIP-394) too: the "
            "consumer holding such an id is answered UNKNOWN_MEMBER_ID and must start its join over.",
            flags=replace(_REAL, pending_member_kept_on_other_join=False),
            weakened=True,
            breaks=("healthy_member_never_removed",),
            scenarios=("groups_member_id_required",),
            bug="a pendingJoinMembers cleared wholesale on ClassicGroup.add instead of removing the joining id: two "
            "consumers starting together each need a third JoinGroup, and under churn a slow one may never get in",
        ),
        Variant(
            name="pending_member_never_expires",
            description="A pending member (KIP-394) whose JoinGroup never comes back is never removed: the join "
            "barrier waits for it for ever.",
            flags=replace(_REAL, pending_members_expire=False),
            weakened=True,
            breaks=("rebalance_completes",),
            scenarios=("groups_member_id_required",),
            bug="KAFKA-7909 / KAFKA-9752 shape: a consumer whose MEMBER_ID_REQUIRED answer was lost leaves an orphan "
            "pending member; without its session expiry (and the barrier check that follows) the group stays in "
            "PreparingRebalance and no member consumes",
        ),
        Variant(
            name="rebalance_timeout_keeps_generation",
            description="When rebalance.timeout.ms expires before every member rejoined, the coordinator removes the "
            "dynamic members that did not rejoin and completes the join, but answers the members that did with the "
            "current generation instead of the next one.",
            flags=replace(_REAL, rebalance_timeout_advances_generation=False),
            weakened=True,
            breaks=("same_generation_owners_disjoint",),
            scenarios=("groups_rebalance_timeout_static",),
            bug="completeClassicGroupJoin without initNextGeneration on the timeout path: a member removed for not "
            "rejoining may still be consuming its partitions as a member of generation N (it has not heard of the "
            "rebalance), while the leader hands them to another member, also in generation N -- two owners the "
            "generation cannot tell apart, and its stale commits carry the generation the group answers",
        ),
        Variant(
            name="rebalance_timeout_answers_old_group",
            description="When rebalance.timeout.ms completes the join, the coordinator answers the waiting members "
            "from the group as it was before the timeout: the generation it has just left.",
            flags=replace(_REAL, rebalance_timeout_answers_new_group=False),
            weakened=True,
            breaks=("consumer_identity_issued",),
            scenarios=("groups_rebalance_timeout_static",),
            bug="the delayed join's completion answering from a stale copy of the group (the generation before "
            "initNextGeneration): every member's SyncGroup is fenced with ILLEGAL_GENERATION and the group rebalances "
            "again, or -- with the removed members answered too -- a member the coordinator dropped believes it syncs",
        ),
        Variant(
            name="rebalance_timeout_removes_static",
            description="When rebalance.timeout.ms expires before every member rejoined, the coordinator removes "
            "the static members that did not rejoin too, as it does dynamic ones.",
            flags=replace(_REAL, rebalance_timeout_keeps_static=False),
            weakened=True,
            breaks=("healthy_member_never_removed",),
            scenarios=("groups_rebalance_timeout_static",),
            bug="completeClassicGroupJoin without the isStaticMember filter: KIP-345's promise broken -- a static "
            "member whose process is merely slow to rejoin (within its session timeout) loses its membership and "
            "its assignment, and its return is a new member and another rebalance",
        ),
        Variant(
            name="join_rebalance_in_progress_fatal",
            description="The consumer's JoinGroup response handler does not name REBALANCE_IN_PROGRESS: a static "
            "member's new process whose replacement the coordinator failed to write (a replication timeout) fails.",
            flags=replace(_REAL, join_rebalance_in_progress_retried=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_append_failure",),
            bug="KAFKA-10870 (e3ce4a6e11d, PR #9792, Kafka 2.8; AbstractCoordinator.JoinGroupResponseHandler): the "
            "Scala GroupMetadataManager.storeGroup answers a timed-out group-metadata write REBALANCE_IN_PROGRESS, "
            "and the client raised it from poll() as 'Unexpected error in join group response'",
        ),
        Variant(
            name="append_not_enough_replicas_unmapped",
            description="The group coordinator answers a request whose write to __consumer_offsets failed with "
            "NOT_ENOUGH_REPLICAS (min.insync.replicas not met) that storage error itself, not "
            "COORDINATOR_NOT_AVAILABLE: the consumer's response handler does not know it and fails.",
            flags=replace(_REAL, append_replication_errors_mapped=False),
            weakened=True,
            breaks=("consumers_react_as_kafka", "healthy_consumer_never_failed", "stable_members_rejoin_on_request",
                    "rebalance_completes"),
            scenarios=("groups_append_failure",),
            bug="KAFKA-3590 (6a13a3dbadd, PR #1859, Kafka 0.10.1; kafka.coordinator.GroupMetadataManager "
            "prepareStoreGroup/prepareStoreOffsets): the translation of the offsets-topic append error named "
            "UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_FOR_PARTITION and REQUEST_TIMED_OUT only; NOT_ENOUGH_REPLICAS "
            "reached the client, and a consumer committing or syncing while the offsets partition was under-replicated "
            "failed with an unexpected error",
        ),
        Variant(
            name="no_kafka_17267_fix",
            description="The group coordinator answers a requireStable OffsetFetch whose write operation timed out "
            "(or met NOT_ENOUGH_REPLICAS / UNKNOWN_TOPIC_OR_PARTITION) with that error itself, not NOT_COORDINATOR: a "
            "consumer before 3.9 does not retry it and fails.",
            flags=replace(_REAL, offset_fetch_write_failures_remapped=False),
            weakened=True,
            breaks=("consumers_react_as_kafka", "healthy_consumer_never_failed", "rebalance_completes"),
            scenarios=("groups_offset_fetch_failure",),
            bug="KAFKA-17267 (7a8edffad10, PR #16825, Kafka 3.9; GroupCoordinatorService.fetchOffsets): the new "
            "coordinator's requireStable fetch is a write operation, which times out behind a lagging replica or a "
            "zombie coordinator; REQUEST_TIMED_OUT reached consumers that do not expect it",
        ),
        Variant(
            name="no_kafka_17279_fix",
            description="The consumer's OffsetFetchResponseHandler retries only COORDINATOR_LOAD_IN_PROGRESS and "
            "NOT_COORDINATOR: COORDINATOR_NOT_AVAILABLE (an inactive coordinator) is raised from poll() as an "
            "unexpected error.",
            flags=replace(_REAL, offset_fetch_retries_retriable=False),
            weakened=True,
            breaks=("consumers_react_as_kafka", "healthy_consumer_never_failed", "rebalance_completes"),
            scenarios=("groups_offset_fetch_failure",),
            bug="KAFKA-17279 (c2074388232, PR #16826, Kafka 3.9; ConsumerCoordinator.OffsetFetchResponseHandler): "
            "retriable OffsetFetch errors other than COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR were fatal",
        ),
        Variant(
            name="no_kafka_3949_fix",
            description="The group leader does not check, once the rebalance completes, that the metadata its "
            "assignment was computed on is still current: a partition added between its JoinGroup answer and its "
            "SyncGroup is never assigned.",
            flags=replace(_REAL, leader_checks_assignment_snapshot=False),
            weakened=True,
            breaks=("rebalance_completes",),
            scenarios=("groups_partitions_added",),
            bug="KAFKA-3949 (317c4fdede4, Kafka 0.10.1; ConsumerCoordinator): a metadata update that arrived during a "
            "rebalance was lost -- the leader never noticed its assignment was computed on old metadata",
        ),
        Variant(
            name="no_kafka_7196_fix",
            description="The group coordinator's session-timer handler does not check that the group still holds "
            "the member id whose timer fired: the timer a static member's replaced id leaves scheduled rebalances a "
            "Stable group whose membership did not change.",
            flags=replace(_REAL, expired_timer_checks_member=False),
            weakened=True,
            breaks=("rebalance_has_cause",),
            scenarios=("groups_static_membership",),
            bug="KAFKA-7196 (260b07a6da0, Kafka 2.1; GroupCoordinator.onCompleteJoin left the heartbeat of a member "
            "removed for not rejoining in the purgatory, and its expiry triggered another, needless rebalance) and "
            "KAFKA-8896 (270e6109159, Kafka 2.4: the delayed heartbeat of a member no longer in the group crashed "
            "the coordinator's handler)",
        ),
        Variant(
            name="no_pending_sync_expiry",
            description="The group coordinator has no pending-sync timer: a member of the new generation that keeps "
            "heartbeating but never sends its SyncGroup holds the group in CompletingRebalance (the heartbeats keep "
            "its session alive since KAFKA-10134).",
            flags=replace(_REAL, pending_sync_expires=False),
            weakened=True,
            breaks=("rebalance_completes",),
            scenarios=("groups_stalled_sync",),
            bug="KAFKA-12890 (d294b946ca7, PR #10863, Kafka 3.0; GroupCoordinator.scala's DelayedSync, trunk 1eb7644 "
            "GroupMetadataManager.schedulePendingSync / expirePendingSync): 'Consumer group stuck in "
            "CompletingRebalance' -- the DelayedHeartbeat that used to expire such a member no longer does once "
            "heartbeats are allowed while the group completes its rebalance, so every member waits for ever",
        ),
        Variant(
            name="rejoin_keeps_old_subscription",
            description="The group coordinator admits a known member's JoinGroup without storing the subscription it "
            "carries: the leader's assignor goes on reading the ownedPartitions of the member's first JoinGroup.",
            flags=replace(_REAL, join_updates_member_metadata=False),
            weakened=True,
            breaks=("coordinator_holds_subscription", "no_partition_owned_twice"),
            scenarios=("groups_cooperative_follower_revoke",),
            bug="updateMemberAndRebalance without setSupportedProtocols: a cooperative member that revoked a partition "
            "still 'owns' it for the assignor, which withholds it from its new owner for ever (the rebalance never "
            "completes), and the stale claim makes every retried JoinGroup look changed",
        ),
        Variant(
            name="stale_sync_response_adopted",
            description="A consumer takes the assignment of a SyncGroup answer that arrives after the heartbeat "
            "thread reset its generation (the member's session expired meanwhile).",
            flags=replace(_REAL, sync_response_checks_generation=False),
            weakened=True,
            breaks=("fenced_consumer_owns_nothing", "consumers_react_as_kafka"),
            scenarios=("groups_late_sync_response",),
            bug="SyncGroupResponseHandler without its hasGenerationReset check: a member fenced while its SyncGroup "
            "was in flight consumes the partitions of a generation it no longer belongs to, beside their new owner "
            "(KAFKA-8104, fixed in 2.5 by commit 00374c3ddf6, AbstractCoordinator.joinGroupIfNeeded: the heartbeat "
            "thread's maybeLeaveGroup cleared the generation and the consumer thread still ran onJoinComplete)",
        ),
        Variant(
            name="join_prepare_skips_failed_commit",
            description="onJoinPrepare takes a retriable failure of its auto-commit (NOT_COORDINATOR: the group "
            "coordinator moved while the OffsetCommit was in flight) as the end of the commit: it revokes every "
            "partition (eager) with its position uncommitted and goes on to JoinGroup.",
            flags=replace(_REAL, join_prepare_retries_commit=False),
            weakened=True,
            breaks=("revoked_partitions_committed",),
            scenarios=("groups_coordinator_moved_commit",),
            bug="onJoinPrepare before KAFKA-13310/KAFKA-14024's retry of a retriable async-commit failure (and the "
            "shape of KAFKA-12983: join preparation not redone): the revoked partitions' next owner starts at an "
            "older committed offset and processes records again after every coordinator move during a rebalance",
        ),
        Variant(
            name="close_commit_not_retried",
            description="KafkaConsumer.close() sends its auto-commit once: answered NOT_COORDINATOR (the group "
            "coordinator moved while the OffsetCommit was in flight), it is not sent again; the consumer revokes its "
            "partitions and leaves the group with their positions uncommitted.",
            flags=replace(_REAL, close_commit_retried=False),
            weakened=True,
            breaks=("revoked_partitions_committed",),
            scenarios=("groups_close_coordinator_moved",),
            bug="KAFKA-7540 (fixed in Kafka 3.2, commit 3a8f6b17a6a, PR #11898, ConsumerCoordinator.close): close() "
            "committed with maybeAutoCommitOffsetsAsync, and an asynchronous commit's retriable failure is never "
            "retried -- after a broker bounce moved the group coordinator, the closed consumer's partitions went to "
            "their next owner at an older committed offset and their records were processed again",
        ),
        Variant(
            name="standalone_commit_member_checked",
            description="An Empty group refuses an OffsetCommit without group metadata (generation -1, no member "
            "id) that carries a group.instance.id -- a consumer using assign() with group.instance.id configured: "
            "the member checks answer UNKNOWN_MEMBER_ID.",
            flags=replace(_REAL, standalone_commit_in_empty_group=False),
            weakened=True,
            breaks=("commits_fenced_exactly",),
            scenarios=("groups_standalone_commit",),
            bug="KAFKA-14201 (fixed in Kafka 3.4, commits 706adc39f6a server side and b7f20be809c client side, "
            "GroupCoordinator.validateOffsetCommit / ConsumerCoordinator.sendOffsetCommitRequest): a consumer with "
            "group.instance.id set but partitions assigned by assign() could not commit its offsets at all -- "
            "'surprising UNKNOWN_MEMBER_ID' on every commit of an Empty group",
        ),
        Variant(
            name="expired_group_keeps_generation",
            description="When an Empty group's offsets expire the coordinator writes the group's tombstone but keeps "
            "the group in memory with its generation; a coordinator that loads the partition finds no group.",
            flags=replace(_REAL, expiry_deletes_group=False),
            weakened=True,
            breaks=("group_metadata_matches_log",),
            scenarios=("groups_offsets_expiry",),
            bug="the live group and the log disagree after cleanupGroupMetadata (GroupMetadataManager.maybeDeleteGroup "
            "not applied to the in-memory group): the generation a failover restores differs from the one the members "
            "were told, and a load that ignores the tombstone (resurrecting the group) goes unseen",
        ),
        Variant(
            name="offset_fetch_served_while_loading",
            description="A group coordinator still loading the group's __consumer_offsets partition answers "
            "OffsetFetch from its cache instead of COORDINATOR_LOAD_IN_PROGRESS.",
            flags=replace(_REAL, offset_fetch_checks_loading=False),
            weakened=True,
            breaks=("coordinator_answers_per_kafka_table",),
            scenarios=("txn_eos_group_coordinator_failover",),
            bug="a read of a LOADING shard that skips CoordinatorRuntime.withActiveContextOrThrow: the new owner of a "
            "partition starts from a partially loaded cache (no committed offset yet: auto.offset.reset, records "
            "processed twice; a transactional offset not yet pending: read past an open transaction)",
        ),
        Variant(
            name="offset_fetch_unstable_without_require_stable",
            description="The group coordinator answers UNSTABLE_OFFSET_COMMIT to an OffsetFetch without "
            "requireStable too: an administrator's read of the committed offsets fails for as long as a "
            "transaction of the group is open.",
            flags=replace(_REAL, offset_fetch_honours_require_stable=False),
            weakened=True,
            breaks=("coordinator_answers_per_kafka_table",),
            scenarios=("txn_eos_offsets_only",),
            bug="the answer to a request flag no client of the scenarios varies (the consumer always sends "
            "requireStable=true): Admin.listConsumerGroupOffsets (requireStable=false by default: "
            "kafka-consumer-groups --describe, lag monitors, MirrorMaker 2 checkpoints) must get the last committed "
            "offset, never a retriable refusal, while a transaction is open",
        ),
        Variant(
            name="no_commit_on_revoke",
            description="Consumers give partitions up without committing their positions first "
            "(enable.auto.commit=false and a ConsumerRebalanceListener whose onPartitionsRevoked does not commit).",
            flags=replace(_REAL, commit_on_revoke=False),
            weakened=True,
            breaks=("revoked_partitions_committed",),
            scenarios=("groups_eager_late_join_zombie",),
            bug="the rebalance listener's contract broken (the book §7.2, ConsumerRebalanceListener javadoc): the "
            "partition's next owner starts from an older committed offset and processes records again",
        ),
        Variant(
            name="no_offset_fetch_on_assign",
            description="A consumer starts every partition a rebalance gives it at auto.offset.reset (earliest) "
            "without fetching the group's committed offset (OffsetFetch skipped or its answer ignored).",
            flags=replace(_REAL, offset_fetch_on_assign=False),
            weakened=True,
            breaks=("new_owner_resumes_at_committed_offset",),
            scenarios=("groups_offsets_expiry",),
            bug="ConsumerCoordinator.initWithCommittedOffsetsIfNeeded not run for a newly assigned partition: the "
            "new owner re-reads records whose processing was committed, and its next commit moves the offset back",
        ),
        Variant(
            name="fenced_member_keeps_partitions",
            description="A consumer answered UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION keeps the partitions it owned, "
            "and its positions, while it rejoins (no onPartitionsLost).",
            flags=replace(_REAL, fenced_member_loses_partitions=False),
            weakened=True,
            breaks=("consumers_react_as_kafka", "fenced_consumer_owns_nothing"),
            scenarios=("groups_zombie_commit",),
            bug="KAFKA-13419-like: a member fenced out of the group (its session expired, its generation is gone) "
            "keeps ownedPartitions; a cooperative member goes on consuming partitions the group already gave to "
            "another member, and claims them again in its next JoinGroup",
        ),
        Variant(
            name="static_member_not_fenced",
            description="The group coordinator validates a static member's requests by member id alone: the process a "
            "new one with the same group.instance.id replaced is answered UNKNOWN_MEMBER_ID, not FENCED_INSTANCE_ID.",
            flags=replace(_REAL, static_member_fencing=False),
            weakened=True,
            breaks=("group_requests_fenced_exactly", "commits_fenced_exactly", "healthy_consumer_never_failed"),
            scenarios=("groups_static_membership",),
            bug="ClassicGroup.validateMember without the instance check (KIP-345): two processes started with one "
            "group.instance.id (a redeployed pod whose predecessor still runs) replace each other for ever, each "
            "rejoin handing the old one's partitions to the other, instead of the replaced one failing fatally",
        ),
        Variant(
            name="sync_rebalance_in_progress_resets_generation",
            description="A consumer whose SyncGroup is answered REBALANCE_IN_PROGRESS resets its generation and loses "
            "its partitions before it rejoins, instead of rejoining with them.",
            flags=replace(_REAL, sync_rebalance_keeps_generation=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_cooperative_commit_rebalance",),
            bug="SyncGroupResponseHandler taking REBALANCE_IN_PROGRESS as a fenced generation (KAFKA-13891, reverted "
            "by KAFKA-14016): a cooperative member loses the partitions it still owns and sends no generation in its "
            "ownedPartitions claim, so every SyncGroup that meets a new rebalance costs a full revocation and, with "
            "KIP-792 claims, the sticky assignor cannot tell the member's claim from a stale one",
        ),
        Variant(
            name="rebalance_timeout_keeps_unjoined_leader",
            description="When rebalance.timeout.ms completes the join, the old leader stays leader while it is still a "
            "member, although it did not rejoin (a static member kept by KIP-345).",
            flags=replace(_REAL, timeout_elects_joined_leader=False),
            weakened=True,
            breaks=("generation_leader_rejoined",),
            scenarios=("groups_rebalance_timeout_static",),
            bug="completeClassicGroupJoin without maybeElectNewJoinedLeader (KAFKA-8220): the leader of the new "
            "generation has no JoinGroup pending, so no member list reaches anyone who runs the assignor; the group "
            "waits in CompletingRebalance until the leader rejoins or its session expires, then rebalances again",
        ),
        Variant(
            name="retriable_join_error_resets_member",
            description="A JoinGroup or SyncGroup that failed because the group coordinator moved (NOT_COORDINATOR, a "
            "disconnect) resets the consumer's member id and generation and loses its partitions before it rejoins.",
            flags=replace(_REAL, retriable_join_error_keeps_member=False),
            weakened=True,
            breaks=("coordinator_move_keeps_member",),
            scenarios=("groups_coordinator_moved_mid_rebalance",),
            bug="KAFKA-13214 (fixed in 3.1 by apache/kafka PR #11231: clients/.../AbstractCoordinator.java "
            "joinGroupIfNeeded): every retriable error of a rebalance went through resetStateAndRejoin; a coordinator "
            "change mid-rebalance made the member rejoin as a new one -- its old member id stayed in the group until "
            "its session expired, delaying the rebalance -- and onJoinPrepare, now with no generation, called "
            "onPartitionsLost: a cooperative member lost the partitions it had kept through the rebalance, uncommitted",
        ),
        Variant(
            name="failed_sync_ends_rebalance",
            description="An eager consumer whose SyncGroup failed because the coordinator moved takes up the "
            "assignment onJoinPrepare revoked again, as if the rebalance were over, instead of rejoining.",
            flags=replace(_REAL, failed_sync_requests_rejoin=False),
            weakened=True,
            breaks=("coordinator_move_keeps_member", "rebalance_completes"),
            scenarios=("groups_coordinator_moved_mid_rebalance",),
            bug="KAFKA-5154 (fixed in 0.11 by apache/kafka commit 1b16acaaa18: clients/.../AbstractCoordinator.java, "
            "rejoinNeeded cleared in the SyncGroup response handler instead of the JoinGroup one): a SyncGroup "
            "cancelled by a disconnect left rejoinNeeded false, so the consumer stopped rebalancing and fetched the "
            "partitions its onPartitionsRevoked had given up while the group handed them to other members",
        ),
        Variant(
            name="join_prepare_fetches_revoking_partitions",
            description="An eager consumer keeps fetching, and handing to the application, the partitions it is about "
            "to revoke while its onJoinPrepare auto-commit is in flight; the revocation that follows commits nothing "
            "more.",
            flags=replace(_REAL, join_prepare_pauses_partitions=False),
            weakened=True,
            breaks=("revoked_partitions_committed",),
            scenarios=("groups_async_join_prepare",),
            bug="KAFKA-14196 (fixed in 3.3 by apache/kafka PR #12603: clients/.../ConsumerCoordinator.java "
            "onJoinPrepare, clients/.../SubscriptionState.java markPendingRevocation): since 3.2 onJoinPrepare's "
            "auto-commit is asynchronous and poll kept returning records of the partitions being revoked; their "
            "positions were never committed, so the next owner consumed them again (duplicates at every rebalance)",
        ),
        Variant(
            name="join_prepare_skips_revoke_after_fenced_commit",
            description="An eager consumer whose onJoinPrepare auto-commit is answered UNKNOWN_MEMBER_ID or "
            "ILLEGAL_GENERATION keeps its partitions (its generation reset by the response handler) and returns "
            "without revoking or joining.",
            flags=replace(_REAL, join_prepare_revokes_after_fenced_commit=False),
            weakened=True,
            breaks=("fenced_consumer_owns_nothing", "consumers_react_as_kafka"),
            scenarios=("groups_eager_late_join_zombie",),
            bug="onJoinPrepare treating a fenced commit like a retriable one (KAFKA-12983's shape: a prepare step "
            "skipped): the fenced member keeps partitions the group has handed to others, with no generation to fence "
            "its own commits by",
        ),
        Variant(
            name="join_prepare_commit_keeps_identity",
            description="An eager consumer whose onJoinPrepare auto-commit is answered UNKNOWN_MEMBER_ID or "
            "ILLEGAL_GENERATION revokes and joins, but its JoinGroup carries the member id and generation the commit "
            "was fenced for.",
            flags=replace(_REAL, join_prepare_commit_resets_identity=False),
            weakened=True,
            breaks=("consumers_react_as_kafka",),
            scenarios=("groups_eager_late_join_zombie",),
            bug="onJoinPrepare ignoring what OffsetCommitResponseHandler reset: the JoinGroup of a member the group "
            "removed carries a member id it forgot (answered UNKNOWN_MEMBER_ID: one more round trip before the "
            "member can rejoin), or a fenced generation as its ownedPartitions' generation (KIP-792: a stale claim)",
        ),
        Variant(
            name="static_member_leaves_group",
            description="A static member's consumer sends LeaveGroup when it closes or its poll timeout expires, as a "
            "dynamic member's does.",
            flags=replace(_REAL, static_member_stays_on_close=False),
            weakened=True,
            breaks=("healthy_member_never_removed",),
            scenarios=("groups_rebalance_timeout_static",),
            bug="maybeLeaveGroup without the isDynamicMember() test (the client before KIP-345's 2.3): a static "
            "member's bounce removes it from the group and rebalances it, the rebalance static membership exists to "
            "avoid, and the restarted process rejoins as a new member",
        ),
        Variant(
            name="static_rejoin_rebalances",
            description="A restarted static member (a JoinGroup with no member id and a group.instance.id the group "
            "holds) makes a Stable group rebalance, as a new member would.",
            flags=replace(_REAL, static_rejoin_keeps_generation=False),
            weakened=True,
            breaks=("no_needless_rebalance",),
            scenarios=("groups_static_membership",),
            bug="updateStaticMemberThenRebalanceOrCompleteJoin rebalancing in Stable: KIP-345's purpose lost -- every "
            "rolling restart of a static consumer stops the whole group's consumption for a rebalance",
        ),
        Variant(
            name="static_rejoin_completing_no_rebalance",
            description="A restarted static member joining while the group is CompletingRebalance takes the old "
            "member's place without a rebalance; the leader's SyncGroup then carries an assignment computed for the "
            "old member id (KAFKA-9801, before Kafka 2.5).",
            flags=replace(_REAL, static_rejoin_completing_rebalances=False),
            weakened=True,
            breaks=("rebalance_completes",),
            scenarios=("groups_static_membership",),
            bug="KAFKA-9801: the static member's new member id is in no assignment of the generation, so it gets an "
            "empty one and its partitions are consumed by nobody until the next rebalance",
        ),
        Variant(
            name="load_drops_subscriptions",
            description="A group coordinator that loads __consumer_offsets after a failover restores each member's "
            "assignment but not the subscription metadata (ownedPartitions, generation) its GroupMetadata record "
            "carries.",
            flags=replace(_REAL, load_restores_subscriptions=False),
            weakened=True,
            breaks=("group_metadata_matches_log",),
            scenarios=("groups_coordinator_failover",),
            bug="GroupMetadataManager.replay without MemberMetadata.subscription: after every __consumer_offsets "
            "leader change a follower's retried JoinGroup looks changed and restarts the rebalance, and a "
            "cooperative-sticky leader elected before every member rejoined assigns from empty ownership claims",
        ),
    )
}


#: Every authorization check of KafkaApis' transactional handlers (Kafka 4.0, ``KafkaApis.scala`` at apache/kafka
#: 1eb7644; :mod:`model.security.checks`), one per ``authHelper.authorize`` call, and the weakened variant that
#: leaves it out -- alone: the handler after it still checks the same binding.  A denial is a reach dimension as a
#: fault is: a check no scenario ever answers with a refusal, or only before an ACL change, is a check the gate
#: cannot tell from a missing one, so each variant names a scenario where the binding is missing from the start
#: and one where an operator revokes it mid-transaction (the ``authz_matrix`` cells), and ``keos mutants`` must
#: catch every one.  Three are older variants of their own; the others are generated below.
AUTHORIZATION_CHECKS: dict[str, str] = {
    "InitProducerId:TransactionalId": "init_producer_id_without_transactional_id_acl",
    "AddPartitionsToTxn:TransactionalId": "add_partitions_without_transactional_id_acl",
    "AddPartitionsToTxn:Topic": "add_partitions_without_topic_acl",
    "AddOffsetsToTxn:TransactionalId": "add_offsets_without_transactional_id_acl",
    "AddOffsetsToTxn:Group": "add_offsets_without_group_acl",
    "TxnOffsetCommit:TransactionalId": "txn_offset_commit_without_transactional_id_acl",
    "TxnOffsetCommit:Group": "txn_offset_commit_without_group_acl",
    "EndTxn:TransactionalId": "end_txn_without_transactional_id_acl",
    "Produce:TransactionalId": "produce_without_transactional_id_acl",
    "Produce:Topic": "produce_without_topic_acl",
    "WriteTxnMarkers:Cluster": "markers_without_cluster_action",
}

_UNCHANGED = "unauthorized_never_changes_transaction"
_WRITES = "transactional_writes_authorized"

#: The generated ones: check -> (transaction.version, what the dropped check lets through, the properties expected
#: to catch it, the scenarios that deny its binding: missing first where a missing binding reaches the handler,
#: then revoked mid-transaction).
_CHECK_VARIANTS: dict[str, tuple[int, str, tuple[str, ...], tuple[str, ...]]] = {
    "InitProducerId:TransactionalId": (
        2,
        "a principal without Write on a transactional.id initialises it, fencing its producer (KIP-98 §9)",
        (_UNCHANGED,),
        ("authz_matrix_tv2_write_transactionalid_missing", "authz_matrix_tv2_write_transactionalid_revoked"),
    ),
    "AddPartitionsToTxn:TransactionalId": (
        1,
        "a producer whose Write on its transactional.id was revoked still adds partitions to its transaction",
        (_UNCHANGED,),
        (
            "authz_matrix_tv1_write_transactionalid_revoked",
            "authz_matrix_tv1_write_transactionalid_write_topic_revoked",
        ),
    ),
    "AddOffsetsToTxn:TransactionalId": (
        1,
        "a producer whose Write on its transactional.id was revoked still adds the group's offsets to its transaction",
        (_UNCHANGED,),
        (
            "authz_matrix_eostv1_write_transactionalid_read_group_revoked",
            "authz_matrix_eostv1_write_transactionalid_revoked",
        ),
    ),
    "AddOffsetsToTxn:Group": (
        1,
        "a producer without Read on the group gets the group's offsets partition into its transaction (the "
        "coordinator then writes its markers there), although its TxnOffsetCommit is refused",
        (_UNCHANGED,),
        ("authz_matrix_eostv1_read_group_revoked", "authz_matrix_eostv1_write_transactionalid_read_group_revoked"),
    ),
    "TxnOffsetCommit:TransactionalId": (
        2,
        "a producer whose Write on its transactional.id was revoked still stages offsets in the group",
        (_UNCHANGED, "transactional_offsets_authorized"),
        ("authz_matrix_eos_write_transactionalid_revoked", "authz_matrix_eos_write_transactionalid_read_group_revoked"),
    ),
    "TxnOffsetCommit:Group": (
        2,
        "a producer without Read on the group stages offsets for it and gets the group's offsets partition into "
        "its transaction (TV2: TxnOffsetCommit adds it)",
        ("transactional_offsets_authorized", _UNCHANGED),
        ("authz_matrix_eos_read_group_revoked", "authz_matrix_eos_write_transactionalid_read_group_revoked"),
    ),
    "EndTxn:TransactionalId": (
        2,
        "a producer whose Write on its transactional.id was revoked still commits or aborts its transaction",
        (_UNCHANGED,),
        (
            "authz_matrix_tv2_write_transactionalid_revoked",
            "authz_matrix_tv2_write_transactionalid_write_topic_revoked",
        ),
    ),
    "Produce:Topic": (
        2,
        "a transactional producer without Write on a topic appends to it and, on TV2, gets its partition into the "
        "transaction",
        (_WRITES, "transaction_partitions_authorized"),
        ("authz_matrix_tv2_write_topic_missing", "authz_matrix_tv2_write_topic_revoked"),
    ),
}


def _check_variant(check: str) -> Variant:
    tv, lets_through, breaks, scenarios = _CHECK_VARIANTS[check]
    api, resource = check.split(":")
    op = "Read" if resource == "Group" else "Write"
    return Variant(
        name=AUTHORIZATION_CHECKS[check],
        description=f"{api} skips its {op} check on the {resource}; every other handler still makes it.",
        flags=replace(_REAL, transaction_version=tv, authorization_check_skipped=check),
        weakened=True,
        breaks=breaks,
        scenarios=scenarios,
        bug=f"KIP-98 §9 with KafkaApis.handle{api}Request's {op} check on the {resource} dropped (one "
        f"authHelper.authorize call, Kafka 4.0): {lets_through}",
    )


VARIANTS.update((v.name, v) for v in map(_check_variant, _CHECK_VARIANTS))

def get_variant(name: str) -> Variant:
    """Look up a variant; raises ``KeyError`` with the known names."""
    try:
        return VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r} (known: {', '.join(sorted(VARIANTS))})") from None
