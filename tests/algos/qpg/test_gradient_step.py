"""The optimiser step the three algorithms share: gradients only where asked, rlpyt's clipping and its
logged norm, and Adam's fused kernel by default."""

from __future__ import annotations

import pytest
import torch

from rlrun.algos.qpg.base import clipped_step, fused_adam_kwargs


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
