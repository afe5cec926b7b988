"""Ready-made settings for policy-gradient agents on Atari."""
