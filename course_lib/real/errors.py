"""What a real cluster (local or remote) raises when it cannot do what was asked."""


class ClusterError(RuntimeError):
    """The cluster could not do what was asked; the message says what to do."""


class PortInUse(ClusterError):
    """A port the local cluster needs is taken by another process."""


class StaleDataDir(ClusterError):
    """The local cluster's data directory holds another (or a running) cluster's data."""
