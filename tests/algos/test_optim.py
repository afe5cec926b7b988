"""The optimisers and clipping every algorithm uses: gradients only where asked, torch's clipping and
its logged norm, and torch's multi-tensor kernels by default with the same updates."""

from __future__ import annotations

import pytest
import torch

from rlrun.algos import qpg
from rlrun.algos.optim import (
    clip_grad_norm,
    clipped_step,
    fast_optim_kwargs,
    fused_adam_kwargs,
    make_optimizer,
    optimizer_parameters,
)


def two_nets():
    torch.manual_seed(0)
    return torch.nn.Linear(3, 4), torch.nn.Linear(4, 1)


def test_only_the_stepped_parameters_get_gradients():
    actor, critic = two_nets()
    loss = critic(torch.tanh(actor(torch.randn(5, 3)))).mean()  # a policy loss through a critic
    clipped_step(torch.optim.SGD(actor.parameters(), lr=0.1), loss, actor.parameters(), 1e9)
    assert all(p.grad is not None for p in actor.parameters())
    assert all(p.grad is None for p in critic.parameters())


@pytest.mark.parametrize("max_norm", [1e9, 0.05])
def test_norm_and_clipping_match_torch_clip_grad_norm(max_norm):
    results = []
    for ours in (True, False):
        actor, critic = two_nets()
        optimizer = torch.optim.SGD([*actor.parameters(), *critic.parameters()], lr=1.0)
        loss = critic(actor(torch.ones(5, 3))).pow(2).mean()
        params = [*actor.parameters(), *critic.parameters()]
        if ours:
            norm = clipped_step(optimizer, loss, params, max_norm)
        else:
            loss.backward()
            norm = float(torch.nn.utils.clip_grad_norm_(params, max_norm))
            optimizer.step()
        results.append((norm, [p.detach().clone() for p in params]))
    (ours_norm, ours_params), (torch_norm, torch_params) = results
    assert ours_norm == pytest.approx(torch_norm, rel=1e-6) and ours_norm > 0.05
    for a, b in zip(ours_params, torch_params):
        torch.testing.assert_close(a, b)


def test_adam_gets_the_fused_kernel_unless_an_implementation_is_chosen():
    assert fused_adam_kwargs(torch.optim.Adam, {}) == {"fused": True}
    assert fused_adam_kwargs(torch.optim.AdamW, {"eps": 1e-4}) == {"eps": 1e-4, "fused": True}
    assert fused_adam_kwargs(torch.optim.Adam, {"foreach": True}) == {"foreach": True}
    assert fused_adam_kwargs(torch.optim.Adam, {"fused": False}) == {"fused": False}
    assert fused_adam_kwargs(torch.optim.RMSprop, {}) == {}


def test_fused_adam_takes_the_same_steps_as_the_plain_one():
    nets = [torch.nn.Linear(3, 2) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    optimizers = [torch.optim.Adam(nets[0].parameters(), lr=1e-2), torch.optim.Adam(nets[1].parameters(), lr=1e-2, **fused_adam_kwargs(torch.optim.Adam, {}))]  # fmt: skip
    for step in range(5):
        x = torch.full((4, 3), float(step))
        for net, optimizer in zip(nets, optimizers):
            clipped_step(optimizer, net(x).pow(2).mean(), net.parameters(), 1e9)
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        torch.testing.assert_close(a, b)


def test_the_actor_critic_module_still_exports_the_step_helpers():
    from rlrun.algos.qpg.base import clipped_step as qpg_clipped_step
    from rlrun.algos.qpg.base import fused_adam_kwargs as qpg_fused

    assert qpg_clipped_step is clipped_step and qpg_fused is fused_adam_kwargs and qpg.base


@pytest.mark.parametrize("max_norm", [1e9, 0.05])
def test_clip_grad_norm_matches_torch(max_norm):
    nets = [torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    for net in nets:
        net(torch.randn(5, 3, generator=torch.Generator().manual_seed(1))).pow(2).sum().backward()
    ours = clip_grad_norm(nets[0].parameters(), max_norm)
    theirs = float(torch.nn.utils.clip_grad_norm_(nets[1].parameters(), max_norm))
    assert isinstance(ours, float) and ours == pytest.approx(theirs, rel=1e-6) and ours > 0.05
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        torch.testing.assert_close(a.grad, b.grad)
    assert clip_grad_norm([torch.nn.Parameter(torch.ones(2))], 1.0) == 0.0  # no gradients yet


def test_fast_kwargs_choose_fused_adam_and_foreach_for_the_rest_unless_the_user_chose():
    assert fast_optim_kwargs(torch.optim.Adam, {"eps": 1e-5}) == {"eps": 1e-5, "fused": True}
    assert fast_optim_kwargs(torch.optim.RMSprop, {"alpha": 0.99}) == {"alpha": 0.99, "foreach": True}
    assert fast_optim_kwargs(torch.optim.SGD, {}) == {"foreach": True}
    assert fast_optim_kwargs(torch.optim.RMSprop, {"foreach": False}) == {"foreach": False}
    assert fast_optim_kwargs(torch.optim.Adam, {"fused": False}) == {"fused": False}
    assert fast_optim_kwargs(torch.optim.Adam, {}, device_type="mps") == {}

    class MyOptimizer(torch.optim.SGD):  # not torch's own: its keywords may mean something else
        pass

    assert fast_optim_kwargs(MyOptimizer, {}) == {}


@pytest.mark.parametrize(
    "OptimCls, kwargs",
    [
        (torch.optim.Adam, {"eps": 1e-5}),
        (torch.optim.RMSprop, {"alpha": 0.99, "eps": 1e-5}),
        (torch.optim.SGD, {"momentum": 0.9}),
    ],
)
def test_the_fast_optimisers_take_the_same_steps_as_torchs_defaults(OptimCls, kwargs):
    nets = [torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2)) for _ in range(2)]
    nets[1].load_state_dict(nets[0].state_dict())
    fast = make_optimizer(OptimCls, nets[0].parameters(), 1e-2, kwargs)
    plain = OptimCls(nets[1].parameters(), lr=1e-2, **kwargs)
    assert fast.defaults.get("fused") or fast.defaults.get("foreach")
    for step in range(20):
        x = torch.randn(8, 4, generator=torch.Generator().manual_seed(step))
        for net, optimizer in zip(nets, (fast, plain)):
            clipped_step(optimizer, net(x).pow(2).mean(), net.parameters(), 0.5)
    for a, b in zip(nets[0].parameters(), nets[1].parameters()):
        torch.testing.assert_close(a, b)


