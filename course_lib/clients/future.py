"""Futures with kafka-python's interface: ``get()``, ``add_callback``, ``add_errback``,
``succeeded()``, ``failed()``, ``is_done``, ``value``, ``exception``.

In the simulator ``get()`` does what a blocking call does in real life: it lets (virtual) time
pass - the event loop runs - until the outcome is known.
"""
from __future__ import annotations

import functools

from kafka import errors as Errors
from kafka.producer.future import RecordMetadata

__all__ = ["Future", "RecordMetadata"]


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
