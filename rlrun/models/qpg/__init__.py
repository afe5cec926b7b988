"""Policy and Q-value networks for the continuous-control agents (DDPG, TD3, SAC)."""
