"""The ``[T, B]`` samples buffer every sampler writes, and the examples it is built from."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.samplers.collections import AgentSamples, AgentSamplesBsv, BatchSpec, EnvSamples, Samples
from rlrun.utils.buffer import buffer_from_example, buffer_func, buffer_method, torchify_buffer
from rlrun.utils.collections import AttrDict, NamedArrayTuple, optional_field

__all__ = ["build_samples_buffer", "get_example_outputs"]


def get_example_outputs(
    agent: BaseAgent, env: Env, examples: dict[str, Any] | None = None, subprocess: bool = False
) -> dict[str, Any]:
    """One observation, reward, done, env_info, action and agent_info, from a real step in this process.

    Runs in the calling process on purpose: rlpyt did this in a child through ``mp.Manager``, which
    users saw hang. Leaves the env mid-episode; collectors reset every env they start. As in rlpyt,
    a dict passed as ``examples`` is filled in place (and returned); ``subprocess`` changes nothing.
    """
    observation = env.reset()
    action = env.action_space.null_value()
    observation, reward, done, env_info = env.step(action)
    reward = np.asarray(reward, dtype=np.float32)
    agent.reset()
    inputs = (_as_array(observation), _as_array(action), reward)
    batched = [buffer_method(torchify_buffer(x), "unsqueeze", 0) for x in inputs]
    # Unpacked, not read by field: an agent's ``step`` may return rlpyt's plain ``(action, agent_info)``.
    action_out, agent_info = agent.step(*batched)
    action_out, agent_info = action_out[0], buffer_func(agent_info, _first_row)
    agent.reset()
    outputs = AttrDict(
        observation=observation,
        reward=reward,
        done=np.asarray(bool(done)),
        env_info=env_info,
        action=_to_numpy(action_out),
        agent_info=_to_numpy(agent_info),
    )
    if examples is None:
        return outputs
    examples.update(outputs)
    return examples


def _first_row(x: Any) -> Any:
    return x[0]


def _as_array(x: Any) -> Any:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_as_array(v) for v in x))
    return np.asarray(x)


def _to_numpy(x: Any) -> Any:
    if x is None:
        return None
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(_to_numpy(v) for v in x))
    return x.detach().cpu().numpy() if hasattr(x, "detach") else np.asarray(x)


def build_samples_buffer(
    agent: BaseAgent,
    env: Env,
    batch_spec: BatchSpec,
    bootstrap_value: bool = False,
    agent_shared: bool = True,
    env_shared: bool = True,
    subprocess: bool = True,
    examples: dict[str, Any] | None = None,
) -> tuple[NamedArrayTuple, NamedArrayTuple, dict[str, Any]]:
    """Allocate the batch buffer and return ``(samples_pyt, samples_np, examples)``.

    ``samples_np`` holds numpy arrays (in shared memory where ``*_shared``); ``samples_pyt`` holds
    torch tensors over the same bytes. ``prev_action`` and ``prev_reward`` are views of ``action`` and
    ``reward`` shifted by one step (one extra leading row), so each value is written once; row 0 of
    ``prev_*`` carries over the last step of the previous batch. ``subprocess`` is accepted for
    rlpyt compatibility: examples are always computed in this process.
    """
    if examples is None:
        examples = get_example_outputs(agent, env)
    T, B = batch_spec

    all_action = buffer_from_example(examples["action"], (T + 1, B), agent_shared)
    action, prev_action = all_action[1:], all_action[:-1]
    agent_info = buffer_from_example(examples["agent_info"], (T, B), agent_shared)
    if bootstrap_value:
        value_example = _bootstrap_example(examples["agent_info"])
        bootstrap = buffer_from_example(value_example, (1, B), agent_shared)
        agent_buffer = AgentSamplesBsv(action, prev_action, agent_info, bootstrap)
    else:
        agent_buffer = AgentSamples(action, prev_action, agent_info)

    observation = buffer_from_example(examples["observation"], (T, B), env_shared)
    all_reward = buffer_from_example(examples["reward"], (T + 1, B), env_shared)
    reward, prev_reward = all_reward[1:], all_reward[:-1]
    done = buffer_from_example(examples["done"], (T, B), env_shared)
    env_info = buffer_from_example(examples["env_info"], (T, B), env_shared)
    env_buffer = EnvSamples(observation, reward, prev_reward, done, env_info)

    samples_np: NamedArrayTuple = Samples(agent=agent_buffer, env=env_buffer)
    samples_pyt: NamedArrayTuple = torchify_buffer(samples_np)
    return samples_pyt, samples_np, examples


def _bootstrap_example(agent_info: NamedArrayTuple | None) -> np.ndarray:
    value = optional_field(agent_info, "value")
    if value is None:
        raise ValueError(
            "The algorithm asks for bootstrap values, but the agent's agent_info has no 'value' field. "
            "Use an agent that estimates values (a policy-gradient agent), or an algorithm with bootstrap_value=False."
        )
    return np.asarray(value, dtype=np.float32)
