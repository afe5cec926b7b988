"""Collector names of the serial sampler (rlpyt's ``SerialEvalCollector``)."""

from rlrun.samplers.collectors import EvalCollector as SerialEvalCollector

__all__ = ["SerialEvalCollector"]
