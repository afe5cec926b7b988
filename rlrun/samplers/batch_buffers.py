"""The buffer scheme of a sampler: one ``[T, B]`` samples batch, or a double buffer of two.

Synchronous samplers write every batch into one buffer, which the algorithm reads between batches.
Asynchronous samplers write batch ``itr`` into half ``itr % 2`` while a copier reads the other half.
Everything else in a sampler (its collectors, workers and action server) is the same for both; this
part is what they are handed instead of a bare buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rlrun.agents.base import BaseAgent
from rlrun.envs.base import Env
from rlrun.samplers.buffer import build_samples_buffer
from rlrun.samplers.collections import BatchSpec
from rlrun.utils.collections import NamedArrayTuple

__all__ = ["BatchBuffers"]


@dataclass(frozen=True)
class BatchBuffers:
    """One (``len(halves_np) == 1``) or two ``[T, B]`` samples buffers, numpy and torch views of the same
    bytes, and the examples (one env step, one agent step) they were built from."""

    halves_np: tuple[NamedArrayTuple, ...]
    halves_pyt: tuple[NamedArrayTuple, ...]
    examples: dict[str, Any]

    @classmethod
    def build(
        cls,
        agent: BaseAgent,
        env: Env,
        batch_spec: BatchSpec,
        bootstrap_value: bool,
        shared: bool,
        double: bool = False,
    ) -> BatchBuffers:
        """Buffers for ``agent`` acting in ``env`` (an example env; the agent is initialized). ``shared``:
        in shared memory, written by other processes; ``double``: two of them (asynchronous samplers)."""
        pyt, np_, examples = build_samples_buffer(
            agent, env, batch_spec, bootstrap_value, agent_shared=shared, env_shared=shared, subprocess=shared
        )
        halves_np, halves_pyt = [np_], [pyt]
        if double:
            pyt, np_, _ = build_samples_buffer(
                agent,
                env,
                batch_spec,
                bootstrap_value,
                agent_shared=shared,
                env_shared=shared,
                subprocess=shared,
                examples=examples,
            )
            halves_np.append(np_)
            halves_pyt.append(pyt)
        return cls(tuple(halves_np), tuple(halves_pyt), examples)

    @property
    def double(self) -> bool:
        return len(self.halves_np) == 2

    def np_of(self, itr: int) -> NamedArrayTuple:
        """The numpy buffer batch ``itr`` goes into."""
        return self.halves_np[itr % len(self.halves_np)]

    def pyt_of(self, itr: int) -> NamedArrayTuple:
        """The torch view of :meth:`np_of`."""
        return self.halves_pyt[itr % len(self.halves_pyt)]

    def collector_samples(
        self, columns: slice = slice(None)
    ) -> NamedArrayTuple | tuple[NamedArrayTuple, NamedArrayTuple]:
        """What a collector holding these ``columns`` is given as ``samples_np``: its columns of the
        buffer, or a pair of them for a double buffer (the ``Db`` collectors)."""
        if self.double:
            first, second = self.halves_np
            return first[:, columns], second[:, columns]
        single: NamedArrayTuple = self.halves_np[0] if columns == slice(None) else self.halves_np[0][:, columns]
        return single
