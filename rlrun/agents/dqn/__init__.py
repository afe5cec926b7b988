"""Q-learning agents with epsilon-greedy exploration (DQN and its variants)."""
