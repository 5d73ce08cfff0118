"""One handler per Kafka API: a decoded kafka-python request in, the simulator's messages out,
their answers folded into a kafka-python response.

Every handler runs on the simulation thread, for one :class:`~course_lib.wire.gateway.Gateway`
(one client connection to one broker). It asks that broker with the simulator's own messages
(``gw.ask``) and answers once (``gw.reply``), so replication, the high watermark, min ISR,
producer state, transactions and groups are the simulator's mechanisms, not a second model.

One module per Kafka API or tight family of APIs (franz-go kfake's shape): :mod:`.common` holds
what they share, :mod:`.unsupported` the answer to what is not implemented. This package holds
the registry: :data:`SUPPORTED` is what ApiVersions advertises (the versions are
:data:`.api_versions.SUPPORTED_VERSIONS`): only what is implemented, at Kafka 4.3.1's versions
capped where a later version needs what the simulator has not (DeleteTopics v6 by topic id;
AddPartitionsToTxn v4+, which only brokers send). Topic ids (Produce v13, Fetch v13+: the wire ids
of :mod:`.topic_ids`) and transactions v2 (KIP-890: Produce v12+, EndTxn v5, TxnOffsetCommit v5)
are Kafka 4.3.1's; ApiVersions also finalizes the broker features of the release the cluster
models (``ClusterOptions.kafka_version``, the lab's unless told; ``ClusterOptions.features``), from which each client chooses as it does on Kafka.

Every answer's error codes are those its request version knows (:mod:`course_lib.wire.version_errors`,
applied in ``common._reply``). Share groups (KIP-932: ShareGroupHeartbeat, ShareGroupDescribe,
ShareFetch, ShareAcknowledge, DescribeShareGroupOffsets, AlterShareGroupOffsets,
DeleteShareGroupOffsets; :mod:`.share_groups`, :mod:`.share_fetch`,
:mod:`.share_group_offsets`) are the simulator's share group coordinator, share-partitions and
share coordinator; the wire keeps only the share sessions. The admin APIs librdkafka's and Java's admin clients call
(CreatePartitions, DeleteRecords, DeleteGroups, IncrementalAlterConfigs, DescribeCluster) are
answered by the broker itself with the simulator's mechanisms (``course_lib.broker``'s
partition_creation, record_deletion, group_deletion, topic_config_changes), and so are the admin
APIs a Kafka 4.3 admin client adds (issue 39): DescribeLogDirs, AlterReplicaLogDirs, ElectLeaders (``leader_elections``),
DescribeTopicPartitions, ListConfigResources, DescribeQuorum, and partition reassignments
(``reassignments``), the ACL APIs (DescribeAcls, CreateAcls, DeleteAcls: :mod:`.acls`), and
DescribeTransactions and ListTransactions (:mod:`.transaction_states`, from the transaction coordinator). With an
authorizer configured the handlers ask it what the client may do, as ``KafkaApis`` does
(:mod:`course_lib.wire.authorization`).
"""

from __future__ import annotations

from kafka.protocol.api_key import ApiKey

from .acls import create_acls, delete_acls, describe_acls
from .admin import create_topics, describe_configs
from .api_versions import REQUEST_CLASSES, SASL_VERSIONS, SUPPORTED_VERSIONS, api_versions
from .consumer_group_describe import consumer_group_describe
from .consumer_group_heartbeat import consumer_group_heartbeat
from .alter_replica_log_dirs import alter_replica_log_dirs
from .coordinators import find_coordinator
from .create_partitions import create_partitions
from .delete_groups import delete_groups
from .delete_records import delete_records
from .delete_topics import delete_topics
from .describe_cluster import describe_cluster
from .describe_log_dirs import describe_log_dirs
from .describe_quorum import describe_quorum
from .describe_topic_partitions import describe_topic_partitions
from .elect_leaders import elect_leaders
from .list_config_resources import list_config_resources
from .fetch import fetch
from .groups import GroupDirectory, describe_groups, heartbeat, join_group, leave_group, list_groups, sync_group
from .incremental_alter_configs import incremental_alter_configs
from .list_offsets import list_offsets
from .metadata import metadata
from .offset_for_leader_epoch import offset_for_leader_epoch
from .offsets import offset_commit, offset_fetch
from .partition_reassignments import alter_partition_reassignments, list_partition_reassignments
from .produce import produce
from .sasl import sasl_authenticate, sasl_handshake
from .share_fetch import ShareSessions, share_acknowledge, share_fetch
from .share_group_offsets import (
    alter_share_group_offsets,
    delete_share_group_offsets,
    describe_share_group_offsets,
)
from .share_groups import share_group_describe, share_group_heartbeat
from .transaction_states import describe_transactions, list_transactions
from .transactions import add_offsets_to_txn, add_partitions_to_txn, end_txn, init_producer_id, txn_offset_commit
from .unsupported import Unsupported, loose_header, unsupported_answer

__all__ = [
    "ANSWERED_BY_THE_BROKER_ITSELF",
    "REQUEST_CLASSES",
    "SASL_SUPPORTED",
    "SUPPORTED",
    "GroupDirectory",
    "ShareSessions",
    "Unsupported",
    "dispatch",
    "loose_header",
]

