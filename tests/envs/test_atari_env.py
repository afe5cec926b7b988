"""AtariEnv on real ale-py ROMs: observation content, stacking, lives, horizon, seeding, errors."""

from __future__ import annotations

import multiprocessing as mp
import sys

import numpy as np
import pytest

ale_py = pytest.importorskip("ale_py")

from rlrun.envs.atari import AtariEnv, AtariEnvInfo, AtariTrajInfo  # noqa: E402
from rlrun.envs.atari.ale_backend import UnknownGameError, ale_backend  # noqa: E402
from rlrun.envs.atari.screen import FramePooler, grayscale_palette  # noqa: E402
from rlrun.envs.validation import EnvValidationError, validate_env  # noqa: E402
from rlrun.spaces.int_box import IntBox  # noqa: E402


def downsample(screen: np.ndarray) -> np.ndarray:
    """rlpyt's rule, written out here so the tests do not share the code under test."""
    return screen[1:-1:2, ::2]


def reference_ale(env: AtariEnv):
    """A second, independent ALEInterface on the same ROM, without sticky actions."""
    ale = ale_py.ALEInterface()
    ale.setFloat("repeat_action_probability", 0.0)
    ale.loadROM(env._rom_path)
    return ale


def reference_frame(ref, env: AtariEnv, action: int) -> tuple[np.ndarray, np.ndarray]:
    """The frame ``env.step(action)`` should add, and the last raw frame alone, played on ``ref``."""
    ref.restoreState(env.ale.cloneState())
    code = env._action_codes[action]
    height, width = ref.getScreenDims()
    first = np.empty((height, width), np.uint8)
    last = np.empty((height, width), np.uint8)
    for _ in range(env.frame_skip - 1):
        ref.act(code)
    ref.getScreenGrayscale(first)
    ref.act(code)
    ref.getScreenGrayscale(last)
    return downsample(np.maximum(first, last)), downsample(last)


def test_spaces_and_observations_follow_rlpyt_convention():
    env = AtariEnv("pong")
    assert env.observation_space == IntBox(0, 256, shape=(4, 104, 80), dtype="uint8")
    assert env.action_space == IntBox(0, 6)
    assert env.get_action_meanings() == ["NOOP", "FIRE", "RIGHT", "LEFT", "RIGHTFIRE", "LEFTFIRE"]
    obs = env.reset()
    assert obs.shape == (4, 104, 80) and obs.dtype == np.uint8
    step = env.step(2)
    assert step.observation.shape == (4, 104, 80) and step.observation.dtype == np.uint8
    assert isinstance(step.env_info, AtariEnvInfo)
    assert step.env_info._fields == ("game_score", "traj_done", "timeout")
    assert env.uses_fast_screen  # the palette calibration worked, so the speed figures apply


def test_reset_zero_fills_stack_with_current_frame_last():
    env = AtariEnv("pong", max_start_noops=0)
    obs = env.reset()
    gray = np.empty((210, 160), np.uint8)
    env.ale.getScreenGrayscale(gray)
    assert not obs[:-1].any()
    np.testing.assert_array_equal(obs[-1], downsample(gray))
    assert obs[-1].any()


@pytest.mark.parametrize("game, frame_skip", [("pong", 4), ("breakout", 4), ("pong", 1), ("pooyan", 3)])
def test_newest_frame_is_max_of_last_two_raw_frames_like_a_reference_ale(game, frame_skip):
    env = AtariEnv(game, frame_skip=frame_skip, max_start_noops=0, episodic_lives=False)
    env.seed(0)
    env.reset()
    ref = reference_ale(env)
    rng = np.random.default_rng(0)
    pooled_differs_from_last = 0
    for _ in range(60):
        action = int(rng.integers(env.action_space.n))
        expected, last_only = reference_frame(ref, env, action)
        step = env.step(action)
        np.testing.assert_array_equal(step.observation[-1], expected)
        pooled_differs_from_last += not np.array_equal(expected, last_only)
        if step.done:
            env.reset()
    assert pooled_differs_from_last > 0  # the max over two frames mattered on some steps


def test_taller_screens_give_taller_frames():
    env = AtariEnv("pooyan")  # ale-py renders it 220 rows high
    assert env.observation_space.shape == (4, 109, 80)
    assert env.reset().shape == (4, 109, 80)


