"""Ready-made settings for MuJoCo continuous control (rlpyt's ``experiments.configs.mujoco``)."""
