"""An authenticated LocalCluster: the instructor (super user) works, anyone else is refused."""

import pytest

from course_lib.real.security import ClusterAuth, client_kwargs

pytestmark = pytest.mark.real_kafka


@pytest.fixture(scope="module")
def cluster():
    from course_lib.real.cluster import LocalCluster

    with LocalCluster(brokers=1, progress=False, auth=ClusterAuth(admin_password="instructor-secret")) as c:
        yield c


def test_instructor_creates_topics_on_an_authenticated_cluster(cluster):
    cluster.create_topic("workshop-check")
    assert "workshop-check" in cluster.admin().list_topics()


def test_wrong_password_is_refused(cluster):
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    with pytest.raises(KafkaError):
        p = KafkaProducer(
            bootstrap_servers=cluster.bootstrap_servers, max_block_ms=5000, **client_kwargs("instructor", "wrong")
        )
        try:
            p.send("workshop-check", b"x").get(timeout=10)
        finally:
            p.close(timeout=2)
