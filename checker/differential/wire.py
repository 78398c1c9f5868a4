"""The wire side of the differential test: Kafka's requests, encoded by ``kio``.

Every request and response is a ``kio`` dataclass generated from Kafka's own JSON message schemas
(``clients/src/main/resources/common/message/*.json``); ``kio.serial`` encodes and decodes them,
flexible versions, tagged fields, compact strings and arrays and varints included, and
``kio.records`` writes and reads RecordBatch v2 (producer id, epoch, base sequence, the
transactional and control attributes, CRC32C).  Nothing here lays out a message by hand: this
module only opens a socket, frames a request (``int32`` size, ``RequestHeader`` v2, body), and
picks each API's version from the broker's ApiVersions answer, capped at what the client-side
code of the model speaks (``VERSIONS``).

The version choice is deliberate: AddPartitionsToTxn v3 is the last version a *client* sends
(v4+ is the broker-to-broker batched form, KIP-890 part 1), EndTxn v4 / Produce v11 are the
transaction-version-1 forms, Fetch v13+ names topics by id.  With ``transaction_version=2`` the driver
sends EndTxn v5 (KIP-890 part 2: the coordinator bumps the epoch at every end; ``KafkaApis.handleEndTxnRequest``
takes TV_2 for ``version > 4``, apache/kafka 1eb7644) and checks that the broker finalizes
``transaction.version`` 2 (ApiVersions v3's ``FinalizedFeatures``).  Produce stays at v11: Produce v12 (the
leader's implicit AddPartitionsToTxn) and TxnOffsetCommit v5 are not in the 1eb7644 schemas.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import socket
import struct
from dataclasses import dataclass
from typing import Any

from kio.records.readers import read_batch
from kio.records.schema import NewRecordBatch, Record
from kio.records.writers import write_batch
from kio.schema.errors import ErrorCode
from kio.schema.request_header.v2.header import RequestHeader
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_reader, entity_writer

__all__ = ["TV2_VERSIONS", "VERSIONS", "KafkaWire", "WireError", "batch_bytes", "error_name", "read_batches"]

#: api name (kio's package) -> (api key, highest version the driver sends).
VERSIONS: dict[str, tuple[int, int]] = {
    "produce": (0, 11),
    "fetch": (1, 17),
    "offset_commit": (8, 9),
    "offset_fetch": (9, 9),
    "find_coordinator": (10, 6),
    "join_group": (11, 9),
    "heartbeat": (12, 4),
    "leave_group": (13, 5),
    "sync_group": (14, 5),
    "api_versions": (18, 3),
    "create_topics": (19, 7),
    "delete_topics": (20, 6),
    "init_producer_id": (22, 5),
    "add_partitions_to_txn": (24, 3),
    "add_offsets_to_txn": (25, 4),
    "end_txn": (26, 4),
    "txn_offset_commit": (28, 4),
    "describe_producers": (61, 0),
    "describe_transactions": (65, 0),
    "list_transactions": (66, 1),
}

#: the caps raised for ``transaction_version=2`` (EndTxn v5 is TV2's end: ``EndTxnRequest.json``, 1eb7644).
TV2_VERSIONS: dict[str, int] = {"end_txn": 5}

_REQUEST_CLASS = {
    "produce": "ProduceRequest",
    "fetch": "FetchRequest",
    "offset_commit": "OffsetCommitRequest",
    "offset_fetch": "OffsetFetchRequest",
    "find_coordinator": "FindCoordinatorRequest",
    "join_group": "JoinGroupRequest",
    "heartbeat": "HeartbeatRequest",
    "leave_group": "LeaveGroupRequest",
    "sync_group": "SyncGroupRequest",
    "api_versions": "ApiVersionsRequest",
    "create_topics": "CreateTopicsRequest",
    "delete_topics": "DeleteTopicsRequest",
    "init_producer_id": "InitProducerIdRequest",
    "add_partitions_to_txn": "AddPartitionsToTxnRequest",
    "add_offsets_to_txn": "AddOffsetsToTxnRequest",
    "end_txn": "EndTxnRequest",
    "txn_offset_commit": "TxnOffsetCommitRequest",
    "describe_producers": "DescribeProducersRequest",
    "describe_transactions": "DescribeTransactionsRequest",
    "list_transactions": "ListTransactionsRequest",
}


class WireError(Exception):
    """The broker could not be reached or answered something undecodable (keos at fault: exit 3)."""


def error_name(code: Any) -> str:
    """Kafka's ``Errors`` name of a response's error code (``ErrorCode.producer_fenced`` -> ``PRODUCER_FENCED``)."""
    return ErrorCode(int(code)).name.upper()


def batch_bytes(
    producer_id: int, producer_epoch: int, base_sequence: int, values: tuple[int, ...], transactional: bool
) -> bytes:
    """One RecordBatch v2 (``kio.records``): attributes bit 4 = transactional; CRC32C by kio."""
    import datetime

    now = datetime.datetime(2024, 10, 25, tzinfo=datetime.UTC)
    records = tuple(
        Record(attributes=0, timestamp=now, offset=i, key=None, value=str(v).encode(), headers=())  # type: ignore[arg-type]
        for i, v in enumerate(values)
    )
    batch = NewRecordBatch(
        producer_id=producer_id,  # type: ignore[arg-type]
        producer_epoch=producer_epoch,  # type: ignore[arg-type]
        base_sequence=base_sequence,  # type: ignore[arg-type]
        records=records,
        attributes=0x10 if transactional else 0,  # type: ignore[arg-type]
    )
    buf = io.BytesIO()
    write_batch(buf, batch)
    return buf.getvalue()


@dataclass(frozen=True)
class FetchedBatch:
    """One batch of a Fetch answer: offsets, producer, control type (``COMMIT``/``ABORT``) or record values."""

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    transactional: bool
    control: str
    values: tuple[int, ...]


def read_batches(data: bytes | None) -> list[FetchedBatch]:
    """Decode a Fetch partition's records (several RecordBatch v2) with ``kio.records``."""
    out: list[FetchedBatch] = []
    if not data:
        return out
    offset = 0
    while offset + 12 <= len(data):
        size = struct.unpack_from(">i", data, offset + 8)[0]
        if offset + 12 + size > len(data):
            break  # a partial batch at the end of the answer (max bytes)
        batch, used = read_batch(data, offset)
        offset += used
        control = ""
        values: tuple[int, ...] = ()
        if batch.attributes & 0x20:
            key = batch.records[0].key or b"\0\0\0\0" if batch.records else b"\0\0\0\0"
            control = "COMMIT" if struct.unpack_from(">h", key, 2)[0] == 1 else "ABORT"
        else:
            values = tuple(int(r.value or b"0") for r in batch.records)
        out.append(
            FetchedBatch(
                int(batch.base_offset),
                int(batch.base_offset) + int(batch.last_offset_delta),
                int(batch.producer_id),
                int(batch.producer_epoch),
                int(batch.base_sequence),
                bool(batch.attributes & 0x10),
                control,
                values,
            )
        )
    return out


