"""What a recurrent agent carries from one ``step`` to the next, as parts the agent holds.

- :class:`GroupMemory`: one env group's recurrent state (None stands for zeros) and the envs of that
  group reset since its last step (they start an episode at the next one).
- :class:`ServedGroups`: one :class:`GroupMemory` per env group the agent serves in turn, and which
  group is served: two for an alternating agent (rlpyt's ``toggle_alt`` / ``get_alt``), one otherwise.
- :class:`RecurrentMemory`: the groups of the current mode, and the sampling groups set aside while the
  agent trains or evaluates, so that sampling resumes where it stopped.

:class:`~rlrun.agents.base.RecurrentAgentMixin` holds a :class:`RecurrentMemory` and forwards the
agent's calls to it; an agent needs no class of its own to alternate.

:func:`hide_previous_step` is the one episode-start treatment of every recurrent agent (R2D1's, the
recurrent policy-gradient agents'): at an episode's first step the model sees zeros as the previous
action and reward, in sampling, evaluation and training alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from rlrun.models.lstm import RecurrentState

__all__ = [
    "GroupMemory",
    "ServedGroups",
    "RecurrentMemory",
    "StatelessRnnHooks",
    "zero_batch_entry",
    "hide_previous_step",
]


class StatelessRnnHooks:
    """The recurrent-state hooks of a recurrent agent class that keeps no state itself (rlpyt's ``...Base``
    agents: ``R2d1AgentBase``, ``RecurrentCategoricalPgAgentBase``, ``RecurrentGaussianPgAgentBase``): every
    step starts from zeros and no env is marked as starting an episode.
    :class:`~rlrun.agents.base.RecurrentAgentMixin`, put before the agent class, replaces them with its
    :class:`RecurrentMemory`'s. No rlrun base, so it adds no level to a class chain.
    """

    @property
    def prev_rnn_state(self) -> RecurrentState | None:
        """The state the next step starts from: always None (zeros)."""
        return None

    def advance_rnn_state(self, new_rnn_state: RecurrentState) -> None:
        """Keep the state a step produced: nothing is kept."""

    def episode_starts(self, B: int) -> torch.Tensor | None:
        """Which of the ``B`` envs the next step starts an episode for: none marked."""
        return None


def zero_batch_entry(state: RecurrentState | None, idx: int) -> None:
    """Zero column ``idx`` (the B dim of ``[N, B, H]``) of a state tensor or a tuple of them, in place."""
    if state is None:
        return
    if isinstance(state, torch.Tensor):
        state[:, idx] = 0
        return
    for s in state:
        zero_batch_entry(s, idx)


def hide_previous_step(
    prev_action: torch.Tensor, prev_reward: torch.Tensor, episode_start: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``prev_action`` and ``prev_reward`` as the model reads them (one-hot or continuous actions
    ``[..., A]``, or indexes shaped like ``prev_reward``), zeroed at the steps where ``episode_start``
    (bool, the shape of ``prev_reward``; None for none).

    Why: collectors hand an episode's first step the previous episode's last action and reward (a
    wait-reset collector, the action of its last filler step), but an evaluation's first episode
    starts from the null action and reward 0; a model that saw the former in training meets an input
    it never learned at the start of every evaluation. Zeros ("no action yet, no reward yet") are
    what every step that starts an episode sees, wherever it runs.
    """
    if episode_start is None:
        return prev_action, prev_reward
    episode_start = torch.as_tensor(episode_start, dtype=torch.bool)
    # Most steps start no episode. Asked of a mask on a GPU (training's), the question would make the
    # host wait for the device: there the zeros are multiplied in without asking.
    if episode_start.device.type == "cpu" and not bool(episode_start.any()):
        return prev_action, prev_reward
    keep = (~episode_start).to(prev_reward.device)
    prev_reward = prev_reward * keep.to(prev_reward.dtype)
    keep_action = keep.view(*keep.shape, *([1] * (prev_action.dim() - keep.dim())))
    return prev_action * keep_action.to(prev_action.dtype), prev_reward


