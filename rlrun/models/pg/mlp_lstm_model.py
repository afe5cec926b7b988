"""The default recurrent policy-and-value network for vector observations and discrete actions."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from rlrun.models.lstm import RecurrentState, RnnState, lstm_over_sequence
from rlrun.models.mlp import MlpModel
from rlrun.models.running_mean_std import RunningMeanStdModel
from rlrun.utils.collections import NamedArrayTuple
from rlrun.utils.tensor import infer_leading_dims, restore_leading_dims

__all__ = ["CategoricalPgLstmModel", "RnnState"]


class _LstmTower(torch.nn.Module):
    """An optional MLP, an LSTM reading its output (with the previous action and reward when
    ``reads_prev_step``), an optional MLP on the LSTM's output, and linear heads."""

    def __init__(
        self,
        input_size: int,
        action_size: int,
        hidden_sizes: Sequence[int],
        lstm_size: int,
        nonlinearity: type[torch.nn.Module],
        head_sizes: Sequence[tuple[int, float]],
        head_hidden_sizes: Sequence[int] = (),
        reads_prev_step: bool = True,
    ) -> None:
        super().__init__()
        self.mlp = MlpModel(input_size, list(hidden_sizes), nonlinearity=nonlinearity) if hidden_sizes else None
        feature_size = self.mlp.output_size if self.mlp is not None else input_size
        self.reads_prev_step = reads_prev_step
        self.lstm = torch.nn.LSTM(feature_size + (action_size + 1 if reads_prev_step else 0), lstm_size)
        self.head_mlp = (
            MlpModel(lstm_size, list(head_hidden_sizes), nonlinearity=nonlinearity) if head_hidden_sizes else None
        )
        head_input = self.head_mlp.output_size if self.head_mlp is not None else lstm_size
        self.heads = torch.nn.ModuleList(torch.nn.Linear(head_input, size) for size, _gain in head_sizes)
        mlp_layers = [
            m
            for mlp in (self.mlp, self.head_mlp)
            if mlp is not None
            for m in mlp.modules()
            if isinstance(m, torch.nn.Linear)
        ]
        gains = [math.sqrt(2)] * len(mlp_layers) + [gain for _size, gain in head_sizes]
        for layer, gain in zip([*mlp_layers, *self.heads], gains):
            torch.nn.init.orthogonal_(layer.weight, gain)
            torch.nn.init.zeros_(layer.bias)

    def forward(
        self,
        x: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None,
        T: int,
        B: int,
    ) -> tuple[list[torch.Tensor], NamedArrayTuple]:
        features = self.mlp(x) if self.mlp is not None else x
        if self.reads_prev_step:
            out, state = lstm_over_sequence(self.lstm, features, prev_action, prev_reward, init_rnn_state, T, B)
        else:
            initial = None if init_rnn_state is None else tuple(init_rnn_state)
            out, (h, c) = self.lstm(features.reshape(T, B, -1), initial)
            out, state = out.reshape(T * B, -1), RnnState(h=h, c=c)
        if self.head_mlp is not None:
            out = self.head_mlp(out)
        return [head(out) for head in self.heads], state


