"""Leading-dim bookkeeping, masked means and index helpers (rlrun.utils.tensor)."""

from __future__ import annotations

import pytest
import torch

from rlrun.utils.tensor import (
    from_onehot,
    infer_leading_dims,
    restore_leading_dims,
    select_at_indexes,
    to_onehot,
    valid_mean,
)


def tiny_model(x: torch.Tensor, layer: torch.nn.Linear):
    """A model as rlrun writes them: fold the leading dims, apply the layer, restore them."""
    lead_dim, T, B, shape = infer_leading_dims(x, 1)
    out = layer(x.reshape(T * B, *shape))
    value = out.sum(-1)
    return restore_leading_dims((out, value, None), lead_dim, T, B)


@pytest.mark.parametrize(
    "shape, expected",
    [((3,), (0, 1, 1)), ((5, 3), (1, 1, 5)), ((4, 5, 3), (2, 4, 5))],
)
def test_infer_leading_dims_for_zero_one_and_two_leading_dims(shape, expected):
    lead_dim, T, B, data_shape = infer_leading_dims(torch.zeros(shape), 1)

    assert (lead_dim, T, B) == expected
    assert tuple(data_shape) == (3,)


@pytest.mark.parametrize("shape", [(3,), (5, 3), (4, 5, 3)])
def test_restore_leading_dims_gives_back_the_input_leading_dims(shape):
    layer = torch.nn.Linear(3, 2)

    out, value, nothing = tiny_model(torch.randn(shape), layer)

    assert out.shape == shape[:-1] + (2,)
    assert value.shape == shape[:-1]
    assert nothing is None


def test_restore_leading_dims_keeps_a_single_tensor_and_list_types():
    assert restore_leading_dims(torch.zeros(6, 2), 2, T=2, B=3).shape == (2, 3, 2)
    restored = restore_leading_dims([torch.zeros(1, 2)], 0)
    assert type(restored) is list and restored[0].shape == (2,)
    with pytest.raises(ValueError, match="lead_dim must be 0, 1 or 2"):
        restore_leading_dims(torch.zeros(2), 3)


def test_too_many_or_too_few_leading_dims_raise():
    with pytest.raises(ValueError, match=r"got shape \(2, 4, 5, 3\) \(3 leading dims\)"):
        infer_leading_dims(torch.zeros(2, 4, 5, 3), 1)
    with pytest.raises(ValueError, match=r"\(-1 leading dims\)"):
        infer_leading_dims(torch.zeros(3), 2)


def test_valid_mean_without_and_with_a_mask():
    x = torch.tensor([[1.0, 2.0], [3.0, 10.0]])
    mask = torch.tensor([[1, 1], [1, 0]])

    assert valid_mean(x).item() == 4.0
    assert valid_mean(x, mask).item() == 2.0
    torch.testing.assert_close(valid_mean(x, mask, dim=1), torch.tensor([1.5, 3.0]))
    torch.testing.assert_close(valid_mean(x, dim=0), torch.tensor([2.0, 6.0]))


def test_valid_mean_is_zero_when_nothing_is_valid_and_exact_for_fractional_weights():
    x = torch.tensor([2.0, 4.0])

    assert valid_mean(x, torch.zeros(2)).item() == 0.0
    assert valid_mean(x, torch.tensor([0.25, 0.0])).item() == 2.0


def test_select_at_indexes_picks_one_entry_per_position_keeping_trailing_dims():
    q = torch.arange(12.0).view(2, 2, 3)  # [T, B, A]
    actions = torch.tensor([[0, 2], [1, 1]])

    torch.testing.assert_close(select_at_indexes(actions, q), torch.tensor([[0.0, 5.0], [7.0, 10.0]]))
    dist = torch.arange(24.0).view(2, 3, 4)  # [B, A, atoms]
    torch.testing.assert_close(select_at_indexes(torch.tensor([2, 0]), dist), torch.stack([dist[0, 2], dist[1, 0]]))
    with pytest.raises(ValueError, match="must match the leading dims"):
        select_at_indexes(torch.tensor([0, 1, 2]), q)


def test_onehot_round_trip():
    indexes = torch.tensor([[0, 3], [2, 1]])

    onehot = to_onehot(indexes, 4, dtype=torch.float32)

    assert onehot.shape == (2, 2, 4) and onehot.sum().item() == 4
    torch.testing.assert_close(from_onehot(onehot), indexes)
    assert from_onehot(onehot, dtype=torch.int32).dtype == torch.int32
    torch.testing.assert_close(from_onehot(onehot.transpose(1, 2), dim=1), indexes)


def test_onehot_gives_a_fresh_tensor_of_the_asked_dtype_and_refuses_indexes_out_of_range():
    first = to_onehot(torch.tensor([1, 0]), 3, dtype=torch.float32)
    first[0, 1] = 7.0  # the cached identity matrix must not change
    again = to_onehot(torch.tensor([1, 0], dtype=torch.int32), 3, dtype=torch.float32)
    assert again.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    assert to_onehot(torch.tensor(2), 3).tolist() == [0, 0, 1] and to_onehot(torch.tensor(2), 3).dtype == torch.long
    assert to_onehot(torch.tensor([[1]]), 2, dtype=torch.bool).tolist() == [[[False, True]]]
    for bad in (3, -1):
        with pytest.raises(IndexError):
            to_onehot(torch.tensor([bad]), 3)


def test_onehot_of_many_classes_scatters_instead_of_caching_an_identity():
    from rlrun.utils import tensor

    big = tensor._EYE_MAX + 1
    onehot = to_onehot(torch.tensor([0, big - 1]), big, dtype=torch.float32)
    assert onehot.shape == (2, big) and onehot.sum().item() == 2 and onehot[1, big - 1].item() == 1.0
    assert all(key[0] <= tensor._EYE_MAX for key in tensor._EYES)
