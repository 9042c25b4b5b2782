"""The compiled evaluations (engines/alphabeta/evaluation.pyx) have no Python-level API: they
are called from the search in C (``cimport``)."""
