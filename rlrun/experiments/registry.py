"""Which ready-made config trains which algorithm on which env: what ``rlrun train`` starts from.

An env name falls in one of three families (:func:`resolve_env`):

- ``"discrete"``: a Gymnasium id with discrete actions and vector observations (CartPole-v1, Acrobot-v1);
- ``"continuous"``: a Gymnasium id with bounded continuous actions (Pendulum-v1; MuJoCo ids such as
  HalfCheetah-v5, rlpyt's Hopper-v3 running as v5);
- ``"atari"``: an ALE game name that is no Gymnasium id (``pong``, ``breakout``) or an ``ALE/Pong-v5`` id.

:func:`select_config` picks the config for an ``(algorithm, family)`` pair from
:mod:`rlrun.experiments.configs` and returns a deep copy in one shape, the sections of rlpyt's Atari
configs: ``env`` (and ``eval_env``), ``sampler``, ``algo``, ``optim``, ``agent``, ``model`` and
``runner`` (``n_steps``, ``log_interval_steps``). :func:`apply_assignment` applies a
``SECTION.KEY=VALUE`` override; :mod:`rlrun.experiments.builder` builds the runner.
"""

from __future__ import annotations

import ast
import copy
import importlib
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "ALGOS",
    "FAMILIES",
    "TABLE",
    "ConfigError",
    "EnvChoice",
    "resolve_env",
    "select_config",
    "apply_assignment",
    "eval_settings",
]

ALGOS = ("a2c", "ppo", "dqn", "catdqn", "r2d1", "ddpg", "td3", "sac")
FAMILIES = ("discrete", "continuous", "atari")
SECTIONS = ("env", "eval_env", "sampler", "algo", "optim", "agent", "model", "runner")
ATARI_EPISODE_STEPS = 27_000  # the horizon of rlpyt's Atari configs


class ConfigError(ValueError):
    """A training request that no config serves, or an override that does not apply; says what to choose."""


@dataclass(frozen=True)
class EnvChoice:
    """An env name resolved: its family, the keywords that build it, and its episode length at most."""

    name: str
    family: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    episode_steps: int | None = None
    mujoco: bool = False

    @property
    def short_name(self) -> str:
        """A name for folders: the Gymnasium id or the game."""
        return str(self.env_kwargs.get("game", self.env_kwargs.get("id", self.name)))


# (algo, family) -> (module under rlrun.experiments.configs, key); "mujoco" replaces "continuous" for
# MuJoCo ids, and a second key is the recurrent (LSTM) agent's config where it has its own.
TABLE: dict[tuple[str, str], tuple[str, str]] = {
    ("a2c", "discrete"): ("cartpole", "a2c"),
    ("ppo", "discrete"): ("cartpole", "ppo"),
    ("dqn", "discrete"): ("cartpole", "dqn"),
    ("catdqn", "discrete"): ("cartpole", "catdqn"),
    ("r2d1", "discrete"): ("cartpole_r2d1", "r2d1"),
    ("ddpg", "continuous"): ("mujoco.qpg.pendulum", "ddpg"),
    ("td3", "continuous"): ("mujoco.qpg.pendulum", "td3"),
    ("sac", "continuous"): ("mujoco.qpg.pendulum", "sac"),
    ("a2c", "continuous"): ("mujoco.pg.mujoco_a2c", "a2c_1M"),
    ("ppo", "continuous"): ("mujoco.pg.mujoco_ppo", "ppo_1M_serial"),
    ("ddpg", "mujoco"): ("mujoco.qpg.mujoco_ddpg", "ddpg_from_td3_1M_serial"),
    ("td3", "mujoco"): ("mujoco.qpg.mujoco_td3", "td3_1M_serial"),
    ("sac", "mujoco"): ("mujoco.qpg.mujoco_sac", "sac_1M_serial"),
    ("dqn", "atari"): ("atari.dqn.atari_dqn", "dqn"),
    ("catdqn", "atari"): ("atari.dqn.atari_dqn", "catdqn"),
    ("r2d1", "atari"): ("atari.dqn.atari_r2d1", "r2d1"),
    ("a2c", "atari"): ("atari.pg.atari_ff_a2c", "0"),
    ("ppo", "atari"): ("atari.pg.atari_ff_ppo", "0"),
}
RECURRENT_TABLE: dict[tuple[str, str], tuple[str, str]] = {
    ("a2c", "atari"): ("atari.pg.atari_lstm_a2c", "0"),
    ("ppo", "atari"): ("atari.pg.atari_lstm_ppo", "0"),
}
PARALLEL_TABLE: dict[tuple[str, str], tuple[str, str]] = {
    ("ppo", "continuous"): ("mujoco.pg.mujoco_ppo", "ppo_1M_cpu"),  # 8 envs x 256 steps for workers
}
RECURRENT_ALGOS = ("a2c", "ppo")  # --recurrent picks their LSTM agents; r2d1 is always recurrent


