"""Broad phase: linked-cell Verlet list and its brute-force twin."""