#: api key -> the handler of that API (whose request class and versions are in :mod:`.api_versions`)
HANDLERS = {
    ApiKey.Produce: produce,
    ApiKey.Fetch: fetch,
    ApiKey.ListOffsets: list_offsets,
    ApiKey.Metadata: metadata,
    ApiKey.OffsetCommit: offset_commit,
    ApiKey.OffsetFetch: offset_fetch,
    ApiKey.FindCoordinator: find_coordinator,
    ApiKey.JoinGroup: join_group,
    ApiKey.Heartbeat: heartbeat,
    ApiKey.LeaveGroup: leave_group,
    ApiKey.SyncGroup: sync_group,
    ApiKey.DescribeGroups: describe_groups,
    ApiKey.ListGroups: list_groups,
    ApiKey.ApiVersions: api_versions,
    ApiKey.CreateTopics: create_topics,
    ApiKey.DeleteTopics: delete_topics,
    ApiKey.InitProducerId: init_producer_id,
    ApiKey.OffsetForLeaderEpoch: offset_for_leader_epoch,
    ApiKey.AddPartitionsToTxn: add_partitions_to_txn,
    ApiKey.AddOffsetsToTxn: add_offsets_to_txn,
    ApiKey.EndTxn: end_txn,
    ApiKey.TxnOffsetCommit: txn_offset_commit,
    ApiKey.DescribeConfigs: describe_configs,
    ApiKey.SaslHandshake: sasl_handshake,
    ApiKey.SaslAuthenticate: sasl_authenticate,
    ApiKey.CreatePartitions: create_partitions,
    ApiKey.DeleteRecords: delete_records,
    ApiKey.DeleteGroups: delete_groups,
    ApiKey.IncrementalAlterConfigs: incremental_alter_configs,
    ApiKey.DescribeCluster: describe_cluster,
    ApiKey.DescribeLogDirs: describe_log_dirs,
    ApiKey.AlterReplicaLogDirs: alter_replica_log_dirs,
    ApiKey.ElectLeaders: elect_leaders,
    ApiKey.DescribeTopicPartitions: describe_topic_partitions,
    ApiKey.ListConfigResources: list_config_resources,
    ApiKey.DescribeQuorum: describe_quorum,
    ApiKey.AlterPartitionReassignments: alter_partition_reassignments,
    ApiKey.ListPartitionReassignments: list_partition_reassignments,
    ApiKey.DescribeAcls: describe_acls,
    ApiKey.CreateAcls: create_acls,
    ApiKey.DeleteAcls: delete_acls,
    ApiKey.ConsumerGroupHeartbeat: consumer_group_heartbeat,
    ApiKey.ConsumerGroupDescribe: consumer_group_describe,
    ApiKey.ShareGroupHeartbeat: share_group_heartbeat,
    ApiKey.ShareGroupDescribe: share_group_describe,
    ApiKey.ShareFetch: share_fetch,
    ApiKey.ShareAcknowledge: share_acknowledge,
    ApiKey.DescribeShareGroupOffsets: describe_share_group_offsets,
    ApiKey.AlterShareGroupOffsets: alter_share_group_offsets,
    ApiKey.DeleteShareGroupOffsets: delete_share_group_offsets,
    ApiKey.DescribeTransactions: describe_transactions,
    ApiKey.ListTransactions: list_transactions,
}

#: api key -> (min version, max version, handler): what ApiVersions advertises, with who answers
#: (an advertised API without a handler fails here, at import)
SUPPORTED = {key: (lo, hi, HANDLERS[key]) for key, (lo, hi) in SUPPORTED_VERSIONS.items()}
#: ... and what a cluster with users (SASL) adds to it
SASL_SUPPORTED = {key: (lo, hi, HANDLERS[key]) for key, (lo, hi) in SASL_VERSIONS.items()}

#: handlers that read the broker's (or controller's) state instead of sending a simulator message
ANSWERED_BY_THE_BROKER_ITSELF = frozenset(
    {
        api_versions,
        create_topics,
        delete_topics,
        describe_configs,
        describe_groups,
        list_groups,
        sasl_handshake,
        sasl_authenticate,
        create_partitions,
        delete_records,
        delete_groups,
        incremental_alter_configs,
        describe_cluster,
        describe_log_dirs,
        alter_replica_log_dirs,
        elect_leaders,
        describe_topic_partitions,
        list_config_resources,
        describe_quorum,
        alter_partition_reassignments,
        list_partition_reassignments,
        describe_acls,
        create_acls,
        delete_acls,
        describe_transactions,
        list_transactions,
    }
)


def dispatch(gw, header, request) -> None:
    gw.version = header.request_api_version
    if gw.authenticator is not None and not gw.authenticator.admit(gw, header, request):
        return  # before a SASL login completes: closed (course_lib.wire.sasl)
    if isinstance(request, Unsupported):
        return unsupported_answer(gw, header)
    handler = HANDLERS[header.request_api_key]
    if handler in ANSWERED_BY_THE_BROKER_ITSELF:
        # still the broker's work: one network latency away, held while it is paused (SIGSTOP),
        # gone with a crash - the broker's own timers do exactly that
        broker = gw.wire.cluster.brokers[gw.broker_id]
        broker.schedule_timer(gw.wire.cluster.network.latency_ms, handler, gw, request)
        return
    handler(gw, request)
