"""confluent-kafka's consumers in a Python process of their own, for the two workloads whose
experiments kill a member: the share workload (:func:`course_lib.client_adapters.share_consumer`,
:class:`ShareConsumerProcess`) and the consumer-group workload
(:func:`course_lib.client_adapters.group_member`, :class:`GroupMemberProcess`), each with the
workload's contract plus the two ways a process dies - :meth:`ClientProcess.kill` (SIGKILL: the
process's connections close, as a crash closes them) and :meth:`ClientProcess.freeze` (SIGSTOP:
they stay open, as for a machine that is gone). A crash of the experiment's own process would
take the experiment with it, and confluent-kafka has no "close without leaving the group": a
separate process is what a real worker is.

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

from .members import GroupMember

#: how long an answer may take beyond the call's own timeout before the process counts as hung
SLACK_S = 60.0


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def _unb64(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


class ClientProcess:
    """A confluent-kafka client (``KIND``: a key of :data:`CHILDREN`, made from ``args``) in a
    child process; ``_call(op, *args)`` runs one of its operations there. :meth:`kill` and
    :meth:`freeze` end the process as a crash and a lost machine do; :meth:`close` closes the
    client if the process still runs, then reaps it."""

    KIND = ""

    def __init__(self, *args: Any) -> None:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", __name__, self.KIND, json.dumps(args)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._requests, self._lines = self._proc.stdin, self._proc.stdout
        self._answers: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"{self.KIND}-process", daemon=True)
        self._reader.start()
        self._ended = False

    def _read(self) -> None:
        for line in self._lines:  # until the process ends
            self._answers.put(json.loads(line))
        self._answers.put({"error": {"code": None, "str": f"the process ended (exit {self._proc.wait()})"}})

    def _call(self, op: str, *args: Any, timeout: float = 0.0) -> Any:
        if self._ended:
            raise RuntimeError(f"{op}: this {self.KIND}'s process was killed or frozen")
        self._requests.write(json.dumps({"op": op, "args": list(args)}) + "\n")
        self._requests.flush()
        try:
            answer = self._answers.get(timeout=timeout + SLACK_S)
        except queue.Empty:
            raise TimeoutError(
                f"the {self.KIND}'s process did not answer {op} within {timeout + SLACK_S:g} s"
            ) from None
        if "error" in answer:
            raise _exception(answer["error"])
        return answer["ok"]

    def close(self) -> None:
        """Close the client (unless its process was killed or frozen), then end the process."""
        try:
            if not self._ended:
                self._call("close", timeout=30)
        finally:
            self._end()

    def kill(self) -> None:
        """SIGKILL: a crash - the client's connections close with the process."""
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


class ShareConsumerProcess(ClientProcess):
    """A confluent-kafka ``ShareConsumer`` (``config``: librdkafka's names) in a child process,
    with confluent-kafka's API (the share workload's contract)."""

    KIND = "share consumer"

    def __init__(self, config: dict) -> None:
        super().__init__(config)

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


class GroupMemberProcess(ClientProcess, GroupMember):
    """A confluent-kafka ``Consumer`` (``config``: librdkafka's names) subscribed to ``topics`` in
    a child process: the consumer-group workload's contract (:class:`.members.GroupMember`;
    librdkafka shows no member epoch)."""

    KIND = "group member"

    def __init__(self, config: dict, topics: list[str]) -> None:
        super().__init__(config, list(topics))

    def _poll(self, timeout_s: float) -> int:
        return self._call("poll", timeout_s, timeout=timeout_s)

    def owned(self) -> list[int]:
        return self._call("owned")


def _exception(error: dict) -> Exception:
    """The contract's ``KafkaException`` for a Kafka error code the child saw, else a RuntimeError."""
    from kafka.errors import for_code

    from ..clients.share_consumer import KafkaError, KafkaException

    if error["code"] is None or error["code"] < 0:  # librdkafka's own (negative) codes, or no answer
        return RuntimeError(error["str"])
    return KafkaException(KafkaError(for_code(error["code"])))


# ---- the child -------------------------------------------------------------------------------------
def _share_consumer(config: dict) -> tuple[dict[str, Callable], Callable]:
    """A ShareConsumer's operations, and its close."""
    from confluent_kafka import AcknowledgeType

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
    }
    return ops, consumer.close


def _group_member(config: dict, topics: list[str]) -> tuple[dict[str, Callable], Callable]:
    """A subscribed Consumer's operations (the group member's), and its close."""
    from .for_confluent_kafka import GroupMember as InProcess

    member = InProcess(config, topics)
    return {"poll": member._poll, "owned": member.owned}, member.close


#: the clients a child can run, by :attr:`ClientProcess.KIND`: (args) -> (operations, close)
CHILDREN: dict[str, Callable[..., tuple[dict[str, Callable], Callable]]] = {
    ShareConsumerProcess.KIND: _share_consumer,
    GroupMemberProcess.KIND: _group_member,
}


def serve(kind: str, args: list, requests=sys.stdin, answers=sys.stdout) -> None:
    """Run the client ``kind`` made from ``args`` and answer ``requests`` until close."""
    from confluent_kafka import KafkaException

    ops, close = CHILDREN[kind](*args)
    ops = {**ops, "close": close}
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
    serve(sys.argv[1], json.loads(sys.argv[2]))
