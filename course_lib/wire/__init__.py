"""The simulator speaks Kafka: real clients (kafka-python, Java, kcat) against the simulated
cluster over TCP. See :class:`WireCluster`."""

from .cluster import WireCluster

__all__ = ["WireCluster"]
