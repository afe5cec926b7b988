"""Policy-gradient algorithms: A2C and PPO."""
