"""Ready-made experiment configurations and builders (used by examples, learning tests, benchmarks)."""
