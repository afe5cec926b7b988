import torch

from rlrun.models.dqn.dueling import DuelingHeadModel


def test_dueling_q_is_value_plus_centred_advantage():
    head = DuelingHeadModel(8, [16], output_size=4)
    x = torch.randn(5, 8)
    advantage = head.advantage(x)
    expected = head.value(x) + advantage - advantage.mean(-1, keepdim=True)
    torch.testing.assert_close(head(x), expected)
    # Averaged over actions, Q equals the value stream.
    torch.testing.assert_close(head(x).mean(-1), head.value(x).squeeze(-1))


def test_dueling_head_scales_the_gradient_into_its_input():
    head = DuelingHeadModel(8, [16], output_size=4, grad_scale=0.5)
    x = torch.randn(5, 8, requires_grad=True)
    head(x).sum().backward()
    scaled = x.grad.clone()
    unscaled_head = DuelingHeadModel(8, [16], output_size=4, grad_scale=1.0)
    unscaled_head.load_state_dict(head.state_dict())
    x.grad = None
    unscaled_head(x).sum().backward()
    torch.testing.assert_close(scaled, 0.5 * x.grad)
