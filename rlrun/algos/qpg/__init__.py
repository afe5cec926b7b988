"""Actor-critic algorithms for continuous actions trained from a replay: DDPG, TD3 and SAC."""
