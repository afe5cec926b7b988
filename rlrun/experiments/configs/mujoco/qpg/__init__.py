"""Ready-made settings for DDPG, TD3 and SAC on MuJoCo tasks (and Pendulum-v1, their quick check)."""
