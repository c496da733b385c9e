"""Benchmarks: accuracy against published runs, latency, throughput (run as scripts)."""
