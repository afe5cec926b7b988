"""``ignores_prev_action``: agents skip one-hot encoding for the forwards marked so, and only for those."""

from __future__ import annotations

import pytest
import torch

from rlrun.agents.dqn.dqn_agent import DqnAgent
from rlrun.agents.pg.categorical import CategoricalPgAgent
from rlrun.models.dqn.atari_catdqn_model import AtariCatDqnModel
from rlrun.models.dqn.atari_dqn_model import AtariDqnModel
from rlrun.models.dqn.catdqn_mlp import CatDqnMlpModel
from rlrun.models.dqn.mlp import DqnMlpModel
from rlrun.models.pg.atari_ff_model import AtariFfModel
from rlrun.models.pg.mlp import CategoricalPgMlpModel
from rlrun.models.pg.mlp_lstm_model import CategoricalPgLstmModel
from rlrun.models.utils import ignores_prev_action, reads_prev_action

B, N_ACTIONS = 3, 4
IMAGE = (4, 44, 44)
MARKED = [
    (CategoricalPgMlpModel, dict(observation_shape=(5,), action_size=N_ACTIONS), (5,)),
    (DqnMlpModel, dict(observation_shape=(5,), action_size=N_ACTIONS), (5,)),
    (CatDqnMlpModel, dict(observation_shape=(5,), action_size=N_ACTIONS, n_atoms=7), (5,)),
    (AtariFfModel, dict(image_shape=IMAGE, output_size=N_ACTIONS, fc_sizes=16), IMAGE),
    (AtariDqnModel, dict(image_shape=IMAGE, output_size=N_ACTIONS, fc_sizes=16), IMAGE),
    (AtariCatDqnModel, dict(image_shape=IMAGE, output_size=N_ACTIONS, n_atoms=7, fc_sizes=16), IMAGE),
]


def _outputs(model, observation, prev_action):
    out = model(observation, prev_action, torch.zeros(B))
    return out if isinstance(out, tuple) else (out,)


@pytest.mark.parametrize("ModelCls,kwargs,obs_shape", MARKED, ids=[m[0].__name__ for m in MARKED])
def test_marked_models_give_the_same_outputs_for_indexes_and_onehots(ModelCls, kwargs, obs_shape):
    """The mark is a promise about the forward: its outputs cannot depend on prev_action."""
    torch.manual_seed(0)
    model = ModelCls(**kwargs)
    assert not reads_prev_action(model)
    observation = torch.rand(B, *obs_shape)
    indexes = torch.tensor([0, 3, 1])
    onehot = torch.nn.functional.one_hot(indexes, N_ACTIONS).float()
    for a, b in zip(_outputs(model, observation, indexes), _outputs(model, observation, onehot)):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_recurrent_models_and_unmarked_models_read_prev_action():
    lstm = CategoricalPgLstmModel(observation_shape=(4,), action_size=2)
    assert reads_prev_action(lstm) and reads_prev_action(torch.nn.Linear(2, 2))


class _Recording(CategoricalPgMlpModel):
    """A user subclass that overrides forward: unmarked, so it gets one-hot actions again."""

    def forward(self, observation, prev_action=None, prev_reward=None):
        self.seen = prev_action
        return super().forward(observation, prev_action, prev_reward)


class _RecordingMarked(CategoricalPgMlpModel):
    @ignores_prev_action
    def forward(self, observation, prev_action=None, prev_reward=None):
        self.seen = prev_action
        return super().forward(observation, prev_action, prev_reward)


class _RecordingDqn(DqnMlpModel):
    def forward(self, observation, prev_action=None, prev_reward=None):
        self.seen = prev_action
        return super().forward(observation, prev_action, prev_reward)


@pytest.mark.parametrize("AgentCls", [CategoricalPgAgent, DqnAgent])
def test_agents_encode_prev_action_only_for_forwards_that_may_read_it(AgentCls, cartpole):
    observation, prev_action, prev_reward = torch.randn(B, 4), torch.tensor([1, 0, 1]), torch.zeros(B)
    unmarked = _Recording if AgentCls is CategoricalPgAgent else _RecordingDqn
    for ModelCls, encoded in ((unmarked, True), (_RecordingMarked, False)):
        if AgentCls is DqnAgent and ModelCls is _RecordingMarked:
            continue  # its outputs are not Q-values
        agent = AgentCls(ModelCls=ModelCls, model_kwargs=dict(observation_shape=(4,), action_size=2))
        agent.initialize(cartpole.spaces)
        agent.sample_mode(0)
        agent.step(observation, prev_action, prev_reward)
        if encoded:
            torch.testing.assert_close(agent.model.seen, torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]]))
        else:
            assert agent.model.seen is prev_action  # passed on as given: no encoding, no copy


def test_default_agents_step_the_same_with_and_without_the_encoding(cartpole, monkeypatch):
    """Skipping the encoding for the default models changes no action, probability or value."""
    import rlrun.agents.pg.categorical as categorical

    def run(encode: bool):
        if encode:
            monkeypatch.setattr(categorical, "reads_prev_action", lambda model: True)
        else:
            monkeypatch.undo()
        torch.manual_seed(1)
        agent = CategoricalPgAgent()
        agent.initialize(cartpole.spaces)
        agent.seed_env_streams(3, env_ranks=range(B))
        agent.sample_mode(0)
        steps = [agent.step(torch.randn(B, 4), torch.tensor([1, 0, 1]), torch.zeros(B)) for _ in range(5)]
        return torch.stack([s.action for s in steps]), torch.stack([s.agent_info.value for s in steps])

    encoded, plain = run(True), run(False)
    for a, b in zip(encoded, plain):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
