"""What policy-gradient agents record per step."""

from __future__ import annotations

from rlrun.utils.collections import namedarraytuple

__all__ = ["AgentInfo", "AgentInfoRnn"]

# dist_info: the policy's distribution parameters at the step; value: the value estimate V(s_t).
AgentInfo = namedarraytuple("AgentInfo", ["dist_info", "value"])
AgentInfoRnn = namedarraytuple("AgentInfoRnn", ["dist_info", "value", "prev_rnn_state"])
