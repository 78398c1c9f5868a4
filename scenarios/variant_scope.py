"""Which protocol switches each scenario model reads, so a variant that changes nothing is refused.

A variant (:mod:`keos.model.variants`) changes switches of :class:`~keos.model.variants.ProtocolFlags`.
A switch matters only to the components that read it: ``transaction_version`` to the transaction
coordinator and transactional writes (KIP-890), ``force_idempotence_off`` to the idempotent
producer of the ``idempotence`` model, the ``connect_*`` switches to Kafka Connect's KIP-618
source tasks and herder.  Running ``--scenario idempotence_retry --variant pre_kip_890`` would
check the real protocol under a weakened name and pass; :func:`variant_applies` says so instead.

The table follows the readers of each switch in ``model/`` (``model/log/partition.py`` and
``model/log/producer_state.py`` serve every model's partition leaders; the transaction
coordinator serves ``transactions``, ``eos`` and ``connect``).
"""

from __future__ import annotations

from dataclasses import fields

from keos.model.variants import ProtocolFlags, Variant

__all__ = ["FLAG_MODELS", "changed_flags", "variant_applies"]

_ALL = frozenset({"idempotence", "transactions", "eos", "connect"})
_TXN = frozenset({"transactions", "eos", "connect"})

#: switch -> the scenario models whose components read it.
FLAG_MODELS: dict[str, frozenset[str]] = {
    "check_epoch": _ALL,
    "check_sequence": _ALL,
    "duplicate_window": _ALL,
    "sequence_space": _ALL,
    "force_idempotence_off": frozenset({"idempotence"}),
    "transaction_version": _TXN,
    "partition_verification": _TXN,
    "txn_offset_commit_verification": frozenset({"eos"}),
    # [eos] txn_offset_commit_round_trip: the group coordinator's verification callback (KAFKA-15784)
    "txn_offset_commit_validates_after_verification": frozenset({"eos"}),
    "txn_offset_commit_guard_checked": frozenset({"eos"}),
    "timeout_abort_bumps_epoch": _TXN,
    "kip_360": frozenset({"transactions", "eos"}),
    "send_error_aborts_transaction": frozenset({"transactions", "eos"}),
    "complete_after_markers": frozenset({"transactions", "eos"}),
    "generation_fencing": frozenset({"eos"}),
    "offsets_in_transaction": frozenset({"eos"}),
    "tv2_offsets_without_add_offsets": frozenset({"eos"}),
    "seek_after_abort": frozenset({"eos"}),
    "connect_reread_after_producer_init": frozenset({"connect"}),
    "connect_transactional_leader": frozenset({"connect"}),
    "connect_offsets_in_transaction": frozenset({"connect"}),
    "connect_zombie_fencing": frozenset({"connect"}),
    "connect_failed_task_stays_failed": frozenset({"connect"}),
    "connect_tombstone_to_global_first": frozenset({"connect"}),
    "connect_abort_commits_offsets": frozenset({"connect"}),
    "connect_stopping_task_skips_producer": frozenset({"connect"}),
    "connect_config_update_fails_fencing": frozenset({"connect"}),
    # the transaction coordinator and transactional writes (issue 13's fixes)
    "ongoing_txn_check_epoch": _TXN,
    "marker_retry_same_epoch": _TXN,
    "marker_retriable_errors_retried": _TXN,
    "marker_cancel_checks_transaction": _TXN,
    "marker_storage_error_retried": _TXN,
    "txn_reload_replaces_cache": _TXN,
    "failed_fence_keeps_bump": _TXN,
    "end_txn_concurrent_in_prepare": _TXN,
    "commit_retry_after_abort_fenced": _TXN,
    "tv2_empty_abort_in_table": _TXN,
    "single_fence_bump": _TXN,
    "fence_rotates_exhausted_producer_id": _TXN,
    "transit_records_previous_producer_id": _TXN,
    "empty_abort_rotates_producer_id": _TXN,
    # authorization (KIP-98 §9): the transactions system's handlers
    "authorize_transactional_id": frozenset({"transactions", "eos"}),
    "authorize_transactional_produce": frozenset({"transactions", "eos"}),
    "authorize_marker_cluster_action": frozenset({"transactions", "eos"}),
    "authorize_add_partitions_topic": frozenset({"transactions", "eos"}),
    "reject_client_control_records": frozenset({"transactions", "eos"}),
    "authorize_offsets_group": frozenset({"eos"}),
    "authorization_check_skipped": frozenset({"transactions", "eos"}),
    "apply_acl_changes": frozenset({"transactions", "eos"}),
    # producer state expiry and the idempotent producer's epoch bump
    "producer_expiry_keeps_open_transactions": frozenset({"transactions", "eos"}),
    "defer_bump_until_resolved": frozenset({"idempotence"}),
    # the idempotence model's separate replication (DelayedProduce) and leader failover
    "acks_all_waits_for_replication": frozenset({"idempotence"}),
    "truncation_rebuilds_producer_state": frozenset({"idempotence"}),
    "leader_move_completes_purgatory": frozenset({"idempotence"}),
    # the log start offset (DeleteRecords, retention) and the producer state it must leave alone (KAFKA-7190)
    "producer_state_survives_log_start_offset": frozenset({"idempotence"}),
    # the read_uncommitted consumer's read bound (KAFKA-9196): only the idempotence system's consumers read it
    "read_uncommitted_bounded_by_high_watermark": frozenset({"idempotence"}),
    "follower_tracks_transactions": frozenset({"transactions"}),
    # the last stable offset an aborted transaction's index entry records (LogSegment.updateTxnIndex), read by a
    # read_committed fetch's index scan: the data partitions' markers and their replicas
    "aborted_txn_lso_counts_open_transactions": frozenset({"transactions", "eos"}),
    # the read_committed consumer's fetch purgatory ([transactions] read_committed_consumer, model.log.fetch)
    "delayed_fetch_keeps_isolation": frozenset({"transactions"}),
    "delayed_fetch_carries_aborted": frozenset({"transactions"}),
    "txn_resolve_sequences": frozenset({"transactions", "eos"}),
    "add_partitions_unexpected_abortable": frozenset({"transactions", "eos"}),
    "late_success_updates_last_acked": frozenset({"idempotence"}),
    "acked_sequence_only_raised": frozenset({"idempotence"}),
    # the producer's reading of a produce answer (model/clients/producer.py complete_batch): the idempotent producer
    # of ``idempotence`` and the transactional producer's data path (transactions.py, which eos extends)
    "producer_knows_storage_error": frozenset({"idempotence", "transactions", "eos"}),
    "retriable_produce_error_keeps_epoch": frozenset({"idempotence"}),
    "produce_retries_only_retriable": frozenset({"idempotence", "transactions", "eos"}),
    "failed_batch_makes_transaction_abortable": frozenset({"transactions", "eos"}),
    "retry_drained_in_turn": frozenset({"idempotence"}),
    # KAFKA-15591: the leader's first-sequence rule for a partition that never held a record (ProducerStateManager
    # validation, read wherever a partition validates an idempotent batch)
    "first_sequence_zero_on_empty_log": _ALL,
    # KIP-360 sequence resolution from the last acknowledged sequence (the idempotent producer of the idempotence
    # system: TransactionManager.maybeResolveSequences)
    "resolve_by_last_acked_sequence": frozenset({"idempotence"}),
    # KIP-360's canRetry bump for the batch refused OUT_OF_ORDER_SEQUENCE_NUMBER as the next sequence (the
    # idempotent producer of the idempotence system: handle_produce_response's bump_next)
    "bump_on_next_sequence_refusal": frozenset({"idempotence"}),
    # canRetry's unresolved-sequence rule (KAFKA-8710): handle_produce_response's by_unresolved, read by the
    # idempotent producer of the idempotence system (the transactional systems pass the real rule)
    "retry_by_unresolved_sequence": frozenset({"idempotence"}),
    # the producer client's Sender/NetworkClient (h16-client): markSequenceUnresolved only for an expired batch in
    # retry, disconnects completed as retriable errors, expired batches' requests still in flight;
    # TransactionManager's !isCompleting() for a failed batch's bump
    "mark_unresolved_only_in_retry": frozenset({"idempotence"}),
    "retry_disconnected_batches": frozenset({"idempotence"}),
    "expired_requests_hold_in_flight": frozenset({"idempotence"}),
    "failed_batch_bump_outside_completion": frozenset({"transactions", "eos"}),
    "txn_failed_batch_adjusts_sequences": frozenset({"transactions", "eos"}),
    "txn_resolve_waits_for_inflight": frozenset({"transactions", "eos"}),
    "retried_batch_keeps_transaction": frozenset({"transactions", "eos"}),
    # the transactional producer's NetworkClient.canSendMore / InFlightRequests (h25-clients,
    # invariants/txn_in_flight.py): its bound, and requests held for KIP-890 verification counted in flight
    "sender_within_max_in_flight": frozenset({"transactions", "eos"}),
    "held_requests_count_in_flight": frozenset({"transactions", "eos"}),
    # the classic group protocol
    "offset_commit_generation_check": frozenset({"groups"}),
    "offset_commit_stale_generation_check": frozenset({"groups"}),
    "load_keeps_pending_offsets": frozenset({"eos"}),
    "materialize_in_log_order": frozenset({"eos"}),
    "offset_commit_waits_for_log": frozenset({"groups"}),
    "cooperative_revoke_before_reassign": frozenset({"groups", "eos"}),
    "join_unchanged_answers_current_generation": frozenset({"groups", "eos"}),
    "rebalance_in_progress_rejoins": frozenset({"groups", "eos"}),
    "commit_on_revoke": frozenset({"groups"}),
    "offset_fetch_on_assign": frozenset({"groups"}),
    "coordinator_change_keeps_membership": frozenset({"groups"}),
    "retriable_join_error_keeps_member": frozenset({"groups"}),
    "failed_sync_requests_rejoin": frozenset({"groups"}),
    "rebalance_in_progress_keeps_generation": frozenset({"groups"}),
    "load_restores_subscriptions": frozenset({"groups"}),
    "static_member_fencing": frozenset({"groups"}),
    "static_member_stays_on_close": frozenset({"groups"}),
    "join_prepare_revokes_after_fenced_commit": frozenset({"groups"}),
    "join_prepare_pauses_partitions": frozenset({"groups"}),
    "join_prepare_commit_resets_identity": frozenset({"groups"}),
    "timeout_elects_joined_leader": frozenset({"groups"}),
    "sync_rebalance_keeps_generation": frozenset({"groups"}),
    "static_rejoin_keeps_generation": frozenset({"groups"}),
    "static_rejoin_completing_rebalances": frozenset({"groups"}),
    "fenced_member_loses_partitions": frozenset({"groups"}),
    "heartbeat_response_checks_generation": frozenset({"groups"}),
    "commit_response_checks_generation": frozenset({"groups"}),
    "pending_member_cleared_on_join": frozenset({"groups"}),
    "pending_member_kept_on_other_join": frozenset({"groups"}),
    "pending_members_expire": frozenset({"groups"}),
    "rebalance_timeout_advances_generation": frozenset({"groups"}),
    "rebalance_timeout_answers_new_group": frozenset({"groups"}),
    "rebalance_timeout_keeps_static": frozenset({"groups"}),
    "pending_sync_expires": frozenset({"groups"}),
    "join_rebalance_in_progress_retried": frozenset({"groups"}),
    "append_replication_errors_mapped": frozenset({"groups"}),
    "expired_timer_checks_member": frozenset({"groups"}),
    "leader_checks_assignment_snapshot": frozenset({"groups"}),
    "offset_fetch_write_failures_remapped": frozenset({"groups"}),
    "offset_fetch_retries_retriable": frozenset({"groups"}),
    "join_updates_member_metadata": frozenset({"groups"}),
    "sync_response_checks_generation": frozenset({"groups"}),
    "join_prepare_retries_commit": frozenset({"groups"}),
    "close_commit_retried": frozenset({"groups"}),
    "standalone_commit_in_empty_group": frozenset({"groups"}),
    "expiry_deletes_group": frozenset({"groups"}),
    "offset_fetch_checks_loading": frozenset({"eos"}),
    "offset_fetch_honours_require_stable": frozenset({"eos"}),
    # issue 23 (reach): the transaction coordinator's InitProducerId retry and completion (transactions system)
    "init_pid_retry_by_last_epoch": frozenset({"transactions", "eos"}),
    "complete_written_to_log": frozenset({"transactions", "eos"}),
    "producer_id_block_advances": frozenset({"transactions", "eos"}),
    # issue 28 (KIP-447): OffsetFetch requireStable and pending transactional offsets (the eos system)
    "offset_fetch_require_stable": frozenset({"eos"}),
    "pending_offsets_wait_for_marker": frozenset({"eos"}),
    # session 27: the timeout abort beside a client's waiting retries (TxnSystem._quiet; only eos has such waits)
    "txn_timeout_fires_while_clients_wait": frozenset({"eos"}),
    # issue 23 (granularity): the transaction coordinator's pending transitions (transactions system with
    # pending_transitions; the timeout abort's pending check is read by every transaction coordinator)
    "append_failure_resets_pending": frozenset({"transactions"}),
    "complete_retry_keeps_pending": frozenset({"transactions"}),
    "timeout_abort_skips_pending": frozenset({"transactions"}),
    "expiry_failure_resets_pending": frozenset({"transactions"}),
    # the transaction coordinator's loading window and its old instance's callbacks (loading_window)
    "append_callback_checks_coordinator_epoch": frozenset({"transactions"}),
    "loading_answers_load_in_progress": frozenset({"transactions"}),
    # the transaction coordinator's load of __transaction_state (every coordinator failover: KAFKA-20357)
    "log_restores_last_producer_epoch": _TXN,
    "complete_not_coordinator_skipped": frozenset({"transactions"}),
    # issue 23 (granularity): the partition leader's KIP-890 verification round trip (transactions system with
    # verification_round_trip: the only place a verification guard is created)
    "verification_guard_checked": frozenset({"transactions"}),
    "verification_guard_fresh": frozenset({"transactions"}),
    "marker_clears_verification": frozenset({"transactions"}),
    "marker_keeps_next_transaction_verification": frozenset({"transactions"}),
    "end_txn_answers_completed_ids": _TXN,
    "txn_offset_commit_starts_transaction": frozenset({"eos"}),
    "abort_keeps_queued_add_offsets": frozenset({"eos"}),
    "connect_config_write_failure_answers_fencing": frozenset({"connect"}),
    "connect_task_configs_effective_at_commit": frozenset({"connect"}),
    "connect_ignore_deleted_connector_commits": frozenset({"connect"}),
    "connect_commit_only_flushed_offsets": frozenset({"connect"}),
    "connect_tombstone_drops_task_configs": frozenset({"connect"}),
    "connect_fencing_refreshes_first": frozenset({"connect"}),
    "connect_ignore_empty_abort": frozenset({"connect"}),
    "connect_own_offsets_first": frozenset({"connect"}),
    "connect_offsets_skip_foreign_keys": frozenset({"connect"}),
    "connect_plain_send_failure_fails_task": frozenset({"connect"}),
    "connect_commit_error_fails_task": frozenset({"connect"}),
    "connect_fence_recorded_task_ids": frozenset({"connect"}),
    "connect_plain_config_write_acknowledged": frozenset({"connect"}),
    "connect_failed_task_skips_final_commit": frozenset({"connect"}),
    "connect_running_task_commits_on_stop": frozenset({"connect"}),
    "connect_connector_boundary_stop_keeps_batch_open": frozenset({"connect"}),
    "connect_fencing_conflict_on_new_generation": frozenset({"connect"}),
}


def changed_flags(variant: Variant) -> list[str]:
    """The switches ``variant`` sets differently from the real protocol."""
    real = ProtocolFlags()
    return [f.name for f in fields(ProtocolFlags) if getattr(variant.flags, f.name) != getattr(real, f.name)]


def variant_applies(variant: Variant, model: str) -> tuple[bool, str]:
    """Whether some switch ``variant`` changes is read by ``model``; if not, why (one line)."""
    changed = changed_flags(variant)
    if not changed or any(model in FLAG_MODELS.get(name, _ALL) for name in changed):
        return True, ""
    readers = sorted({m for name in changed for m in FLAG_MODELS.get(name, _ALL)})
    return False, (
        f"variant {variant.name!r} does not apply to model {model!r}: it changes {', '.join(changed)}, "
        f"read only by model(s) {', '.join(readers)}"
    )
