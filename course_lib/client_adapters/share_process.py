"""confluent-kafka's ``ShareConsumer`` in a Python process of its own: the share workload's
contract (:func:`course_lib.client_adapters.share_consumer` with ``own_process=True``) plus the
two ways a worker's process dies - :meth:`ShareConsumerProcess.kill` (SIGKILL: the process's
connections close, as a crash closes them, and the broker ends its share session at once) and
:meth:`ShareConsumerProcess.freeze` (SIGSTOP: they stay open, as for a machine that is gone, and
its records come back only after their locks). A crash of the experiment's own process would
take the experiment with it; a separate process is what a real worker is.

The child runs :func:`serve`: one JSON request per line on stdin (``{"op": ..., "args": [...]}``),
one answer per line on stdout (``{"ok": ...}`` or ``{"error": {"code": ..., "str": ...}}``).
Messages cross as dicts (key and value in base64) and come back as the contract's messages
(:class:`course_lib.clients.share_consumer.Message`); an acknowledgement names its record by
topic, partition and offset (confluent-kafka's ``acknowledge_offset``).
"""

from __future__ import annotations

import base64
import json
import queue
import signal
import subprocess
import sys
import threading
from typing import Any, Callable

#: how long an answer may take beyond the call's own timeout before the process counts as hung
SLACK_S = 60.0


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


class ShareConsumerProcess:
    """A confluent-kafka ``ShareConsumer`` (``config``: librdkafka's names) in a child process,
    with confluent-kafka's API; :meth:`kill` and :meth:`freeze` end the process as a crash and a
    lost machine do; :meth:`close` closes the consumer if the process still runs, then reaps it."""

    def __init__(self, config: dict) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", __name__, json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._requests, self._lines = self._proc.stdin, self._proc.stdout
        self._answers: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, name="share-consumer-process", daemon=True)
        self._reader.start()
        self._ended = False

    def _read(self) -> None:
        for line in self._lines:  # until the process ends
            self._answers.put(json.loads(line))
        self._answers.put({"error": {"code": None, "str": f"the process ended (exit {self._proc.wait()})"}})

    def _call(self, op: str, *args: Any, timeout: float = 0.0) -> Any:
        if self._ended:
            raise RuntimeError(f"{op}: this share consumer's process was killed or frozen")
        self._requests.write(json.dumps({"op": op, "args": list(args)}) + "\n")
        self._requests.flush()
        try:
            answer = self._answers.get(timeout=timeout + SLACK_S)
        except queue.Empty:
            raise TimeoutError(
                f"the share consumer's process did not answer {op} within {timeout + SLACK_S:g} s"
            ) from None
        if "error" in answer:
            raise _exception(answer["error"])
        return answer["ok"]

    # ---- the contract
    def subscribe(self, topics: list[str]) -> None:
        self._call("subscribe", list(topics))

    def poll(self, timeout: float = -1) -> list:
        from ..clients.share_consumer import Message, RecordFields

        return [
            Message(
                m["topic"], m["partition"], m["offset"], RecordFields(_unb64(m["key"]), _unb64(m["value"])), m["count"]
            )
            for m in self._call("poll", timeout, timeout=max(timeout, 0))
        ]

    def acknowledge(self, message: Any, ack_type: Any = 1) -> None:
        self._call("acknowledge", message.topic(), message.partition(), message.offset(), int(ack_type))

    def commit_sync(self, timeout: float = 60) -> dict:
        from kafka.structs import TopicPartition

        return {
            TopicPartition(topic, partition): None if error is None else _exception(error)
            for topic, partition, error in self._call("commit_sync", timeout, timeout=timeout)
        }

    def close(self) -> None:
        """Close the consumer (unless its process was killed or frozen), then end the process."""
        try:
            if not self._ended:
                self._call("close", timeout=30)
        finally:
            self._end()

    # ---- the process
    def kill(self) -> None:
        """SIGKILL: a crash - the consumer's connections close with the process."""
        self._ended = True
        self._end()

    def freeze(self) -> None:
        """SIGSTOP: a machine that is gone - nothing runs and nothing closes (until :meth:`close`)."""
        self._ended = True
        self._proc.send_signal(signal.SIGSTOP)

    def _end(self) -> None:
        self._ended = True
        if self._proc.poll() is None:
            self._proc.kill()
        self._proc.wait(30)
        self._reader.join(30)  # the pipe closed with the process
        self._requests.close()
        self._lines.close()


def _exception(error: dict) -> Exception:
    """The contract's ``KafkaException`` for a Kafka error code the child saw, else a RuntimeError."""
    from kafka.errors import for_code

    from ..clients.share_consumer import KafkaError, KafkaException

    if error["code"] is None or error["code"] < 0:  # librdkafka's own (negative) codes, or no answer
        return RuntimeError(error["str"])
    return KafkaException(KafkaError(for_code(error["code"])))


# ---- the child -------------------------------------------------------------------------------------
def serve(config: dict, requests=sys.stdin, answers=sys.stdout) -> None:
    """Run a confluent-kafka ShareConsumer with ``config`` and answer ``requests`` until close."""
    from confluent_kafka import AcknowledgeType, KafkaException

    from .for_confluent_kafka import share_consumer

    consumer = share_consumer(config)

    def poll(timeout: float) -> list:
        return [
            {
                "topic": m.topic(),
                "partition": m.partition(),
                "offset": m.offset(),
                "key": _b64(m.key()),
                "value": _b64(m.value()),
                "count": m.delivery_count(),
            }
            for m in consumer.poll(timeout)
            if m.error() is None
        ]

    def commit_sync(timeout: float) -> list:
        return [
            [tp.topic, tp.partition, None if e is None else _error(e.args[0])]
            for tp, e in consumer.commit_sync(timeout).items()
        ]

    ops: dict[str, Callable] = {
        "subscribe": consumer.subscribe,
        "poll": poll,
        "acknowledge": lambda topic, partition, offset, ack_type: consumer.acknowledge_offset(
            topic, partition, offset, AcknowledgeType(ack_type)
        ),
        "commit_sync": commit_sync,
        "close": consumer.close,
    }
    for line in requests:
        request = json.loads(line)
        try:
            answer: dict = {"ok": ops[request["op"]](*request["args"])}
        except KafkaException as e:
            answer = {"error": _error(e.args[0])}
        except Exception as e:  # the parent raises it; this process goes on serving
            answer = {"error": {"code": None, "str": f"{type(e).__name__}: {e}"}}
        print(json.dumps(answer), file=answers, flush=True)
        if request["op"] == "close":
            return


def _error(error: Any) -> dict:
    """A confluent-kafka ``KafkaError`` as the parent rebuilds it."""
    return {"code": error.code(), "str": error.str()}


if __name__ == "__main__":
    serve(json.loads(sys.argv[1]))
