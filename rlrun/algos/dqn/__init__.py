"""Q-learning algorithms."""
