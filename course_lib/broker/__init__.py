"""The replicated in-memory broker: partition logs, replication, ISR, controller, producer state.

Taught in notebooks/01_replicated_log and notebooks/02_acks_and_durability.

Messages are typed: every request and answer is a frozen dataclass in :mod:`.protocol` (its
``kind`` is its name in the network's trace and drop rules), and every node dispatches on the
message's class through one handler table: ``HANDLERS`` in :mod:`.broker` (the broker and its
partition replicas), ``Controller.HANDLERS``, ``GroupCoordinator.HANDLERS``, ``TxnCoordinator.HANDLERS``,
and for share groups ``ShareGroupCoordinator.HANDLERS`` and ``ShareCoordinator.HANDLERS`` (the
broker hands a coordinator every request class its table names; ShareFetch and ShareAcknowledge
go to the partition leader's :class:`.share_partition.SharePartitionManager`). There is no dispatch on
strings. Adding an API (say one of Kafka 4's) is:

1. its request (and answer) dataclass in :mod:`.protocol` - a coordinator request subclasses
   ``GroupRequest`` or ``TxnRequest``, which say which coordinator to find;
2. its handler, ``handler(node, src, request)``, in the module named for what it does (a new
   module for a new concept);
3. one entry in the table of the node that answers it.

Clients send it with ``Requests._send`` (or ``_ask_coordinator``), the wire front end with
``gw.ask`` from its own handler in :mod:`course_lib.wire.apis`. A message no table names fails
loudly (``AssertionError``: a missing table entry, not a lost message).
"""

from .cluster import Cluster
from .options import ClusterOptions

__all__ = ["Cluster", "ClusterOptions"]