@dataclass
class GroupMemory:
    """One env group's carry-over between steps."""

    rnn_state: RecurrentState | None = None  # the state the next step starts from; None: zeros
    starting: set[int] = field(default_factory=set)  # envs reset since the last step

    def copy(self) -> GroupMemory:
        """A copy that later steps of this group do not change (the state tensors are shared, as steps
        replace them rather than write into them)."""
        return GroupMemory(self.rnn_state, set(self.starting) if self.starting else set())


class ServedGroups:
    """The memories of ``n_groups`` env groups served in turn, and the index of the one served now."""

    __slots__ = ("groups", "alt")

    def __init__(self, n_groups: int) -> None:
        self.groups = [GroupMemory() for _ in range(n_groups)]
        self.alt = 0

    def copy(self) -> ServedGroups:
        copied = ServedGroups.__new__(ServedGroups)  # not __init__: no fresh groups to throw away
        copied.groups = [g.copy() for g in self.groups]
        copied.alt = self.alt
        return copied


class RecurrentMemory:
    """The recurrent state an agent keeps between steps, per env group and per mode.

    ``current`` is the served group's memory (kept as an attribute: ``step`` reads it every call).
    Training and evaluation start from fresh groups; the sampling groups wait aside until sampling
    resumes. Every mode change and :meth:`reset` serve group 0 again.
    """

    __slots__ = ("n_groups", "served", "current", "_sampling")

    def __init__(self, n_groups: int = 1) -> None:
        if n_groups not in (1, 2):
            raise ValueError(f"RecurrentMemory serves one env group or two (alternating), not {n_groups}.")
        self.n_groups = n_groups
        self.served = ServedGroups(n_groups)
        self.current = self.served.groups[0]
        self._sampling: ServedGroups | None = None

    @property
    def alt(self) -> int:
        """Which group is served: 0 or 1 (always 0 with one group)."""
        return self.served.alt

    def toggle(self) -> None:
        """Serve the other group (nothing to do with one group)."""
        if self.n_groups > 1:
            self.served.alt ^= 1
            self.current = self.served.groups[self.served.alt]

    def reset(self) -> None:
        """All envs of every group start over, from zeros."""
        self._serve(ServedGroups(self.n_groups))

    def reset_one(self, idx: int) -> None:
        """Env ``idx`` of the served group starts over: zero its state, and mark it as starting."""
        zero_batch_entry(self.current.rnn_state, idx)
        self.current.starting.add(int(idx))

    def advance(self, rnn_state: RecurrentState) -> None:
        """Keep the state a step produced for the served group; its envs are no longer starting."""
        current = self.current
        current.rnn_state = rnn_state
        if current.starting:
            current.starting = set()

    def leave_sampling(self, was_sampling: bool) -> None:
        """Training or evaluation begins: set the sampling groups aside (if sampling was on) and start fresh."""
        if was_sampling:
            self.served.alt = 0
            self._sampling = self.served
        self._serve(ServedGroups(self.n_groups))

    def resume_sampling(self, was_sampling: bool) -> None:
        """Sampling begins: take the sampling groups back (fresh ones the first time); serve group 0."""
        served = self.served if was_sampling else self._sampling or ServedGroups(self.n_groups)
        self._sampling = None
        served.alt = 0
        self._serve(served)

    def copy(self) -> RecurrentMemory:
        """A snapshot for :meth:`~rlrun.agents.base.BaseAgent.get_step_state`: later steps leave it as it is."""
        # Built without __init__ (no fresh groups to throw away): alternating samplers take a snapshot
        # each time they switch groups.
        copied = RecurrentMemory.__new__(RecurrentMemory)
        copied.n_groups = self.n_groups
        copied._serve(self.served.copy())
        copied._sampling = None if self._sampling is None else self._sampling.copy()
        return copied

    def _serve(self, served: ServedGroups) -> None:
        self.served = served
        self.current = served.groups[served.alt]