_PATCHED: dict[str, Any] = {}


def _describe_transactions_response(version: int) -> Any:
    """kio's DescribeTransactionsResponse with ``TransactionStartTimeMs`` read as the int64 it is.

    The schema types it int64; the broker sends -1 for a transaction that has not started
    (``TransactionMetadata.txnStartTimestamp``), which kio's ``datetime_i64`` refuses.  The module is
    kio's own generated source with that one field's type changed, loaded under a private name.
    """
    import importlib.util
    import sys
    import types

    name = f"keos_kio_describe_transactions_v{version}_response"
    if name in _PATCHED:
        return _PATCHED[name]
    spec = importlib.util.find_spec(f"kio.schema.describe_transactions.v{version}.response")
    assert spec is not None and spec.origin is not None
    with open(spec.origin, encoding="utf-8") as fh:
        source = fh.read()
    old = 'transaction_start_time: TZAware = field(metadata={"kafka_type": "datetime_i64"})'
    if old not in source:
        raise WireError("kio's DescribeTransactionsResponse changed: transaction_start_time not found")
    source = source.replace(old, 'transaction_start_time: i64 = field(metadata={"kafka_type": "int64"})')
    source = source.replace("from kio.static.primitive import i16\n",
                            "from kio.static.primitive import i16\nfrom kio.static.primitive import i64\n")
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, spec.origin, "exec", dont_inherit=True), module.__dict__)
    _PATCHED[name] = module
    return module


