"""The replicated in-memory broker: partition logs, replication, ISR, controller, producer state.

Taught in notebooks/01_replicated_log and notebooks/02_acks_and_durability.
"""

from .cluster import Cluster
from .options import ClusterOptions

__all__ = ["Cluster", "ClusterOptions"]
