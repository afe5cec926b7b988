"""Ready-made settings for Atari 2600 games (rlpyt's ``experiments.configs.atari``)."""
