"""Ready-made settings for value-based agents on Atari."""
