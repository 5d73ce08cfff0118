"""Futures with kafka-python's interface: ``get()``, ``add_callback``, ``add_errback``,
``succeeded()``, ``failed()``, ``is_done``, ``value``, ``exception``.

In the simulator ``get()`` does what a blocking call does in real life: it lets (virtual) time
pass - the event loop runs - until the outcome is known.
"""

from __future__ import annotations

import functools

from kafka import errors as Errors
from kafka.producer.future import RecordMetadata
from kafka.structs import TopicPartition

__all__ = ["Future", "FutureRecordMetadata", "ProduceResult", "RecordMetadata"]


class Future:
    __slots__ = ("is_done", "value", "exception", "_callbacks", "_errbacks", "_wait_until")

    def __init__(self, wait_until=None):
        self.is_done = False
        self.value = None
        self.exception = None
        self._callbacks = ()
        self._errbacks = ()
        self._wait_until = wait_until  # (predicate, timeout_ms) -> bool, from the client

    def succeeded(self) -> bool:
        return self.is_done and self.exception is None

    def failed(self) -> bool:
        return self.is_done and self.exception is not None

    def success(self, value) -> "Future":
        assert not self.is_done, "future already completed"
        self.value, self.is_done = value, True
        for f in self._callbacks:
            f(value)
        return self

    def failure(self, error) -> "Future":
        assert not self.is_done, "future already completed"
        self.exception = error() if isinstance(error, type) else error
        self.is_done = True
        for f in self._errbacks:
            f(self.exception)
        return self

    def add_callback(self, f, *args, **kwargs) -> "Future":
        f = functools.partial(f, *args, **kwargs) if args or kwargs else f
        if self.is_done and not self.exception:
            f(self.value)
        else:
            self._callbacks = (*self._callbacks, f)
        return self

    def add_errback(self, f, *args, **kwargs) -> "Future":
        f = functools.partial(f, *args, **kwargs) if args or kwargs else f
        if self.is_done and self.exception:
            f(self.exception)
        else:
            self._errbacks = (*self._errbacks, f)
        return self

    def add_both(self, f, *args, **kwargs) -> "Future":
        self.add_callback(f, *args, **kwargs)
        self.add_errback(f, *args, **kwargs)
        return self

    def get(self, timeout: float | None = None):
        """Wait (in virtual time) for the outcome; ``timeout`` in seconds as in kafka-python."""
        if not self.is_done and self._wait_until is not None:
            self._wait_until(lambda: self.is_done, None if timeout is None else timeout * 1000)
        if not self.is_done:
            raise Errors.KafkaTimeoutError(f"timeout after {timeout} s waiting for the result")
        if self.exception is not None:
            raise self.exception
        return self.value


class ProduceResult:
    """The outcome of one batch, shared by the futures of its records (as kafka-python's
    ``FutureProduceResult``): completing a batch costs the same for 1 record or 1,000."""

    __slots__ = ("topic", "partition", "records", "is_done", "base_offset", "exception", "_waiting")

    def __init__(self, topic, partition, records):
        self.topic, self.partition, self.records = topic, partition, records
        self.is_done = False
        self.base_offset = -1
        self.exception = None
        self._waiting = None  # record futures that have callbacks

    def succeed(self, base_offset: int) -> None:
        self.base_offset, self.is_done = base_offset, True
        self._notify()

    def fail(self, exception: Exception) -> None:
        self.exception, self.is_done = exception, True
        self._notify()

    def _notify(self) -> None:
        if self._waiting:
            for future in self._waiting:
                future._fire()


class FutureRecordMetadata:
    """The future ``send()`` returns: kafka-python's interface, resolved from its batch."""

    __slots__ = ("_result", "_index", "_callbacks", "_errbacks", "_wait_until")

    def __init__(self, result: ProduceResult, index: int, wait_until=None):
        self._result, self._index = result, index
        self._callbacks = self._errbacks = ()
        self._wait_until = wait_until

    @property
    def is_done(self) -> bool:
        return self._result.is_done

    @property
    def exception(self):
        return self._result.exception

    @property
    def value(self):
        r = self._result
        if not r.is_done or r.exception is not None:
            return None
        record = r.records[self._index]
        offset = -1 if r.base_offset < 0 else r.base_offset + self._index
        return RecordMetadata(
            r.topic,
            r.partition,
            TopicPartition(r.topic, r.partition),
            offset,
            record.timestamp_ms,
            None,
            len(record.key or b""),
            len(record.value or b""),
            -1,
        )

    def succeeded(self) -> bool:
        return self._result.is_done and self._result.exception is None

    def failed(self) -> bool:
        return self._result.is_done and self._result.exception is not None

    def _register(self) -> None:
        r = self._result
        if r._waiting is None:
            r._waiting = []
        if self not in r._waiting:
            r._waiting.append(self)

    def _fire(self) -> None:
        if self._result.exception is None:
            value = self.value
            for f in self._callbacks:  # type: ignore[var-annotated]  # (callable, args, kwargs) or callable
                f(value)
        else:
            for f in self._errbacks:
                f(self._result.exception)

    def add_callback(self, f, *args, **kwargs):
        f = functools.partial(f, *args, **kwargs) if args or kwargs else f
        if self.succeeded():
            f(self.value)
        elif not self.is_done:
            self._callbacks = (*self._callbacks, f)
            self._register()
        return self

    def add_errback(self, f, *args, **kwargs):
        f = functools.partial(f, *args, **kwargs) if args or kwargs else f
        if self.failed():
            f(self.exception)
        elif not self.is_done:
            self._errbacks = (*self._errbacks, f)
            self._register()
        return self

    def add_both(self, f, *args, **kwargs):
        self.add_callback(f, *args, **kwargs)
        return self.add_errback(f, *args, **kwargs)

    get = Future.get
