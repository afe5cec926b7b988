"""What every asynchronous sampler does in the training process, before its own process starts.

:meth:`AsyncSamplerMixin.async_initialize` builds one env to size things, initializes the agent with
its model in shared memory (the weights the optimiser publishes), and allocates the double buffer:
two ``[T, B]`` samples buffers in shared memory. The runner then starts the sampler's process, which
calls ``initialize(affinity)`` there and ``obtain_samples(itr, db_idx)`` per batch.
"""

from __future__ import annotations

import logging
from typing import Any

from rlrun.envs.validation import validate_env
from rlrun.samplers.buffer import build_samples_buffer
from rlrun.utils.seed import make_seed

__all__ = ["AsyncSamplerMixin"]

_log = logging.getLogger(__name__)


class AsyncSamplerMixin:
    """Put first among an asynchronous sampler's bases; it adds the training process's half of the set-up."""

    # Declared for the type checker; BaseSampler provides them.
    EnvCls: Any
    env_kwargs: dict
    batch_spec: Any
    eval_n_envs: int

    def async_initialize(
        self,
        agent: Any,
        bootstrap_value: bool = False,
        traj_info_kwargs: dict | None = None,
        seed: int | None = None,
    ) -> tuple[tuple[Any, Any], dict]:
        """In the training process: initialize ``agent`` (model in shared memory, weights publishable),
        build the double buffer; returns ``(double_buffer, examples)``."""
        self.seed = make_seed() if seed is None else int(seed)
        self.traj_info_kwargs = dict(traj_info_kwargs or {})
        self.bootstrap_value = bootstrap_value
        B = self.batch_spec.B
        env = self.EnvCls(**self.env_kwargs)
        try:
            validate_env(env)
            agent.initialize(env.spaces, share_memory=True, global_B=B, env_ranks=list(range(B)))
            agent.share_weights_async()
            _, first, examples = build_samples_buffer(
                agent, env, self.batch_spec, bootstrap_value, agent_shared=True, env_shared=True, subprocess=True
            )
            _, second, _ = build_samples_buffer(
                agent, env, self.batch_spec, bootstrap_value, True, True, True, examples=examples
            )
        finally:
            env.close()
        self.double_buffer = (first, second)
        self.examples = examples
        self.agent = agent
        _log.info("%s: double buffer of 2 x [%d, %d] steps in shared memory.", type(self).__name__, *self.batch_spec)
        return self.double_buffer, self.examples
