"""The sampler family is assembled from parts, not stacked: what each public class is made of, how deep
rlrun's own class chains go, and that no override changes the signature of the method it overrides."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import rlrun.samplers
from rlrun.envs.gym import make
from rlrun.samplers.action_sources import LocalActions, ServedActions
from rlrun.samplers.async_.alternating_sampler import AsyncAlternatingSampler, AsyncNoOverlapAlternatingSampler
from rlrun.samplers.async_.base import AsyncSamplerBase
from rlrun.samplers.async_.collectors import (
    DbCpuResetCollector,
    DbCpuWaitResetCollector,
    DbGpuResetCollector,
    DbGpuWaitResetCollector,
    DoubleBufferCollectorMixin,
)
from rlrun.samplers.async_.cpu_sampler import AsyncCpuSampler
from rlrun.samplers.async_.gpu_sampler import AsyncGpuSampler
from rlrun.samplers.async_.serial_sampler import AsyncSerialSampler
from rlrun.samplers.base import BaseSampler
from rlrun.samplers.collectors import BaseCollector, BaseEvalCollector, EvalCollector
from rlrun.samplers.parallel.cpu.collectors import CpuResetCollector, CpuWaitResetCollector
from rlrun.samplers.parallel.cpu.sampler import CpuSampler
from rlrun.samplers.parallel.gpu.alternating_sampler import AlternatingSampler, NoOverlapAlternatingSampler
from rlrun.samplers.parallel.gpu.collectors import GpuEvalCollector, GpuResetCollector, GpuWaitResetCollector
from rlrun.samplers.parallel.gpu.sampler import GpuSampler
from rlrun.samplers.serial.sampler import SerialSampler

pytestmark = pytest.mark.timeout(60)
MAX_DEPTH = 4


def _sampler_classes() -> dict[str, type]:
    """Every class defined in ``rlrun.samplers``, by qualified name."""
    classes: dict[str, type] = {}
    for info in pkgutil.walk_packages(rlrun.samplers.__path__, "rlrun.samplers."):
        module = importlib.import_module(info.name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if value.__module__.startswith("rlrun.samplers"):
                classes[f"{value.__module__}.{value.__qualname__}"] = value
    return classes


def _depth(cls: type) -> int:
    """rlrun classes on the longest inheritance path, ``cls`` included (outside bases do not count)."""
    bases = [b for b in cls.__bases__ if b.__module__.split(".")[0] == "rlrun"]
    return 1 + max((_depth(b) for b in bases), default=0)


CLASSES = _sampler_classes()


def test_the_walk_finds_the_whole_family():
    names = {name.rsplit(".", 1)[1] for name in CLASSES}
    assert {"AsyncNoOverlapAlternatingSampler", "DbGpuWaitResetCollector", "GpuEvalCollector", "ActionServing"} <= names


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_no_sampler_or_collector_class_is_more_than_4_rlrun_classes_deep(name):
    assert _depth(CLASSES[name]) <= MAX_DEPTH, f"{name}: {[c.__name__ for c in CLASSES[name].__mro__]}"


def test_the_depth_count_counts_what_it_should():
    assert _depth(BaseSampler) == 1
    assert _depth(GpuSampler) == 4  # BaseSampler, ParallelSamplerBase, GpuSamplerBase, GpuSampler
    assert _depth(DbCpuWaitResetCollector) == 4  # BaseCollector, DecorrelatingStart, CpuWaitReset, Db


def _overrides() -> list[tuple[str, str, type, type]]:
    """(class name, method name, class, the base whose definition it overrides) for every method an rlrun
    sampler or collector class defines over a definition in one of its rlrun bases."""
    found = []
    for name, cls in sorted(CLASSES.items()):
        for attr, value in vars(cls).items():
            if attr.startswith("__") or not inspect.isfunction(value):
                continue  # constructors and dunders may take what their class needs
            for base in cls.__mro__[1:]:
                if base.__module__.split(".")[0] == "rlrun" and inspect.isfunction(vars(base).get(attr)):
                    found.append((name, attr, cls, base))
                    break
    return found


OVERRIDES = _overrides()


def _shape(function) -> list[tuple[str, object, object]]:
    """What a caller sees of a signature: each parameter's name, kind and default."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


def test_the_override_walk_finds_overrides():
    pairs = {(cls.__name__, attr) for _, attr, cls, _ in OVERRIDES}
    assert ("CpuSampler", "obtain_samples") in pairs
    assert ("DecorrelatingStartCollector", "start_envs") in pairs
    assert ("AsyncCpuSampler", "_prepare_agent") in pairs


@pytest.mark.parametrize(("name", "attr", "cls", "base"), OVERRIDES, ids=[f"{o[0]}.{o[1]}" for o in OVERRIDES])
def test_no_override_changes_the_signature_of_the_method_it_overrides(name, attr, cls, base):
    assert _shape(vars(cls)[attr]) == _shape(vars(base)[attr]), f"{name}.{attr} differs from {base.__name__}.{attr}"


def test_the_signature_check_fails_on_a_changed_signature():
    class Changed(CpuSampler):
        def obtain_samples(self, itr, db_idx=0):
            return super().obtain_samples(itr)

    assert _shape(Changed.obtain_samples) != _shape(CpuSampler.obtain_samples)


# ---- what each public class is made of ----

