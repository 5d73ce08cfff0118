"""Benchmarks: ``make bench`` (or ``python -m bench``) prints the tables."""
