"""Q-value models for DQN agents."""
