"""DQN agents for Atari."""
