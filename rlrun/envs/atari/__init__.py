"""Atari 2600 games on the Arcade Learning Environment (ale-py), with rlpyt's observation convention."""

from rlrun.envs.atari.atari_env import ACTION_MEANING, AtariEnv, AtariEnvInfo, AtariTrajInfo

__all__ = ["AtariEnv", "AtariTrajInfo", "AtariEnvInfo", "ACTION_MEANING"]