@pytest.mark.parametrize("game", ["pong", "air_raid"])  # air_raid: a 250-row screen and a PAL palette
def test_frame_shape_shrinks_the_max_of_the_last_two_full_screens(game, area_average):
    env = AtariEnv(game, frame_shape=(84, 84), max_start_noops=0, episodic_lives=False)
    assert env.observation_space == IntBox(0, 256, shape=(4, 84, 84), dtype="uint8")
    assert env.frame_shape == (84, 84)
    env.seed(0)
    assert env.reset().shape == (4, 84, 84)
    ref = reference_ale(env)
    height, width = ref.getScreenDims()
    first, last = np.empty((height, width), np.uint8), np.empty((height, width), np.uint8)
    rng = np.random.default_rng(0)
    pooled_differs_from_last = 0
    for _ in range(40):
        action = int(rng.integers(env.action_space.n))
        ref.restoreState(env.ale.cloneState())
        for _ in range(env.frame_skip - 1):
            ref.act(env._action_codes[action])
        ref.getScreenGrayscale(first)
        ref.act(env._action_codes[action])
        ref.getScreenGrayscale(last)
        expected = area_average(np.maximum(first, last), (84, 84))
        pooled_differs_from_last += np.abs(area_average(last, (84, 84)) - expected).max() > 1
        newest = env.step(action).observation[-1].astype(np.float64)
        assert np.abs(newest - expected).max() <= 0.5 + 1e-3
    assert pooled_differs_from_last > 0  # the max over two frames mattered on some steps


def test_frame_shape_takes_a_list_and_refuses_bad_shapes_with_the_fix():
    assert AtariEnv("pong", frame_shape=[84, 84], num_img_obs=2).reset().shape == (2, 84, 84)  # as JSON gives it
    assert AtariEnv("pong", frame_shape=(210, 160)).frame_shape == (210, 160)  # the whole screen, pooled only
    assert AtariEnv("pong").frame_shape == (104, 80)
    for bad in ((84,), (84.0, 84), (0, 84), 84, (True, 84)):
        with pytest.raises(ValueError, match=r"frame_shape must be a \(height, width\) pair"):
            AtariEnv("pong", frame_shape=bad)
    with pytest.raises(ValueError, match=r"larger than the game's 210x160 screen.*at most \(210, 160\)"):
        AtariEnv("pong", frame_shape=(84, 200))


def test_frame_stack_is_oldest_first_and_fills_after_reset():
    env = AtariEnv("pong", num_img_obs=3, max_start_noops=0)
    previous = env.reset()
    for t in range(1, 8):
        obs = env.step(t % 6).observation
        np.testing.assert_array_equal(obs[:-1], previous[1:])
        assert [bool(frame.any()) for frame in obs] == [t >= 2, t >= 1, True]
        previous = obs


def test_fast_and_grayscale_screen_paths_agree():
    env = AtariEnv("breakout", max_start_noops=0)
    env.reset()
    ale, shape = env.ale, (210, 160)
    fast = FramePooler(ale, shape, grayscale_palette())
    slow = FramePooler(ale, shape, None)
    assert fast.uses_palette and not slow.uses_palette
    a, b = np.empty(104 * 80, np.uint8), np.empty(104 * 80, np.uint8)  # pool_into writes flat arrays
    rng = np.random.default_rng(1)
    for _ in range(100):
        code = env._action_codes[int(rng.integers(4))]
        for _ in range(3):
            ale.act(code)
        fast.grab_first()
        slow.grab_first()
        ale.act(code)
        fast.pool_into(a)
        slow.pool_into(b)
        np.testing.assert_array_equal(a, b)
        if ale.game_over():
            ale.reset_game()


def test_clip_reward_gives_sign_of_game_score():
    rewards = {}
    for clip in (True, False):
        env = AtariEnv("space_invaders", clip_reward=clip, episodic_lives=False)
        env.seed(1)
        env.reset()
        rng = np.random.default_rng(0)
        steps = [env.step(int(rng.integers(6))) for _ in range(200)]
        rewards[clip] = np.array([s.reward for s in steps])
        scores = np.array([s.env_info.game_score for s in steps])
        assert rewards[clip].dtype == np.float32 and scores.dtype == np.float32
        np.testing.assert_array_equal(rewards[clip], np.sign(scores) if clip else scores)
    assert rewards[False].max() > 1  # space invaders scores 5 and more per alien
    np.testing.assert_array_equal(rewards[True], np.sign(rewards[False]))


