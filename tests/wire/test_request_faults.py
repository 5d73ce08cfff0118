"""One name, one meaning per request fault, on every cluster that offers it (through a backend,
as a scenario calls it):

- ``lose_next_request``: the produce request never reaches the broker - the client gets no
  answer (its request times out) and nothing is appended - on the simulator and over the wire;
- ``refuse_next_request``: the broker refuses it with the retriable NOT_ENOUGH_REPLICAS and
  appends nothing - over the wire as behind the real lab's proxy (tests/real/test_request_faults.py);
  the simulator lacks it and says why.
"""

import pytest
from kafka import errors as Errors
from request_fault_support import one_send_under

from course_lib.backend import ComposedBackend, MissingFault, SimBackend
from course_lib.history import Nemesis
from course_lib.wire.cluster import WireCluster


@pytest.fixture(scope="module")
def lab():
    with WireCluster.lab(seed=1) as lab:
        yield lab


def test_a_lost_request_never_reaches_the_broker_on_the_simulator_and_over_the_wire(lab):
    simulated = one_send_under(SimBackend.start(seed=1), Nemesis.LOSE_NEXT_REQUEST)
    over_wire = one_send_under(ComposedBackend(lab), Nemesis.LOSE_NEXT_REQUEST)
    assert simulated == over_wire == (Errors.RequestTimedOutError, 1, [Nemesis.LOSE_NEXT_REQUEST])


def test_a_refused_request_is_answered_with_a_retriable_error_over_the_wire(lab):
    error, appended, nemesis = one_send_under(ComposedBackend(lab), Nemesis.REFUSE_NEXT_REQUEST)
    assert (error, appended, nemesis) == (Errors.NotEnoughReplicasError, 1, [Nemesis.REFUSE_NEXT_REQUEST])
    assert error.retriable


def test_the_simulator_lacks_the_refused_request_and_says_why():
    b = SimBackend.start(seed=1)
    topic = b.create_topic("t")
    with pytest.raises(MissingFault, match="refused requests are missing: the simulated brokers check no batch CRC"):
        b.refuse_next_request(b.producer(), topic)
    assert Nemesis.LOSE_NEXT_REQUEST in b.faults and Nemesis.REFUSE_NEXT_REQUEST not in b.faults


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
def test_a_refused_answer_waits_for_the_request_behind_it_not_for_a_time(lab, monkeypatch, client):
    """retries_reorder over the wire: the refused request's answer is held until the produce behind
    it is handled, so the retry lands behind it however busy the machine. Held for a time (300 ms),
    a loaded run once sent the request behind it too late and kept the order (with kafka-python,
    then with confluent-kafka): the scenario says a request follows, and the hold has no clock."""
    from course_lib.client_adapters import CLIENTS
    from course_lib.experiments.scenarios import retries_reorder
    from course_lib.wire import gateway

    # a fallback that would end the hold at once: only the state (a produce follows) may end it
    monkeypatch.setattr(gateway, "SPOILED_ANSWER_DELAY_MS", 0)
    result = retries_reorder(seed=1, backend=ComposedBackend(lab, CLIENTS[client]()), idempotent=False)
    assert result.anomalies == {"reordered"}, result.anomalies


def test_a_refused_request_without_an_answer_closes_its_connection(lab):
    """acks=0: no answer can carry the refusal, so the gateway closes the connection, as Kafka
    closes it after a failed acks=0 produce; nothing of the refused request is appended."""
    from kafka import KafkaProducer

    from course_lib.wire.gateway import Gateway

    topic = lab.create_topic("refused-without-answer")

    def values() -> list:
        return [v for batch in lab.cluster.leader_log(topic) for v in batch.values]

    def closed() -> set[str]:
        nodes = lab.cluster.network.nodes.values()
        return {n.node_id for n in nodes if isinstance(n, Gateway) and not n.alive}

    producer = KafkaProducer(bootstrap_servers=lab.bootstrap_servers, acks=0)
    try:
        producer.send(topic, b"warm-up").get(timeout=10)
        assert lab.wait_until(lambda: values() == [b"warm-up"])
        before = lab.call(closed)
        leader = lab.refuse_next_request(topic)
        producer.send(topic, b"refused").get(timeout=10)
        assert lab.wait_until(lambda: not lab.nemesis.refused.get(leader) and closed() - before)
        assert lab.call(values) == [b"warm-up"]
    finally:
        producer.close()