def resolve_env(name: str) -> EnvChoice:
    """The family of ``name``: a Gymnasium id (built once to see its spaces, MuJoCo ids excepted) or an ALE game."""
    import gymnasium

    from rlrun.envs.mujoco_ids import current_mujoco_id

    match = re.fullmatch(r"ALE/(\w+)-v\d+", name)
    if match:  # ALE/MontezumaRevenge-v5 -> montezuma_revenge
        return _atari_choice(name, re.sub(r"(?<!^)(?=[A-Z])", "_", match.group(1)).lower())
    gym_id = current_mujoco_id(name)
    if gym_id not in gymnasium.registry:
        return _atari_choice(name, name)
    spec = gymnasium.spec(gym_id)
    steps = spec.max_episode_steps
    if "mujoco" in str(spec.entry_point):
        return EnvChoice(name, "continuous", dict(id=name), steps, mujoco=True)
    env = gymnasium.make(gym_id)
    try:
        action_space, obs_space = env.action_space, env.observation_space
    finally:
        env.close()
    if isinstance(action_space, gymnasium.spaces.Discrete) and isinstance(obs_space, gymnasium.spaces.Box):
        if len(obs_space.shape) == 1:
            return EnvChoice(name, "discrete", dict(id=name), steps)
    if isinstance(action_space, gymnasium.spaces.Box) and len(action_space.shape) == 1:
        return EnvChoice(name, "continuous", dict(id=name), steps)
    raise ConfigError(
        f"{name}: no ready-made config fits its spaces (actions {action_space}, observations {obs_space}); "
        "rlrun train knows discrete actions with vector observations, continuous actions, and Atari games."
    )


def _atari_choice(name: str, game: str) -> EnvChoice:
    try:
        from rlrun.envs.atari.ale_backend import ale_backend

        games = ale_backend().rom_ids()
    except ImportError as error:
        raise ConfigError(
            f"{name!r} is no Gymnasium id, and Atari games need ale-py ({error}); "
            "pip install 'rlrun[atari]', or give a Gymnasium id such as CartPole-v1."
        ) from error
    if game not in games:
        import difflib

        close = difflib.get_close_matches(game, games, n=3)
        hint = f" Close ALE games: {', '.join(close)}." if close else ""
        raise ConfigError(f"{name!r} is neither a Gymnasium id nor an ALE game.{hint}")
    return EnvChoice(name, "atari", dict(game=game), ATARI_EPISODE_STEPS)