class CategoricalPgLstmModel(torch.nn.Module):
    """Action probabilities ``pi [..., action_size]``, values ``v [...]`` and the next LSTM state.

    :class:`RecurrentCategoricalPgAgent <rlrun.agents.pg.categorical.RecurrentCategoricalPgAgent>`
    builds it when given no ``ModelCls`` (rlpyt had no recurrent model for vector observations and
    discrete actions). Observations ``[T, B, *observation_shape]`` (or ``[B, ...]``, or unbatched) go
    through an MLP (``hidden_sizes``, with ``nonlinearity``; none if empty) into an LSTM of
    ``lstm_size`` units that also reads the one-hot previous action and the previous reward; linear
    heads give ``pi`` and ``v``. The policy and the value have a tower each (MLP and LSTM) unless
    ``shared_lstm=True``: in one shared tower the value loss, whose gradients are far larger early in
    training, shapes the features the policy reads, which slows learning markedly on small tasks.
    The state is ``RnnState(h, c)`` of ``[N, B, lstm_size]`` tensors, ``N = 2`` (policy tower, then
    value tower) or 1 when shared. Linear layers are orthogonally initialised, the policy head with
    gain 0.01 so the first policy is near uniform.

    ``head_hidden_sizes`` adds an MLP between each LSTM and its heads (the layout of sb3-contrib's
    ``RecurrentActorCriticPolicy``, whose ``net_arch`` sits after the LSTM), and ``reads_prev_step=False``
    leaves the previous action and reward out of the LSTM's input (sb3-contrib reads the observation
    only). With ``normalize_observation=True`` observations are standardised by running statistics,
    updated only by :meth:`update_obs_rms` (A2C and PPO call it through the agent once per batch), the
    variance floored at ``norm_obs_var_clip`` and the result clipped to ``[-norm_obs_clip,
    norm_obs_clip]``. On CartPole without velocities the policy must tell motion from small changes of
    the pole angle (radians, within 0.21), which standardising makes large: it took recurrent PPO from 1
    seed of 5 solving to 4 (docs/recurrent_pg.md).
    """

    def __init__(
        self,
        observation_shape: Sequence[int],
        action_size: int,
        hidden_sizes: Sequence[int] = (64,),
        lstm_size: int = 64,
        nonlinearity: type[torch.nn.Module] = torch.nn.Tanh,
        shared_lstm: bool = False,
        head_hidden_sizes: Sequence[int] = (),
        reads_prev_step: bool = True,
        normalize_observation: bool = False,
        norm_obs_clip: float = 10,
        norm_obs_var_clip: float = 1e-6,
    ) -> None:
        super().__init__()
        self._obs_ndim = len(observation_shape)
        self.norm_obs_clip = norm_obs_clip
        self.norm_obs_var_clip = norm_obs_var_clip
        self.obs_rms = RunningMeanStdModel(observation_shape) if normalize_observation else None
        input_size = int(np.prod(observation_shape))
        self.shared_lstm = shared_lstm

        def tower(head_sizes: list[tuple[int, float]]) -> _LstmTower:
            return _LstmTower(
                input_size,
                action_size,
                hidden_sizes,
                lstm_size,
                nonlinearity,
                head_sizes,
                head_hidden_sizes,
                reads_prev_step,
            )

        self.pi = tower([(action_size, 0.01), (1, 1.0)] if shared_lstm else [(action_size, 0.01)])
        self.v = None if shared_lstm else tower([(1, 1.0)])

    def forward(
        self,
        observation: torch.Tensor,
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        init_rnn_state: RecurrentState | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, RecurrentState]:
        lead_dim, T, B, _ = infer_leading_dims(observation, self._obs_ndim)
        observation = observation.to(torch.float32)
        if self.obs_rms is not None:
            observation = self.obs_rms.normalize(observation, self.norm_obs_var_clip, self.norm_obs_clip)
        x = observation.reshape(T * B, -1)
        inputs = (x, prev_action, prev_reward)
        if self.v is None:
            (logits, v), state = self.pi(*inputs, init_rnn_state, T, B)
        else:
            pi_state = v_state = None
            if init_rnn_state is not None:
                h, c = init_rnn_state
                pi_state, v_state = RnnState(h[:1], c[:1]), RnnState(h[1:], c[1:])
            (logits,), pi_state = self.pi(*inputs, pi_state, T, B)
            (v,), v_state = self.v(*inputs, v_state, T, B)
            state = RnnState(h=torch.cat([pi_state.h, v_state.h]), c=torch.cat([pi_state.c, v_state.c]))
        pi = F.softmax(logits, dim=-1)
        pi, v = restore_leading_dims((pi, v.squeeze(-1)), lead_dim, T, B)
        return pi, v, state

    def update_obs_rms(self, observation: torch.Tensor) -> None:
        """Fold a batch of observations into the normalisation statistics (no-op without normalisation)."""
        if self.obs_rms is not None:
            self.obs_rms.update(observation)
