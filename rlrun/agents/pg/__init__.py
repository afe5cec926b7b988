"""Policy-gradient agents: a policy distribution plus a value estimate (A2C, PPO)."""
