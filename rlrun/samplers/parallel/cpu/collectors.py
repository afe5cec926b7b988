"""rlpyt's names for the collectors that run the agent where the envs are (serial or CPU workers)."""

from rlrun.samplers.collectors import EvalCollector as CpuEvalCollector
from rlrun.samplers.collectors import ResetCollector as CpuResetCollector
from rlrun.samplers.collectors import WaitResetCollector as CpuWaitResetCollector

__all__ = ["CpuResetCollector", "CpuWaitResetCollector", "CpuEvalCollector"]
