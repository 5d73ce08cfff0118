"""The deterministic simulation substrate: event loop and network.

Taught in notebooks/01_replicated_log.
"""

from .loop import ReentrantRunError, Simulation
from .network import Network

__all__ = ["Simulation", "Network", "ReentrantRunError"]
