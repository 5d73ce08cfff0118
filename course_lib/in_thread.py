"""A loop in a thread of its own, as a separate application process runs it: the supervised
application instances (:mod:`course_lib.application.supervisor`) and kafka-python's group member
(:mod:`course_lib.client_adapters.for_kafka_python`), which must not be polled from two threads.
"""

from __future__ import annotations

import threading
from typing import Callable


class InThread:
    """``loop(stopping)`` in a thread of its own, as a separate application process runs; the loop
    returns once ``stopping`` is set. Only that thread may touch the instance's clients (a
    KafkaConsumer is not thread-safe). A failure - any exception, or :class:`AppCrash` - is kept
    in :attr:`failure` and raised in the supervising thread by :meth:`check`, never lost.

    >>> def loop(stopping):
    ...     raise RuntimeError("poll")
    >>> running = InThread("demo", loop)
    >>> running.stop()
    >>> running.check()
    Traceback (most recent call last):
    ...
    RuntimeError: poll
    """

    def __init__(self, name: str, loop: Callable[[threading.Event], None]):
        self.stopping = threading.Event()
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(loop,), name=name, daemon=True)
        self._thread.start()

    def _run(self, loop: Callable[[threading.Event], None]) -> None:
        try:
            loop(self.stopping)
        except BaseException as exc:  # noqa: BLE001 - kept for check(): a thread's failure must not vanish
            self.failure = exc

    def check(self) -> None:
        """Raise the instance's failure, if it had one."""
        if self.failure is not None:
            raise self.failure

    def stop(self, timeout_s: float = 30) -> None:
        """Ask the loop to return and wait for it (at most ``timeout_s``); see :meth:`check`."""
        self.stopping.set()
        self._thread.join(timeout=timeout_s)