def test_episodic_lives_end_episodes_but_not_the_game_on_breakout():
    env = AtariEnv("breakout", fire_on_reset=True, max_start_noops=0)
    env.seed(0)
    env.reset()
    assert env.ale.lives() == 5
    ends = []
    for _ in range(1000):
        step = env.step(0)  # NOOP: the launched ball is missed, one life after another
        if step.done:
            ends.append((env.ale.lives(), step.env_info.traj_done, step.env_info.timeout))
            if step.env_info.traj_done:
                break
            frame_number = env.ale.getEpisodeFrameNumber()
            obs = env.reset()
            assert env.ale.getEpisodeFrameNumber() > frame_number  # the same game continues
            assert not obs[:-1].any()
    assert ends == [(4, False, False), (3, False, False), (2, False, False), (1, False, False), (0, True, False)]
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(0)
    env.reset()
    assert env.ale.lives() == 5 and env.ale.getEpisodeFrameNumber() < 50  # a new game


def test_without_episodic_lives_only_game_over_ends_the_episode():
    env = AtariEnv("breakout", fire_on_reset=True, episodic_lives=False, max_start_noops=0)
    env.reset()
    lives = [env.ale.lives()]
    for _ in range(2000):
        step = env.step(1)  # FIRE relaunches the ball after each lost life
        lives.append(env.ale.lives())
        if step.done:
            break
    assert step.done and step.env_info.traj_done and not step.env_info.timeout
    assert lives[-1] == 0 and sorted(set(lives)) == [0, 1, 2, 3, 4, 5]


def test_horizon_ends_the_trajectory_with_timeout():
    env = AtariEnv("pong", horizon=5)
    assert env.horizon == 5
    for _ in range(2):
        env.reset()
        steps = [env.step(0) for _ in range(5)]
        assert [s.done for s in steps] == [False] * 4 + [True]
        assert steps[-1].env_info.traj_done and steps[-1].env_info.timeout
        assert not any(s.env_info.timeout or s.env_info.traj_done for s in steps[:-1])
        with pytest.raises(RuntimeError, match="traj_done"):
            env.step(0)


def _play(env: AtariEnv, n: int = 80) -> np.ndarray:
    rng = np.random.default_rng(5)
    frames = [env.reset()]
    for _ in range(n):
        step = env.step(int(rng.integers(env.action_space.n)))
        frames.append(step.observation)
        if step.done:
            frames.append(env.reset())
    return np.stack(frames)


def test_same_seed_gives_identical_observations():
    kwargs = dict(game="pong", repeat_action_probability=0.25, max_start_noops=30)
    a, b = AtariEnv(**kwargs), AtariEnv(**kwargs)
    a.seed(7)
    b.seed(7)
    first = _play(a)
    np.testing.assert_array_equal(first, _play(b))
    a.seed(7)  # applies at the next reset, which _play does first
    np.testing.assert_array_equal(first, _play(a))
    b.seed(8)
    assert not np.array_equal(first, _play(b))


def test_seed_refuses_negative_and_non_integer_values():
    env = AtariEnv("pong")
    for bad in (-1, 1.5, "3"):
        with pytest.raises(ValueError, match="non-negative integer"):
            env.seed(bad)


def test_unknown_game_error_lists_close_matches():
    with pytest.raises(UnknownGameError, match="'pong'") as info:
        AtariEnv("pongg")
    assert "snake_case" in str(info.value)
    with pytest.raises(ValueError, match="'space_invaders'"):
        AtariEnv("SpaceInvaders")


def test_bundled_rom_that_ale_cannot_run_is_refused_instead_of_exiting():
    # ALE exits the process when asked to load this ROM; the env must refuse it first.
    with pytest.raises(UnknownGameError, match="cannot run"):
        AtariEnv("combat")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(frame_skip=0), "frame_skip"),
        (dict(num_img_obs=1.5), "num_img_obs"),
        (dict(max_start_noops=-1), "max_start_noops"),
        (dict(horizon=0), "horizon"),
        (dict(repeat_action_probability=1.5), "repeat_action_probability"),
        (dict(game="freeway", fire_on_reset=True), "no FIRE action"),
    ],
)
def test_bad_arguments_are_refused_with_the_argument_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        AtariEnv(**kwargs)


def test_bad_actions_and_step_before_reset_are_refused():
    env = AtariEnv("pong")
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(0)
    env.reset()
    for bad in (6, -1, np.int64(7)):
        with pytest.raises(EnvValidationError, match="outside"):
            env.step(bad)
    with pytest.raises((EnvValidationError, ValueError), match="action"):
        env.step(2.0)
    env.step(np.int64(5))  # numpy integers are fine
    env.step(np.array(3))


