"""The request faults mean on real Kafka what they mean over the wire and on the simulator
(tests/wire/test_request_faults.py), through a backend as a scenario calls them:

- ``lose_next_request``: the proxy swallows the produce request - the broker never sees it, and
  the client gets no answer (the proxy cuts the connection: TCP cannot lose one request and carry
  on) - nothing is appended;
- ``refuse_next_request``: the broker refuses it (the proxy corrupts the batch's CRC and passes
  CORRUPT_MESSAGE on as the retriable NOT_ENOUGH_REPLICAS) - answered, nothing appended.
"""

import pytest
from kafka import errors as Errors
from request_fault_support import one_send_under

from course_lib.backend import ComposedBackend
from course_lib.history import Nemesis

pytestmark = pytest.mark.real_kafka

#: what a client without an answer is told: its connection went (here) or its request timed out
NO_ANSWER = (Errors.KafkaConnectionError, Errors.RequestTimedOutError)


def test_a_lost_request_never_reaches_the_broker(cluster):
    error, appended, nemesis = one_send_under(ComposedBackend(cluster), Nemesis.LOSE_NEXT_REQUEST)
    assert issubclass(error, NO_ANSWER) and (appended, nemesis) == (1, [Nemesis.LOSE_NEXT_REQUEST]), error


def test_a_refused_request_is_answered_with_a_retriable_error(cluster):
    error, appended, nemesis = one_send_under(ComposedBackend(cluster), Nemesis.REFUSE_NEXT_REQUEST)
    assert (error, appended, nemesis) == (Errors.NotEnoughReplicasError, 1, [Nemesis.REFUSE_NEXT_REQUEST])


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka"])
def test_a_refused_answer_waits_for_the_request_behind_it_not_for_a_time(cluster, monkeypatch, client):
    """retries_reorder on Kafka: the proxy holds the refused request's answer until the answer to
    the produce behind it has come, so the retry lands behind it however busy the machine (as the
    wire gateway: tests/wire/test_request_faults.py)."""
    from course_lib.client_adapters import CLIENTS
    from course_lib.real import proxy
    from course_lib.experiments.scenarios import retries_reorder

    # a fallback that would end the hold at once: only the state (a produce follows) may end it
    monkeypatch.setattr(proxy, "SPOILED_ANSWER_DELAY_S", 0)
    result = retries_reorder(seed=1, backend=ComposedBackend(cluster, CLIENTS[client]()), idempotent=False)
    assert result.anomalies == {"reordered"}, result.anomalies
