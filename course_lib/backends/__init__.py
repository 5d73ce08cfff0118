"""The adapters behind :class:`course_lib.backend.Backend`, one module each.

- :mod:`.base` - the protocol, the timing profile and what every adapter does the same way;
- :mod:`.sim` - the simulated cluster (virtual time, seeded);
- :mod:`.kafka` - real Kafka through kafka-python.

Scenarios import :mod:`course_lib.backend`, never these: the adapter contract is documented there.
"""
