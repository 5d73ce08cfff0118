"""kafka-python's ``KafkaAdminClient`` without its one leak.

kafka-python 3.0.12's constructor starts its network I/O thread, then bootstraps; when the
bootstrap fails (a cluster nobody answers at, a wrong password) it raises and leaves that thread
running, retrying its sockets for the rest of the process. A workshop preflight or an
instructor's command that meets a dead cluster would keep such a thread per attempt.
"""

from __future__ import annotations

from kafka.admin import KafkaAdminClient


class AdminClient(KafkaAdminClient):
    """``KafkaAdminClient`` whose constructor stops what it started when it raises."""

    def __init__(self, **configs) -> None:
        try:
            super().__init__(**configs)
        except BaseException:
            client = getattr(self, "_client", None)
            if client is not None:
                client.close()
            net = getattr(self, "_net", None)
            if net is not None:
                net.stop()
            raise
