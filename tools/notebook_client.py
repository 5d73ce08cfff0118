"""nbclient's ``NotebookClient``, with waits that cannot sleep through a message already there.

Why: nbclient waits for a cell's ``execute_reply`` with one ``poll`` of the kernel client's
asyncio ZMQ socket, as long as the cell's timeout (300 s in the tests). A ZMQ socket tells an
event loop about new messages through an edge-triggered file descriptor; when that edge is lost
(pyzmq's asyncio socket, with ipykernel 7 / jupyter_client 8 / pyzmq 27), the reply sits in the
socket and nobody looks until the poll times out - its timeout path makes one last
``zmq_poll(0)``, which finds the reply, and the cell "passes" after exactly the timeout. Seen as
tests/test_lesson_widgets.py taking 302-305 s on lessons 01 and 06: a cell that ran in 40 ms took
300.0 s; py-spy showed kernel and client idle, and a second client got its answer from the same
kernel meanwhile.

Here every wait on the shell and IOPub channels is cut into slices of :data:`RECHECK_S`; each
slice ends with that level-triggered ``zmq_poll(0)``, so a lost wake-up costs at most one slice.
The cell timeout keeps its meaning (the slices add up to it).
"""

from __future__ import annotations

import time
from queue import Empty

import nbclient

#: the longest a message already in the socket can go unnoticed
RECHECK_S = 0.5


def _rechecking(get_msg):
    async def get_msg_rechecking(timeout: float | None = None, **kwargs):
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=RECHECK_S if left is None else min(RECHECK_S, left), **kwargs)
            except Empty:
                if left is not None and left <= RECHECK_S:
                    raise

    return get_msg_rechecking


class NotebookClient(nbclient.NotebookClient):
    """``nbclient.NotebookClient`` whose kernel client re-checks its sockets (see the module)."""

    async def async_start_new_kernel_client(self):
        kc = await super().async_start_new_kernel_client()
        for channel in (kc.shell_channel, kc.iopub_channel):
            channel.get_msg = _rechecking(channel.get_msg)
        return kc
