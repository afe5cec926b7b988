import torch

from rlrun.models.running_mean_std import RunningMeanStdModel


def test_running_statistics_equal_those_of_all_batches_together():
    torch.manual_seed(0)
    rms = RunningMeanStdModel((3,))
    batches = [torch.randn(5, 7, 3) * 2 + 1, torch.randn(11, 3) - 4, torch.randn(3)]
    for b in batches:
        rms.update(b)
    everything = torch.cat([b.reshape(-1, 3) for b in batches])
    torch.testing.assert_close(rms.mean, everything.mean(0))
    torch.testing.assert_close(rms.var, everything.var(0, unbiased=False))
    assert int(rms.count) == len(everything)


def test_statistics_are_buffers_saved_in_the_state_dict():
    rms = RunningMeanStdModel((2, 2))
    rms.update(torch.ones(4, 2, 2))
    assert set(rms.state_dict()) == {"mean", "var", "count"}
    assert list(rms.parameters()) == []
