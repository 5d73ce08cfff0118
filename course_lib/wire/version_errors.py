"""What each request version knows: the error codes Kafka's broker replaces in its answers.

A client written against an older version of an API cannot know an error code added later; Kafka
(the Java broker) does not send it such codes but one the client handles the same way. Every
answer of the wire front end passes through :func:`downgrade_codes` (``apis.common._reply``), so
each rule here is the only place that mapping lives, with where Kafka does it.

Fields a version does not have are never sent: kafka-python encodes a response at the request's
version, field by field, and leaves out what that version lacks.

>>> from kafka.protocol.api_key import ApiKey
>>> answer_code(ApiKey.InitProducerId, 3, Errors.ProducerFencedError.errno)  # INVALID_PRODUCER_EPOCH
47
>>> answer_code(ApiKey.InitProducerId, 4, Errors.ProducerFencedError.errno)  # PRODUCER_FENCED
90
>>> downgrade_codes(ApiKey.Produce, 9, {"responses": [{"partition_responses": [{"error_code": 51}]}]})
{'responses': [{'partition_responses': [{'error_code': 19}]}]}
"""

from __future__ import annotations

from dataclasses import dataclass

from kafka import errors as Errors
from kafka.protocol.api_key import ApiKey


@dataclass(frozen=True)
class Downgrade:
    """Answers to ``api`` below version ``below`` (every version when None) carry ``instead``
    where the simulator's answer is ``error``."""

    api: ApiKey
    error: type
    instead: type
    below: int | None
    #: where the Java broker does it (apache/kafka)
    where: str

    def applies(self, version: int) -> bool:
        return self.below is None or version < self.below


#: KIP-588 added PRODUCER_FENCED; older versions of the transaction APIs get INVALID_PRODUCER_EPOCH
_FENCED = Errors.ProducerFencedError
_OLD_EPOCH = Errors.InvalidProducerEpochError

DOWNGRADES: tuple[Downgrade, ...] = (
    Downgrade(ApiKey.InitProducerId, _FENCED, _OLD_EPOCH, 4, "KafkaApis.handleInitProducerIdRequest"),
    Downgrade(ApiKey.AddPartitionsToTxn, _FENCED, _OLD_EPOCH, 2, "KafkaApis.handleAddPartitionsToTxnRequest"),
    Downgrade(ApiKey.AddOffsetsToTxn, _FENCED, _OLD_EPOCH, 2, "KafkaApis.handleAddOffsetsToTxnRequest"),
    Downgrade(ApiKey.EndTxn, _FENCED, _OLD_EPOCH, 2, "KafkaApis.handleEndTxnRequest"),
    # a produce or transactional offset commit is verified with the transaction coordinator
    # (KIP-890 part 1), whose PRODUCER_FENCED producers "expect to handle" as INVALID_PRODUCER_EPOCH
    Downgrade(ApiKey.Produce, _FENCED, _OLD_EPOCH, None, "AddPartitionsToTxnManager (verification)"),
    Downgrade(ApiKey.TxnOffsetCommit, _FENCED, _OLD_EPOCH, None, "AddPartitionsToTxnManager (verification)"),
    # TRANSACTION_ABORTABLE (KIP-890) only to versions after the one that introduced it
    Downgrade(
        ApiKey.Produce,
        Errors.TransactionAbortableError,
        Errors.InvalidTxnStateError,
        11,
        "KafkaApis.handleProduceRequest (transactionSupportedOperation), AddPartitionsToTxnManager",
    ),
    Downgrade(
        ApiKey.TxnOffsetCommit,
        Errors.TransactionAbortableError,
        Errors.InvalidTxnStateError,
        4,
        "GroupCoordinator.handleTxnCommitOffsets (transactionSupportedOperation)",
    ),
    # transaction verification's retriable errors, which older producers may not retry: an
    # error that makes every producer retry without a metadata refresh
    *(
        Downgrade(ApiKey.Produce, error, Errors.NotEnoughReplicasError, None, "ReplicaManager.postVerificationCallback")
        for error in (
            Errors.ConcurrentTransactionsError,
            Errors.CoordinatorLoadInProgressError,
            Errors.CoordinatorNotAvailableError,
            Errors.NotCoordinatorError,
        )
    ),
    Downgrade(
        ApiKey.DeleteTopics,
        Errors.TopicDeletionDisabledError,
        Errors.InvalidRequestError,
        3,
        "KafkaApis.handleDeleteTopicsRequest",
    ),
    # KIP-320: a request that carries no current leader epoch (Fetch below v9, ListOffsets below
    # v4, OffsetForLeaderEpoch below v2) is never fenced by Kafka; where the simulator's epoch
    # check refuses it, the replica is not the leader the client knows
    *(
        Downgrade(api, error, Errors.NotLeaderForPartitionError, below, "Partition.localLogWithEpochOrThrow")
        for api, below in ((ApiKey.Fetch, 9), (ApiKey.ListOffsets, 4), (ApiKey.OffsetForLeaderEpoch, 2))
        for error in (Errors.FencedLeaderEpochError, Errors.UnknownLeaderEpochError)
    ),
)

_BY_CODE: dict[tuple[int, int], list[Downgrade]] = {}
for _rule in DOWNGRADES:
    _BY_CODE.setdefault((int(_rule.api), _rule.error.errno), []).append(_rule)  # type: ignore[attr-defined]


def answer_code(api_key: int, version: int, errno: int) -> int:
    """The error code Kafka sends a ``version`` request of ``api_key`` where the simulator says ``errno``."""
    for rule in _BY_CODE.get((int(api_key), errno), ()):
        if rule.applies(version):
            return rule.instead.errno  # type: ignore[attr-defined]
    return errno


def downgrade_codes(api_key: int, version: int, values):
    """``values`` (a response's plain values: dicts, lists) with every ``*error_code`` field
    replaced as :func:`answer_code` says."""
    if isinstance(values, dict):
        return {
            k: (
                answer_code(api_key, version, v)
                if k.endswith("error_code") and isinstance(v, int)
                else downgrade_codes(api_key, version, v)
            )
            for k, v in values.items()
        }
    if isinstance(values, list):
        return [downgrade_codes(api_key, version, v) for v in values]
    return values


__all__ = ["DOWNGRADES", "Downgrade", "answer_code", "downgrade_codes"]
