"""What the LSTM policy-and-value models share: the state type and one pass of the LSTM over ``[T, B]``.

Recurrent models take the features of each step together with the previous action and reward, and an
initial state ``RnnState(h, c)`` of ``[N, B, H]`` tensors (``N`` layers; the layout of
``torch.nn.LSTM``), or None for zeros. They return the state after the last step in the same layout,
with the ``B`` dim kept even for unbatched input.
"""

from __future__ import annotations

from typing import TypeAlias

import torch

from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = ["RnnState", "RecurrentState", "lstm_over_sequence"]

RnnState = namedarraytuple("RnnState", ["h", "c"])

# A recurrent model's state between steps: ``RnnState(h, c)`` (LSTM) or one ``[N, B, H]`` tensor (GRU).
RecurrentState: TypeAlias = "torch.Tensor | NamedArrayTuple"


def lstm_over_sequence(
    lstm: torch.nn.LSTM,
    features: torch.Tensor,
    prev_action: torch.Tensor,
    prev_reward: torch.Tensor,
    init_rnn_state: RecurrentState | None,
    T: int,
    B: int,
) -> tuple[torch.Tensor, NamedArrayTuple]:
    """Run ``lstm`` over ``T`` steps of ``B`` sequences; returns ``(output [T * B, H], RnnState)``.

    ``features`` is ``[T * B, F]``; ``prev_action`` (one-hot for discrete actions) and ``prev_reward``
    hold ``T * B`` entries in any leading shape. The LSTM's input at each step is the concatenation
    ``[features, prev_action, prev_reward]``.
    """
    x = torch.cat(
        [
            features.reshape(T, B, -1),
            prev_action.reshape(T, B, -1).to(features.dtype),
            prev_reward.reshape(T, B, 1).to(features.dtype),
        ],
        dim=-1,
    )
    state = None if init_rnn_state is None else tuple(init_rnn_state)  # (h, c); [] would index the arrays
    out, (h, c) = lstm(x, state)
    return out.reshape(T * B, -1), RnnState(h=h, c=c)
