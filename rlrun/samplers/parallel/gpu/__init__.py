"""Samplers whose master serves the actions: workers step envs only (rlpyt's GPU samplers)."""
