"""rlrun: deep reinforcement learning in PyTorch with rlpyt's names and shared-memory samplers."""

from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

CORE = [
    "torch>=1.12",
    "numpy>=1.21",
    "gymnasium>=1.0,<2",
    "psutil>=5.8",
    "tqdm>=4.60",  # the training progress bar: pure Python, no dependencies, about 80 kB
]

EXTRAS = {
    "atari": ["ale-py>=0.10"],
    "mujoco": ["mujoco>=3.0", "imageio>=2.14"],
    "tensorboard": ["tensorboard>=2.10"],
    "plotting": ["matplotlib>=3.5"],
    # videos of play and evaluation: imageio with imageio-ffmpeg's bundled ffmpeg; Gymnasium draws its
    # classic-control and Box2D envs with pygame (for `rlrun play --render` and rgb_array frames alike)
    "video": ["imageio>=2.14", "imageio-ffmpeg>=0.4", "pygame>=2.1"],
    "wandb": ["wandb>=0.16"],  # Weights & Biases tracking: logger_context(wandb=True), rlrun train --wandb
    "tests": [
        "pytest>=7",
        "pytest-timeout>=2.1",
        "pyyaml>=6",
        "ale-py>=0.10",
        "matplotlib>=3.5",
        "mujoco>=3.0",  # MuJoCo configs, example_2 and the HalfCheetah check
        "imageio>=2.14",
        "imageio-ffmpeg>=0.4",  # videos: rlrun play --video, RecordVideo
        "pygame>=2.1",  # Gymnasium's rgb_array frames of CartPole
        "stable-baselines3>=2.0",  # the benchmarks' side-by-side runs, smoke-tested
        "tensorboard>=2.10",  # event files written and read back
        "wandb>=0.16",  # tracking, tested offline and read back
        "ruff>=0.17.6,<0.18",  # CI checks formatting too: a formatter release may restyle code
        "mypy>=1.10",
        # tests/docs builds the site with --strict
        "mkdocs>=1.5",
        "mkdocs-material>=9.5",
        "mkdocstrings[python]>=0.26",
    ],
    "docs": ["mkdocs>=1.5", "mkdocs-material>=9.5", "mkdocstrings[python]>=0.26"],
}
EXTRAS["all"] = sorted({req for reqs in EXTRAS.values() for req in reqs})

setup(
    name="rlrun",
    version="0.1.0",
    description="Deep reinforcement learning in PyTorch: rlpyt's API with Gymnasium, ale-py and hang-free samplers.",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    license="MIT",
    python_requires=">=3.10",
    packages=find_packages(include=["rlrun", "rlrun.*"]),
    package_data={"rlrun.compat": ["*.json"]},  # rlpyt's star-import names, read at import
    install_requires=CORE,
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["rlrun = rlrun.cli:main"]},
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Operating System :: POSIX :: Linux",
    ],
)