SYNC_PARTS = {
    # sampler: (gpu: the master serves the actions, alternating groups, no overlap between the groups)
    CpuSampler: (False, False, False),
    GpuSampler: (True, False, False),
    AlternatingSampler: (True, True, False),
    NoOverlapAlternatingSampler: (True, True, True),
}


@pytest.mark.parametrize("SamplerCls", list(SYNC_PARTS), ids=lambda c: c.__name__)
def test_each_parallel_sampler_is_the_parallel_sampler_with_its_serving_parts(SamplerCls):
    assert (SamplerCls.gpu, SamplerCls.alternating, SamplerCls.no_overlap) == SYNC_PARTS[SamplerCls]
    # The classes add nothing but their parts and their default collectors: every round and every start-up
    # is the parallel sampler's own.
    own = {k for k, v in vars(SamplerCls).items() if inspect.isfunction(v)} - {"__init__"}
    assert own <= {"obtain_samples", "evaluate_agent"}  # CpuSampler syncs the shared model first


COLLECTOR_PARTS = {
    # collector: (who computes actions, mid_batch_reset, double buffer)
    CpuResetCollector: (LocalActions, True, False),
    CpuWaitResetCollector: (LocalActions, False, False),
    GpuResetCollector: (ServedActions, True, False),
    GpuWaitResetCollector: (ServedActions, False, False),
    DbCpuResetCollector: (LocalActions, True, True),
    DbCpuWaitResetCollector: (LocalActions, False, True),
    DbGpuResetCollector: (ServedActions, True, True),
    DbGpuWaitResetCollector: (ServedActions, False, True),
}


@pytest.mark.parametrize("CollectorCls", list(COLLECTOR_PARTS), ids=lambda c: c.__name__)
def test_each_collector_is_the_one_env_step_loop_with_its_parts(CollectorCls):
    parts = (CollectorCls.ActionSourceCls, CollectorCls.mid_batch_reset, CollectorCls.double_buffered)
    assert parts == COLLECTOR_PARTS[CollectorCls]
    assert CollectorCls.collect_batch is BaseCollector.collect_batch
    assert CollectorCls.reset_if_needed is BaseCollector.reset_if_needed


def test_the_eval_collectors_share_one_evaluation_loop_with_their_action_source():
    assert EvalCollector.ActionSourceCls is LocalActions and GpuEvalCollector.ActionSourceCls is ServedActions
    assert EvalCollector.collect_evaluation is BaseEvalCollector.collect_evaluation
    assert GpuEvalCollector.collect_evaluation is BaseEvalCollector.collect_evaluation


def test_rlpyts_double_buffer_mixin_still_makes_a_user_collector_double_buffered():
    class MyDb(DoubleBufferCollectorMixin, CpuResetCollector):
        pass

    assert MyDb.double_buffered and not CpuResetCollector.double_buffered
    with pytest.raises(TypeError, match="samples_np must be a pair"):
        MyDb(rank=0, envs=[], samples_np=None, batch_T=1)


ASYNC_PARTS = {
    # async sampler: (engine, its collector, the engine's agent acts in the sampler process)
    AsyncSerialSampler: (SerialSampler, DbCpuResetCollector),
    AsyncCpuSampler: (CpuSampler, DbCpuResetCollector),
    AsyncGpuSampler: (GpuSampler, DbGpuResetCollector),
    AsyncAlternatingSampler: (AlternatingSampler, DbGpuResetCollector),
    AsyncNoOverlapAlternatingSampler: (NoOverlapAlternatingSampler, DbGpuResetCollector),
}


@pytest.mark.parametrize("AsyncCls", list(ASYNC_PARTS), ids=lambda c: c.__name__)
def test_each_async_sampler_runs_its_synchronous_sampler_as_its_engine(AsyncCls):
    EngineCls, CollectorCls = ASYNC_PARTS[AsyncCls]
    sampler = AsyncCls(EnvCls=make, env_kwargs=dict(id="CartPole-v1"), batch_T=4, batch_B=2)
    assert type(sampler.sampler) is EngineCls
    assert sampler.sampler.CollectorCls is CollectorCls
    assert sampler.batch_spec == (4, 2) and sampler.mid_batch_reset is CollectorCls.mid_batch_reset
    assert sampler.start_method in ("fork", "spawn", "forkserver")


@pytest.mark.parametrize("AsyncCls", list(ASYNC_PARTS), ids=lambda c: c.__name__)
def test_async_samplers_are_not_synchronous_samplers_and_keep_rlpyts_async_call_shapes(AsyncCls):
    # A different composition, not an incompatible override of BaseSampler's initialize and obtain_samples.
    assert not issubclass(AsyncCls, BaseSampler) and issubclass(AsyncCls, AsyncSamplerBase)
    assert [p for p in inspect.signature(AsyncCls.initialize).parameters] == ["self", "affinity"]
    assert [p for p in inspect.signature(AsyncCls.obtain_samples).parameters] == ["self", "itr", "db_idx"]
    assert [p for p in inspect.signature(AsyncCls.async_initialize).parameters] == [
        "self",
        "agent",
        "bootstrap_value",
        "traj_info_kwargs",
        "seed",
    ]


def test_no_type_ignore_in_the_samplers_cites_a_changed_signature():
    root = rlrun.samplers.__path__[0]
    import pathlib

    offending = [
        f"{path.name}:{i}"
        for path in pathlib.Path(root).rglob("*.py")
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if "type: ignore" in line and ("override" in line or "signature" in line)
    ]
    assert not offending
