"""The simulator's own KafkaAdminClient (course_lib/clients/admin.py) answers CreateTopics with
manual replica assignments as Kafka 4.4.0 does: the cases and answers of the wire/Kafka twin probe
(tests/wire/admin_api_probes.py), the replicas and leaders read from the controller."""

from kafka.admin import NewTopic

from course_lib.broker import Cluster
from course_lib.clients.admin import KafkaAdminClient
from tests.wire.admin_api_probes import TOPIC_ASSIGNMENT_CASES
from tests.wire.test_admin_apis_kafka43 import TOPIC_ASSIGNMENTS


def test_the_simulated_admin_creates_topics_as_assigned():
    cluster = Cluster(brokers=3, seed=1)
    admin = KafkaAdminClient(bootstrap_servers=cluster)
    out: dict = {}
    for case, (partitions, rf, assignments) in TOPIC_ASSIGNMENT_CASES.items():
        name = f"asg-{case.replace(' ', '-')}"
        (result,) = admin.create_topics([NewTopic(name, partitions, rf, assignments)], raise_errors=False)["topics"]
        out[case] = tuple(result[k] for k in ("error_code", "error_message", "num_partitions", "replication_factor"))
        if result["error_code"] == 0:
            states = {p: cluster.controller.partitions[(name, p)] for p in range(result["num_partitions"])}
            out[f"{case} described"] = [(p, s.leader, list(s.replicas), list(s.isr)) for p, s in states.items()]
    assert out == TOPIC_ASSIGNMENTS
