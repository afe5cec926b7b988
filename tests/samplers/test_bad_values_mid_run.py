"""A bad env value after start-up is one named error: env, env rank, field and step, under both samplers.

Before, a float observation for an integer space was truncated in the batch (2.7 stored as 2), a shape
change ended in numpy's bare broadcast error, and a NaN reached the agent, to be reported much later as
a diverging policy. The envs in ``bad_value_envs`` pass start-up validation and break at step 13 of env
rank 1 (serial, B=2) or 3 (CPU, B=4 over 2 workers): with T=10 that is itr 1, t 2.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))  # spawned workers import bad_value_envs by name

from bad_value_envs import BadCompositeEnv, BadValueEnv, UniformPolicyModel  # noqa: E402

from rlrun.agents.pg.categorical import CategoricalPgAgent  # noqa: E402
from rlrun.envs.validation import EnvValidationError  # noqa: E402
from rlrun.samplers.collectors import WaitResetCollector  # noqa: E402
from rlrun.samplers.parallel.cpu.sampler import CpuSampler  # noqa: E402
from rlrun.samplers.serial.sampler import SerialSampler  # noqa: E402
from rlrun.samplers.step_checks import check_finite_batch, store_observation  # noqa: E402
from rlrun.utils.collections import namedarraytuple, namedtuple  # noqa: E402

SEED = 5
T = 10
AT_STEP_13 = "at itr 1, t 2"


class _Env:
    """Stands in for an env in the unit tests: only its class name is read."""


ENV = _Env()
Obs = namedtuple("Obs", ["position", "count"])
ObsBuffer = namedarraytuple("Obs", ["position", "count"])


# ------------------------------------------------------------------------------ store_observation


def store(dest, value, b=1, env_rank=7):
    store_observation(dest, b, value, env=ENV, env_rank=env_rank, where="step() at itr 3, t 7")


@pytest.mark.timeout(60)
def test_store_observation_writes_a_row_of_the_same_shape_and_dtype_exactly():
    dest = np.zeros((3, 4), dtype=np.float32)
    value = np.array([1.5, -2.0, 3.25, 1e-7], dtype=np.float32)
    store(dest, value)
    np.testing.assert_array_equal(dest[1], value)
    assert not dest[[0, 2]].any()


@pytest.mark.timeout(60)
def test_store_observation_refuses_a_float_into_an_integer_row_naming_env_rank_field_and_step():
    dest = np.zeros((3, 4), dtype=np.int64)
    with pytest.raises(EnvValidationError) as info:
        store(dest, np.full(4, 2.7))
    message = str(info.value)
    assert message.startswith("_Env (env rank 7): observation from step() at itr 3, t 7 has dtype float64")
    assert "2.7 would be stored as 2" in message and "FloatBox" in message
    assert (info.value.env_rank, info.value.field, info.value.where) == (7, "observation", "step() at itr 3, t 7")
    assert not dest.any()  # nothing was written


@pytest.mark.timeout(60)
@pytest.mark.parametrize("value", [np.zeros(5), np.zeros(1), np.zeros(()), 0.5, np.zeros((2, 2))])
def test_store_observation_refuses_any_other_shape_even_one_numpy_would_broadcast(value):
    dest = np.zeros((3, 4))
    with pytest.raises(
        EnvValidationError, match=r"observation from step\(\) at itr 3, t 7 has shape .* stores shape \(4,\)"
    ):
        store(dest, value)


@pytest.mark.timeout(60)
def test_store_observation_accepts_other_integer_dtypes_whose_values_fit_and_refuses_those_that_would_wrap():
    dest = np.zeros((3, 4), dtype=np.uint8)
    store(dest, np.array([0, 1, 254, 255], dtype=np.int64))  # accepted at start-up within the bounds, too
    np.testing.assert_array_equal(dest[1], [0, 1, 254, 255])
    for bad in ([0, 1, 2, 256], [-1, 0, 0, 0]):
        with pytest.raises(EnvValidationError, match=r"dtype int64 with values in .* outside the range \[0, 255\]"):
            store(dest, np.array(bad, dtype=np.int64))


@pytest.mark.timeout(60)
def test_store_observation_converts_python_numbers_and_float64_into_float32_as_before():
    scalars = np.zeros(3, dtype=np.int64)
    store(scalars, 4)
    floats = np.zeros((3, 2), dtype=np.float32)
    store(floats, np.array([0.1, 2.0]))
    store(floats, [0.5, 1.5], b=2)
    assert scalars[1] == 4
    np.testing.assert_array_equal(floats[1:], np.array([[0.1, 2.0], [0.5, 1.5]], dtype=np.float32))


@pytest.mark.timeout(60)
def test_store_observation_names_the_field_of_a_namedarraytuple_observation():
    dest = ObsBuffer(np.zeros((3, 2), dtype=np.float32), np.zeros(3, dtype=np.int64))
    store(dest, Obs(np.ones(2, dtype=np.float32), 5))
    assert dest.count[1] == 5 and dest.position[1].tolist() == [1.0, 1.0]
    with pytest.raises(
        EnvValidationError, match=r"observation\.count from step\(\) at itr 3, t 7 has dtype float64"
    ) as info:
        store(dest, Obs(np.ones(2, dtype=np.float32), 5.5))
    assert info.value.field == "observation.count"
    with pytest.raises(EnvValidationError, match=r"observation\.position from .* has shape \(3,\)"):
        store(dest, Obs(np.ones(3, dtype=np.float32), 5))
    with pytest.raises(EnvValidationError, match=r"observation from .* is a ndarray, but the batch stores a Obs"):
        store(dest, np.zeros(2))


@pytest.mark.timeout(60)
def test_env_validation_error_pickles_with_its_env_rank_field_and_step():
    error = EnvValidationError("message", env_rank=3, field="reward", where="step() at itr 1, t 2")
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.env_rank, copy.field, copy.where) == ("message", 3, "reward", "step() at itr 1, t 2")


# ----------------------------------------------------------------------------- check_finite_batch


def check(observation, reward, **kwargs):
    check_finite_batch(
        observation, reward, envs=[ENV] * 4, env_ranks=[10, 11, 12, 13], where="step() at itr 2, t 4", **kwargs
    )


@pytest.mark.timeout(60)
def test_check_finite_batch_names_the_first_env_with_a_nan_or_inf_observation():
    observation = np.zeros((4, 3), dtype=np.float32)
    observation[2, 1] = np.inf
    observation[3, :] = np.nan
    with pytest.raises(EnvValidationError) as info:
        check(observation, np.zeros(4, dtype=np.float32))
    assert str(info.value).startswith(
        "_Env (env rank 12): observation from step() at itr 2, t 4 holds NaN or infinite values (1 of 3)"
    )
    assert (info.value.env_rank, info.value.field) == (12, "observation")


@pytest.mark.timeout(60)
def test_check_finite_batch_names_a_nan_or_inf_reward():
    for bad in (np.nan, -np.inf):
        reward = np.zeros(4, dtype=np.float32)
        reward[1] = bad
        with pytest.raises(EnvValidationError, match=rf"env rank 11\): reward from step\(\) at itr 2, t 4 is {bad!r}"):
            check(None, reward)


@pytest.mark.timeout(60)
def test_check_finite_batch_names_the_field_of_a_namedarraytuple_and_skips_integer_fields():
    observation = ObsBuffer(np.zeros((4, 2), dtype=np.float32), np.zeros(4, dtype=np.int64))
    check(observation, None)
    observation.position[0, 0] = np.nan
    with pytest.raises(EnvValidationError, match=r"env rank 10\): observation\.position from"):
        check(observation, None)


@pytest.mark.timeout(60)
def test_check_finite_batch_says_reset_for_an_env_whose_observation_came_from_reset_after_done():
    observation = np.zeros((4, 2))
    observation[3, 0] = np.nan
    with pytest.raises(
        EnvValidationError, match=r"rank 13\): observation from reset\(\) after the done step\(\) at itr 2"
    ):
        check(observation, None, reset_mask=np.array([False, False, False, True]))


@pytest.mark.timeout(60)
def test_check_finite_batch_accepts_large_finite_values_whose_sum_of_squares_overflows():
    observation = np.full((4, 3), 3e30, dtype=np.float32)
    check(observation, np.full(4, -3e38, dtype=np.float32))
    check(np.zeros((4, 84, 84), dtype=np.uint8), None)


# ---------------------------------------------------------------------------- SerialSampler


def new_agent(EnvCls) -> CategoricalPgAgent:
    torch.manual_seed(SEED)
    return CategoricalPgAgent(ModelCls=UniformPolicyModel) if EnvCls is BadCompositeEnv else CategoricalPgAgent()


def serial(EnvCls=BadValueEnv, B=2, CollectorCls=None, **env_kwargs) -> SerialSampler:
    kwargs = dict(max_decorrelation_steps=env_kwargs.pop("decorrelation", 0))
    if CollectorCls is not None:
        kwargs["CollectorCls"] = CollectorCls
    for key in ("eval_n_envs", "eval_max_steps"):
        if key in env_kwargs:
            kwargs[key] = env_kwargs.pop(key)
    sampler = SerialSampler(EnvCls=EnvCls, env_kwargs=env_kwargs, batch_T=T, batch_B=B, **kwargs)
    sampler.initialize(new_agent(EnvCls), seed=SEED)
    return sampler


def run_batches(sampler, n_itr: int = 3) -> None:
    try:
        for itr in range(n_itr):
            sampler.obtain_samples(itr)
    finally:
        sampler.shutdown()


CASES = [
    (BadValueEnv, "float_obs", "observation", "has dtype float64, which the batch's integer dtype int64 cannot"),
    (BadValueEnv, "shape", "observation", "has shape (5,), but the batch stores shape (4,)"),
    (BadValueEnv, "nan_obs", "observation", "holds NaN or infinite values (1 of 4)"),
    (BadValueEnv, "inf_obs", "observation", "holds NaN or infinite values (1 of 4)"),
    (BadValueEnv, "nan_reward", "reward", "is nan, not a finite number"),
    (BadCompositeEnv, "float_obs", "observation.count", "has dtype float64"),
    (BadCompositeEnv, "nan_obs", "observation.position", "holds NaN or infinite values (1 of 2)"),
]
# One of each kind of failure; each CpuSampler start costs about half a second.
CPU_CASES = [CASES[i] for i in (0, 1, 2, 4, 5)]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("EnvCls, bad, field, problem", CASES)
def test_serial_sampler_names_env_field_and_step_of_a_bad_value_at_step_13(EnvCls, bad, field, problem):
    sampler = serial(EnvCls, bad=bad, bad_seed=SEED + 1)
    with pytest.raises(EnvValidationError) as info:
        run_batches(sampler)
    assert str(info.value).startswith(f"{EnvCls.__name__} (env rank 1): {field} from step() {AT_STEP_13} {problem}")
    assert (info.value.env_rank, info.value.field) == (1, field)


@pytest.mark.timeout(60)
def test_nan_from_the_reset_after_a_done_step_names_that_reset():
    sampler = serial(bad="nan_reset", bad_seed=SEED + 1)
    with pytest.raises(
        EnvValidationError,
        match=r"^BadValueEnv \(env rank 1\): observation from reset\(\) after the done step\(\) at itr 1, t 2 holds NaN",
    ):
        run_batches(sampler)


@pytest.mark.timeout(60)
def test_nan_from_a_wait_reset_collectors_reset_names_the_batch_start():
    sampler = serial(bad="nan_reset", bad_seed=SEED + 1, CollectorCls=WaitResetCollector)
    with pytest.raises(
        EnvValidationError,
        match=r"^BadValueEnv \(env rank 1\): observation from reset\(\) before the batch after itr 1 holds NaN",
    ):
        run_batches(sampler)


@pytest.mark.timeout(60)
def test_nan_reward_during_decorrelation_is_named_at_initialize():
    with pytest.raises(
        EnvValidationError, match=r"^BadValueEnv \(env rank 0\): reward from decorrelation step\(\) 1 of \d+ is nan"
    ):
        serial(bad="nan_reward", bad_seed=SEED, bad_step=1, decorrelation=50)


@pytest.mark.timeout(60)
def test_nan_in_an_evaluation_env_is_named_with_its_rank_and_step():
    # Eval env ranks follow the B=2 training envs: the first is rank 2.
    sampler = serial(bad="nan_obs", bad_seed=SEED + 2, eval_n_envs=1, eval_max_steps=100)
    try:
        with pytest.raises(
            EnvValidationError,
            match=r"^BadValueEnv \(env rank 2\): observation from evaluation step\(\) at itr 4, t 12 holds NaN",
        ):
            sampler.evaluate_agent(4)
    finally:
        sampler.shutdown()


# ----------------------------------------------------------------------------- CpuSampler


@pytest.mark.timeout(60)
@pytest.mark.parametrize("EnvCls, bad, field, problem", CPU_CASES)
def test_cpu_sampler_reports_the_workers_named_error(EnvCls, bad, field, problem):
    sampler = CpuSampler(
        EnvCls=EnvCls,
        env_kwargs=dict(bad=bad, bad_seed=SEED + 3),
        batch_T=T,
        batch_B=4,
        max_decorrelation_steps=0,
    )
    sampler.initialize(new_agent(EnvCls), affinity=dict(workers_cpus=[[0]] * 2, set_affinity=False), seed=SEED)
    # SamplerWorkerError, matched by name so that this test does not depend on the parallel package's layout.
    with pytest.raises(RuntimeError) as info:
        run_batches(sampler)
    assert type(info.value).__name__ == "SamplerWorkerError"
    message = str(info.value)
    assert "EnvValidationError: " in message
    assert f"{EnvCls.__name__} (env rank 3): {field} from step() {AT_STEP_13} {problem}" in message, message