class KafkaWire:
    """One connection to one broker, requests built from kio's schema classes."""

    def __init__(self, host: str, port: int, timeout: float = 15.0, transaction_version: int = 1) -> None:
        self._address = (host, port, timeout)
        self._sock = self._connect()
        self._correlation = 0
        self.transaction_version = transaction_version
        self.versions: dict[str, int] = {}
        self.finalized_features: dict[str, int] = {}
        self._negotiate()

    def _connect(self) -> socket.socket:
        host, port, timeout = self._address
        try:
            return socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise WireError(f"cannot connect to {host}:{port}: {exc}") from exc

    def reconnect(self) -> None:
        """A new connection to the same broker (after the broker closed this one)."""
        with contextlib.suppress(OSError):
            self._sock.close()
        self._sock = self._connect()

    def close(self) -> None:
        self._sock.close()

    def _classes(self, api: str, version: int) -> tuple[Any, Any]:
        req = importlib.import_module(f"kio.schema.{api}.v{version}.request")
        resp = importlib.import_module(f"kio.schema.{api}.v{version}.response")
        if api == "describe_transactions":
            resp = _describe_transactions_response(version)
        name = _REQUEST_CLASS[api]
        return req, getattr(resp, name.replace("Request", "Response"))

    def module(self, api: str) -> Any:
        """kio's request module of the negotiated version (its nested classes build the request)."""
        return self._classes(api, self.versions[api])[0]

    def _negotiate(self) -> None:
        self.versions["api_versions"] = 3
        resp = self.call("api_versions", client_software_name="keos", client_software_version="0")
        broker = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in resp.api_keys}
        self.finalized_features = {
            str(f.name): int(f.max_version_level) for f in (getattr(resp, "finalized_features", None) or ())
        }
        for api, (key, ours) in VERSIONS.items():
            if self.transaction_version >= 2:
                ours = TV2_VERSIONS.get(api, ours)
            if key in broker:
                self.versions[api] = min(ours, broker[key][1])
        if self.transaction_version >= 2 and (
            self.versions.get("end_txn", 0) < 5 or self.finalized_features.get("transaction.version", 0) < 2
        ):
            raise WireError(
                "the broker does not speak transaction version 2 (EndTxn max "
                f"v{self.versions.get('end_txn')}, finalized features {self.finalized_features})"
            )

    def wait_ready(self, timeout: float = 90.0) -> None:
        """Until both coordinators answer: FindCoordinator creates ``__transaction_state`` and
        ``__consumer_offsets`` on first use; InitProducerId then answers COORDINATOR_LOAD_IN_PROGRESS /
        NOT_COORDINATOR until the transaction state partition is loaded (the shared README)."""
        import datetime
        import time

        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            ok = True
            for key_type, key in ((1, "keos-ready"), (0, "keos-ready")):
                r = self.call("find_coordinator", key_type=key_type, coordinator_keys=(key,))
                last = error_name(r.coordinators[0].error_code)
                ok = ok and last == "NONE"
            if ok:
                r = self.call("init_producer_id", transactional_id="keos-ready",
                              transaction_timeout=datetime.timedelta(seconds=60), producer_id=-1, producer_epoch=-1)
                last = error_name(r.error_code)
                if last == "NONE":
                    return
            time.sleep(0.3)
        raise WireError(f"broker not ready after {timeout:.0f} s (last answer {last})")

    def call(self, api: str, **fields: Any) -> Any:
        """Send ``api``'s request of the negotiated version with ``fields``; return the decoded response."""
        version = self.versions[api]
        req_mod, resp_cls = self._classes(api, version)
        request = getattr(req_mod, _REQUEST_CLASS[api])(**fields)
        self._correlation += 1
        buf = io.BytesIO()
        header = RequestHeader(
            request_api_key=request.__api_key__,
            request_api_version=request.__version__,
            correlation_id=self._correlation,  # type: ignore[arg-type]
            client_id="keos-differential",
        )
        entity_writer(RequestHeader)(buf, header)
        entity_writer(type(request))(buf, request)
        data = buf.getvalue()
        try:
            self._sock.sendall(struct.pack(">i", len(data)) + data)
            size = struct.unpack(">i", self._recv(4))[0]
            body = self._recv(size)
        except OSError as exc:
            raise WireError(f"{api}: {exc}") from exc
        # ApiVersions answers with header v0 whatever its version (KIP-511)
        flexible = resp_cls.__flexible__ and api != "api_versions"
        header_cls = ResponseHeaderV1 if flexible else ResponseHeaderV0
        hdr: Any
        hdr, offset = entity_reader(header_cls)(body, 0)
        if int(hdr.correlation_id) != self._correlation:
            raise WireError(f"{api}: correlation id {hdr.correlation_id} != {self._correlation}")
        response, _ = entity_reader(resp_cls)(body, offset)
        return response

    def _recv(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self._sock.recv(n)
            if not chunk:
                raise OSError("connection closed by the broker")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)
