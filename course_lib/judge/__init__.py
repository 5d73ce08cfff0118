"""The judge: what a configuration guarantees (:mod:`.guarantees`), the checker that reads a
history and names what went wrong (:mod:`.checker`) and what it found (:mod:`.check_result`).
It reaches no backend, by any path (tests/test_layers.py)."""