def test_atari_traj_info_accumulates_raw_game_score():
    env = AtariEnv("space_invaders", episodic_lives=False)
    env.seed(2)
    observation = env.reset()
    traj_info = AtariTrajInfo(discount=0.99)
    rng = np.random.default_rng(0)
    scores = []
    for _ in range(150):
        action = int(rng.integers(6))
        observation, reward, done, env_info = env.step(action)
        traj_info.step(observation, action, reward, done, None, env_info)
        scores.append(env_info.game_score)
    assert traj_info.GameScore == pytest.approx(float(np.sum(scores))) and traj_info.GameScore > 0
    assert traj_info.Return == pytest.approx(float(np.sum(np.sign(scores))))
    assert traj_info.GameScore > traj_info.Return  # clipped rewards, raw scores
    assert "GameScore" in traj_info.loggable()


def test_passes_validate_env():
    validate_env(AtariEnv("breakout", horizon=30), n_steps=40)


_CHILD_PROGRAM = """
from rlrun.envs.atari import AtariEnv
env = AtariEnv(**kwargs)
env.seed(seed)
observation = env.reset()
for action in actions:
    step = env.step(action)
queue.put((observation, step.observation, step.env_info))
"""


def test_env_is_built_from_kwargs_in_a_spawned_child():
    kwargs = dict(game="breakout", frame_skip=3, num_img_obs=2, fire_on_reset=True)
    actions = [0, 1, 2, 3, 2, 2, 3]
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    # exec is importable anywhere, so the child needs nothing from this test module.
    child = ctx.Process(target=exec, args=(_CHILD_PROGRAM, dict(kwargs=kwargs, seed=4, actions=actions, queue=queue)))
    child.start()
    try:
        first, last, env_info = queue.get(timeout=60)
    finally:
        child.join(timeout=30)
    assert child.exitcode == 0
    env = AtariEnv(**kwargs)
    env.seed(4)
    np.testing.assert_array_equal(first, env.reset())
    for action in actions:
        step = env.step(action)
    np.testing.assert_array_equal(last, step.observation)
    assert env_info == step.env_info and isinstance(env_info, AtariEnvInfo)


def test_missing_ale_gives_install_hint(monkeypatch):
    ale_backend.cache_clear()
    monkeypatch.setitem(sys.modules, "ale_py", None)  # import of a None entry raises ImportError
    monkeypatch.setitem(sys.modules, "atari_py", None)
    try:
        with pytest.raises(ImportError, match="pip install ale-py"):
            AtariEnv("pong")
    finally:
        ale_backend.cache_clear()


# --- rlpyt's fire_and_up and render -------------------------------------------------------------------


@pytest.mark.parametrize(
    "game, pressed", [("seaquest", [1, 2]), ("breakout", [1]), ("freeway", [2])], ids=["fire+up", "fire", "up"]
)
def test_fire_and_up_presses_fire_then_up_where_the_game_has_them(game, pressed):
    env = AtariEnv(game, max_start_noops=0)
    env.reset()
    ref = reference_ale(env)
    ref.restoreState(env.ale.cloneState())
    for code in pressed:
        ref.act(code)
    frame = env.ale.getEpisodeFrameNumber()
    env.fire_and_up()
    assert env.ale.getEpisodeFrameNumber() == frame + len(pressed)  # one frame per press
    assert np.array_equal(env.ale.getRAM(), ref.getRAM())


def test_fire_and_up_presses_nothing_else():
    # The RAM comparison above can fail: a NOOP frame instead of FIRE leaves Breakout's ball unlaunched.
    env = AtariEnv("breakout", max_start_noops=0)
    env.reset()
    ref = reference_ale(env)
    ref.restoreState(env.ale.cloneState())
    ref.act(0)
    env.fire_and_up()
    for _ in range(30):
        env.ale.act(0)
        ref.act(0)
    assert not np.array_equal(env.ale.getRAM(), ref.getRAM())


def test_render_returns_the_newest_frame_or_the_whole_observation():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")  # no window in tests: render only returns the image
    env = AtariEnv("pong")
    env.reset()
    for _ in range(3):
        env.step(0)
    obs = env.get_obs()
    assert np.array_equal(env.render(), obs[-1])
    full = env.render(wait=0, show_full_obs=True)
    assert full.shape == (obs.shape[0] * obs.shape[1], obs.shape[2])
    assert np.array_equal(full[-obs.shape[1] :], obs[-1]) and np.array_equal(full[: obs.shape[1]], obs[0])
