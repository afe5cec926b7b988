"""Agents for continuous control with learned critics: DDPG, TD3 and SAC."""