def test_a_fast_optimiser_resumes_from_a_plain_ones_state():
    net = torch.nn.Linear(3, 2)
    plain = torch.optim.Adam(net.parameters(), lr=1e-2)
    clipped_step(plain, net(torch.ones(4, 3)).pow(2).mean(), net.parameters(), 1e9)
    fast = make_optimizer(torch.optim.Adam, net.parameters(), 1e-2, {})
    fast.load_state_dict(plain.state_dict())
    clipped_step(fast, net(torch.ones(4, 3)).pow(2).mean(), net.parameters(), 1e9)
    assert int(fast.state[net.weight]["step"]) == 2


def tf_rmsprop_reference(steps, lr, alpha, eps, momentum, grads_per_step, theta):
    """TensorFlow 1's RMSProp update written out per element in float64: ms starts at 1, eps inside the root."""
    ms, mom = [1.0] * len(theta), [0.0] * len(theta)
    for g in grads_per_step[:steps]:
        for i, gi in enumerate(g):
            ms[i] = alpha * ms[i] + (1 - alpha) * gi * gi
            mom[i] = momentum * mom[i] + lr * gi / (ms[i] + eps) ** 0.5
            theta[i] -= mom[i]
    return theta


@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_rmsprop_tf_follows_tensorflows_update(momentum):
    from rlrun.algos.optim import RMSpropTF

    grads = [[0.5, -1e-4, 2.0], [0.1, -1e-4, -1.0], [-0.3, 0.0, 0.5]]
    theta = torch.nn.Parameter(torch.tensor([1.0, 1.0, 1.0], dtype=torch.float64))
    optimizer = RMSpropTF([theta], lr=7e-4, alpha=0.99, eps=1e-5, momentum=momentum)
    for g in grads:
        theta.grad = torch.tensor(g, dtype=torch.float64)
        optimizer.step()
    expected = tf_rmsprop_reference(3, 7e-4, 0.99, 1e-5, momentum, grads, [1.0, 1.0, 1.0])
    torch.testing.assert_close(theta.detach(), torch.tensor(expected, dtype=torch.float64))


def test_rmsprop_tf_takes_small_first_steps_where_torchs_rmsprop_takes_ten_times_its_rate():
    from rlrun.algos.optim import RMSpropTF

    moved = []
    for OptimCls in (RMSpropTF, torch.optim.RMSprop):
        p = torch.nn.Parameter(torch.zeros(2))
        optimizer = OptimCls([p], lr=7e-4, alpha=0.99, eps=1e-5)
        p.grad = torch.tensor([1e-1, 1e-2])  # a gradient and one ten times smaller
        optimizer.step()
        moved.append(p.detach().abs())
    tf_like, torchs = moved
    torch.testing.assert_close(tf_like, 7e-4 * torch.tensor([1e-1, 1e-2]), rtol=0.01, atol=0)  # lr * g / sqrt(~1)
    torch.testing.assert_close(torchs, torch.full((2,), 7e-3), rtol=0.02, atol=0)  # lr / sqrt(1 - alpha), both


def test_rmsprop_tf_checks_its_arguments_resumes_from_its_state_and_is_chosen_by_name():
    from rlrun.algos.optim import RMSpropTF
    from rlrun.experiments.builder import optimizer_class

    with pytest.raises(ValueError, match="alpha must be in"):
        RMSpropTF([torch.nn.Parameter(torch.ones(1))], alpha=1.0)
    net = torch.nn.Linear(3, 2)
    first = RMSpropTF(net.parameters(), lr=1e-2, weight_decay=0.1)
    clipped_step(first, net(torch.ones(4, 3)).pow(2).mean(), net.parameters(), 1e9)
    second = RMSpropTF(net.parameters(), lr=1e-2, weight_decay=0.1)
    second.load_state_dict(first.state_dict())
    torch.testing.assert_close(second.state[net.weight]["square_avg"], first.state[net.weight]["square_avg"])
    assert optimizer_class("RMSpropTF") is RMSpropTF and optimizer_class("rlrun.algos.optim.RMSpropTF") is RMSpropTF
    assert fast_optim_kwargs(RMSpropTF, {"eps": 1e-5}) == {"eps": 1e-5}  # not torch's: left as given


def test_optimizer_parameters_are_the_stepped_tensors_in_order_across_groups():
    """The algorithms clip the gradients of exactly what their optimiser steps, without walking the model."""
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    first, second = list(model[0].parameters()), list(model[2].parameters())
    optimizer = torch.optim.Adam([{"params": first}, {"params": second, "lr": 1e-4}])
    stepped = optimizer_parameters(optimizer)
    assert len(stepped) == 4 and all(a is b for a, b in zip(stepped, first + second))
    assert all(
        a is b
        for a, b in zip(
            optimizer_parameters(make_optimizer(torch.optim.RMSprop, model.parameters(), 1e-3, {})), model.parameters()
        )
    )