def select_config(
    algo: str, env: EnvChoice, recurrent: bool = False, parallel: bool = False, eval_episodes: int = 10
) -> tuple[str, dict[str, Any]]:
    """``(source, config)``: the config for ``algo`` on ``env`` in sections (see the module), a copy.

    ``source`` names it (``"mujoco.qpg.pendulum:sac"``). ``parallel`` prefers a config sized for sampler
    workers where one exists. Raises :class:`ConfigError` naming the algorithms ``env``'s family has.
    """
    if algo not in ALGOS:
        raise ConfigError(f"Unknown algorithm {algo!r}; choose from {', '.join(ALGOS)}.")
    if recurrent and algo not in (*RECURRENT_ALGOS, "r2d1"):
        raise ConfigError(
            f"--recurrent picks the LSTM agent of a2c or ppo; {algo} has none "
            "(r2d1 is DQN's recurrent variant: --algo r2d1)."
        )
    family = "mujoco" if env.mujoco and (algo, "mujoco") in TABLE else env.family
    key = (algo, family)
    if key not in TABLE:
        offered = sorted(a for a, f in TABLE if f == env.family or (env.mujoco and f == "mujoco"))
        raise ConfigError(
            f"No config trains {algo} on {env.name} ({env.family} family); choose --algo from {', '.join(offered)}."
        )
    module_name, name = (recurrent and RECURRENT_TABLE.get(key)) or (parallel and PARALLEL_TABLE.get(key)) or TABLE[key]
    module = importlib.import_module(f"rlrun.experiments.configs.{module_name}")
    raw = copy.deepcopy(module.CONFIGS[name] if hasattr(module, "CONFIGS") else module.configs[name])
    config = raw
    if "runner" not in raw:  # cartpole.py and pendulum.py: evaluate as their build_runner does
        config = _in_sections(raw)
        config["sampler"].update(eval_settings(min(5, eval_episodes), env.episode_steps, eval_episodes))
    for section in SECTIONS:
        if section != "eval_env":
            config.setdefault(section, {})
    config["env"].update(env.env_kwargs)
    if "eval_env" in config:
        config["eval_env"].update(env.env_kwargs)
    config["runner"] = {k: int(v) for k, v in config["runner"].items()}
    return f"{module_name}:{name}", config


def _in_sections(raw: dict[str, Any]) -> dict[str, Any]:
    """cartpole.py's and pendulum.py's shape (``n_steps``, ``sampler``, ``algo``, ``agent``) in sections,
    with the samplers and log intervals their ``build_runner`` uses."""
    sampler = raw.get("sampler", dict(batch_T=1, batch_B=1))  # pendulum.py: one env, one step
    return dict(
        env={},
        sampler=dict(sampler, max_decorrelation_steps=0),
        algo=raw["algo"],
        optim={},
        agent=raw["agent"],
        model={},
        runner=dict(n_steps=raw["n_steps"], log_interval_steps=10_000 if "sampler" in raw else 1000),
    )


def eval_settings(n_envs: int, episode_steps: int | None, episodes: int = 10) -> dict[str, int]:
    """Sampler keywords for evaluations of ``episodes`` whole episodes on ``n_envs`` envs (0: none)."""
    if n_envs <= 0:
        return dict(eval_n_envs=0)
    steps = (episode_steps or 1000) + 1
    episodes = max(episodes, n_envs)
    return dict(
        eval_n_envs=n_envs,
        eval_max_steps=(episodes // n_envs + 1) * steps * n_envs,
        eval_max_trajectories=episodes,
    )


def parse_assignment(text: str) -> tuple[list[str], object]:
    """``"algo.learning_rate=1e-3"`` -> ``(["algo", "learning_rate"], 0.001)``; the value is a Python literal."""
    path, sep, value_text = text.partition("=")
    keys = path.strip().split(".")
    if not sep or len(keys) < 2 or not all(k.isidentifier() for k in keys):
        raise ConfigError(f"--set {text!r}: write SECTION.KEY=VALUE, e.g. --set algo.learning_rate=1e-3.")
    try:
        value = ast.literal_eval(value_text.strip())
    except (ValueError, SyntaxError) as error:
        raise ConfigError(
            f"--set {text!r}: {value_text!r} is not a Python literal ({type(error).__name__}); "
            "write numbers, True/False/None, tuples, or quoted strings such as --set env.game=\"'breakout'\"."
        ) from None
    return keys, value


def apply_assignment(config: dict[str, dict[str, object]], text: str) -> None:
    """Apply one ``--set SECTION.KEY[.KEY...]=VALUE`` to ``config`` in place (nested dicts are made)."""
    keys, value = parse_assignment(text)
    section = keys[0]
    if section not in SECTIONS or section not in config:
        raise ConfigError(f"--set {text!r}: no section {section!r}; this config has {', '.join(config)}.")
    target = config[section]
    for key in keys[1:-1]:
        inner = target.get(key)
        if inner is None:
            inner = target[key] = {}
        if not isinstance(inner, dict):
            raise ConfigError(f"--set {text!r}: {key!r} holds {inner!r}, not a dict of keywords.")
        target = inner
    target[keys[-1]] = value
