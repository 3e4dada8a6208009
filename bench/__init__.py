"""Benchmarks: each script writes a results file under bench/results with the machine noted."""
