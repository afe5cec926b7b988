"""Returns and advantages against numbers worked out by hand in each test."""

import numpy as np
import pytest
import torch

from rlrun.utils.returns import (
    discount_return,
    discount_return_n_step,
    discount_return_n_step_tl,
    discount_return_tl,
    generalized_advantage_estimation,
    generalized_advantage_estimation_tl,
    valid_from_done,
)

BACKENDS = ["torch", "numpy"]


def arr(backend, x, dtype=np.float32):
    a = np.array(x, dtype=dtype)
    return torch.from_numpy(a) if backend == "torch" else a


def to_np(x):
    return x.numpy() if isinstance(x, torch.Tensor) else np.asarray(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_discount_return_restarts_at_done_and_bootstraps_at_the_end(backend):
    # discount 0.5. Column 0 ends at t=1: G2 = 5 + .5*10 = 10, G1 = 3, G0 = 1 + .5*3 = 2.5.
    # Column 1 never ends: G2 = 6 + .5*20 = 16, G1 = 4 + .5*16 = 12, G0 = 2 + .5*12 = 8.
    reward = arr(backend, [[1, 2], [3, 4], [5, 6]])
    done = arr(backend, [[0, 0], [1, 0], [0, 0]], bool)
    bootstrap_value = arr(backend, [[10, 20]])  # [1, B] as samplers give it
    return_ = discount_return(reward, done, bootstrap_value, 0.5)
    np.testing.assert_allclose(to_np(return_), [[2.5, 8], [3, 12], [10, 16]])
    assert type(return_) is type(reward)


@pytest.mark.parametrize("backend", BACKENDS)
def test_discount_return_ignores_bootstrap_after_final_done_and_fills_dest(backend):
    # G1 = 1 (done, bootstrap 100 unused), G0 = 1 + .5*1 = 1.5.
    reward = arr(backend, [1, 1])
    dest = arr(backend, [0, 0])
    out = discount_return(reward, arr(backend, [0, 1], bool), 100.0, 0.5, return_dest=dest)
    assert out is dest
    np.testing.assert_allclose(to_np(dest), [1.5, 1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gae_matches_hand_computed_reference(backend):
    # discount .5, lambda .5, so the trace decays by .25 per step. Column 0, no done:
    #   delta2 = 3 + .5*2 - 1.5 = 2.5, delta1 = 2 + .5*1.5 - 1 = 1.75, delta0 = 1 + .5*1 - .5 = 1
    #   A2 = 2.5, A1 = 1.75 + .25*2.5 = 2.375, A0 = 1 + .25*2.375 = 1.59375
    # Column 1, done at t=1: delta1 = 2 - 1 = 1, A1 = 1, A0 = 1 + .25*1 = 1.25, A2 = 2.5.
    reward = arr(backend, [[1, 1], [2, 2], [3, 3]])
    value = arr(backend, [[0.5, 0.5], [1, 1], [1.5, 1.5]])
    done = arr(backend, [[0, 0], [0, 1], [0, 0]], bool)
    advantage, return_ = generalized_advantage_estimation(reward, value, done, arr(backend, [2, 2]), 0.5, 0.5)
    np.testing.assert_allclose(to_np(advantage), [[1.59375, 1.25], [2.375, 1], [2.5, 2.5]])
    np.testing.assert_allclose(to_np(return_), [[2.09375, 1.75], [3.375, 2], [4, 4]])


def test_gae_with_lambda_one_equals_discounted_return_minus_value():
    g = torch.Generator().manual_seed(0)
    reward, value = torch.rand(6, 3, generator=g), torch.rand(6, 3, generator=g)
    done = torch.rand(6, 3, generator=g) < 0.3
    bootstrap_value = torch.rand(3, generator=g)
    advantage, return_ = generalized_advantage_estimation(reward, value, done, bootstrap_value, 0.9, 1.0)
    expected = discount_return(reward, done, bootstrap_value, 0.9)
    torch.testing.assert_close(return_, expected)
    torch.testing.assert_close(advantage, expected - value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_discount_return_tl_bootstraps_from_value_at_a_timeout(backend):
    # Column 0, cut by a time limit at t=1: G2 = 1 + .5*7 = 4.5, G1 = 1 + .5*value[1] = 3.5,
    # G0 = 1 + .5*3.5 = 2.75. Column 1, same steps but a real terminal: G1 = 1, G0 = 1.5.
    reward = arr(backend, [[1, 1], [1, 1], [1, 1]])
    done = arr(backend, [[0, 0], [1, 1], [0, 0]], bool)
    timeout = arr(backend, [[0, 0], [1, 0], [0, 0]], bool)
    value = arr(backend, [[4, 4], [5, 5], [6, 6]])
    return_ = discount_return_tl(reward, done, arr(backend, [7, 7]), 0.5, timeout, value)
    np.testing.assert_allclose(to_np(return_), [[2.75, 1.5], [3.5, 1], [4.5, 4.5]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_discount_return_tl_timeout_on_last_step_ignores_bootstrap_value(backend):
    # The bootstrap value belongs to the next episode: G1 = 1 + .5*6 = 4, G0 = 1 + .5*4 = 3.
    reward = arr(backend, [1, 1])
    done = timeout = arr(backend, [0, 1], bool)
    return_ = discount_return_tl(reward, done, 100.0, 0.5, timeout, arr(backend, [4, 6]))
    np.testing.assert_allclose(to_np(return_), [3, 4])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gae_tl_bootstraps_at_timeout_and_stops_the_trace(backend):
    # Column 0 cut at t=1: delta1 = 2 + .5*value[1] - value[1] = 1.5, A1 = 1.5 (trace stops),
    #   A2 = 2.5, A0 = (1 + .5*1 - .5) + .25*1.5 = 1.375; returns A + V = 1.875, 2.5, 4.
    # Column 1 terminal at t=1: A1 = 2 - 1 = 1, A0 = 1 + .25*1 = 1.25.
    reward = arr(backend, [[1, 1], [2, 2], [3, 3]])
    value = arr(backend, [[0.5, 0.5], [1, 1], [1.5, 1.5]])
    done = arr(backend, [[0, 0], [1, 1], [0, 0]], bool)
    timeout = arr(backend, [[0, 0], [1, 0], [0, 0]], bool)
    advantage, return_ = generalized_advantage_estimation_tl(
        reward, value, done, arr(backend, [2, 2]), 0.5, 0.5, timeout
    )
    np.testing.assert_allclose(to_np(advantage), [[1.375, 1.25], [1.5, 1], [2.5, 2.5]])
    np.testing.assert_allclose(to_np(return_), [[1.875, 1.75], [2.5, 2], [4, 4]])


def test_tl_functions_refuse_a_timeout_without_done():
    reward = torch.ones(2)
    with pytest.raises(ValueError, match="timeout is True at a step where done is False"):
        discount_return_tl(reward, torch.tensor([False, False]), 0.0, 0.9, torch.tensor([True, False]), reward)


def test_bootstrap_value_of_wrong_size_is_refused():
    with pytest.raises(ValueError, match="bootstrap_value has shape"):
        discount_return(torch.ones(3, 2), torch.zeros(3, 2, dtype=torch.bool), torch.ones(3), 0.9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_n_step_return_stops_at_done_and_drops_incomplete_windows(backend):
    # n=2, discount .5, done at t=1: R0 = 1 + .5*2 = 2 (done_n, since done at t+1),
    # R1 = 2 (done at t), R2 = 3 + .5*4 = 5. The window of t=3 does not fit.
    reward = arr(backend, [1, 2, 3, 4])
    done = arr(backend, [0, 1, 0, 0], bool)
    return_, done_n = discount_return_n_step(reward, done, n_step=2, discount=0.5)
    np.testing.assert_allclose(to_np(return_), [2, 2, 5])
    np.testing.assert_array_equal(to_np(done_n), [True, True, False])
    assert to_np(done_n).dtype == np.bool_


@pytest.mark.parametrize("backend", BACKENDS)
def test_n_step_return_truncated_keeps_short_windows_at_the_end(backend):
    # n=3, discount .5, no done: R0 = R1 = 1 + .5 + .25 = 1.75, truncated R2 = 1.5, R3 = 1.
    reward = arr(backend, [1, 1, 1, 1])
    done = arr(backend, [0, 0, 0, 0], bool)
    return_dest, done_n_dest = arr(backend, [0, 0, 0, 0]), arr(backend, [1, 1, 1, 1], bool)
    return_, done_n = discount_return_n_step(
        reward, done, 3, 0.5, return_dest=return_dest, done_n_dest=done_n_dest, do_truncated=True
    )
    assert return_ is return_dest and done_n is done_n_dest
    np.testing.assert_allclose(to_np(return_dest), [1.75, 1.75, 1.5, 1])
    np.testing.assert_array_equal(to_np(done_n_dest), [False] * 4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_n_step_tl_tells_timeout_cuts_from_terminals(backend):
    # n=3, discount .5, episode ends at t=1; column 0 by time limit, column 1 terminal, column 2 never.
    # Column 0: window 0 stops before the cut step (R0 = 1 over 1 step, bootstrapping from s_1); window 1
    # starts at the cut (R1 = 2 over 1 step). Column 1: R0 = 1 + .5*2 = 2 over 2 steps, R1 = 2 over 1.
    # Column 2: R0 = 1 + 1 + .75 = 2.75.
    reward = arr(backend, [[1, 1, 1], [2, 2, 2], [3, 3, 3], [4, 4, 4]])
    done = arr(backend, [[0, 0, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]], bool)
    timeout = arr(backend, [[0, 0, 0], [1, 0, 0], [0, 0, 0], [0, 0, 0]], bool)
    return_, done_n, timeout_n, steps_n = discount_return_n_step_tl(reward, done, timeout, 3, 0.5)
    np.testing.assert_allclose(to_np(return_), [[1, 2, 2.75], [2, 2, 2 + 1.5 + 1]])
    np.testing.assert_array_equal(to_np(done_n), [[False, True, False], [False, True, False]])
    np.testing.assert_array_equal(to_np(timeout_n), [[True, False, False], [True, False, False]])
    np.testing.assert_array_equal(to_np(steps_n), [[1, 2, 3], [1, 1, 3]])


def test_n_step_without_a_complete_window_is_refused():
    with pytest.raises(ValueError, match="no complete 3-step window"):
        discount_return_n_step(torch.ones(2), torch.zeros(2, dtype=torch.bool), 3, 0.9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_valid_from_done_is_one_through_first_done_then_zero(backend):
    done = arr(backend, [[0, 0], [1, 0], [0, 1], [1, 0]], bool)
    valid = valid_from_done(done)
    np.testing.assert_array_equal(to_np(valid), [[1, 1], [1, 1], [0, 1], [0, 0]])
    assert to_np(valid).dtype == np.float32
