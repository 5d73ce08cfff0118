"""The adapters behind :class:`course_lib.backend.Backend`, one module each.

- :mod:`.base` - the protocol (five roles), the timing profile and what every adapter does the
  same way;
- :mod:`.sim` - the simulated cluster with its own clients (virtual time, seeded);
- :mod:`.composed` - a client adapter (:mod:`course_lib.client_adapters`) on a wall-clock cluster
  (:mod:`course_lib.clusters`: LocalCluster, connect(), WireCluster).

Scenarios import :mod:`course_lib.backend`, never these: the adapter contract is documented there.
"""
