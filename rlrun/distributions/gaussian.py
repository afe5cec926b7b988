"""Diagonal Gaussian over continuous actions, with optional fixed std, clipping and tanh squashing."""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from rlrun.distributions.base import Distribution
from rlrun.utils.collections import NamedArrayTuple, namedarraytuple

__all__ = ["Gaussian", "DistInfo", "DistInfoStd"]

DistInfo = namedarraytuple("DistInfo", ["mean"])
DistInfoStd = namedarraytuple("DistInfoStd", ["mean", "log_std"])

_LOG_2PI = math.log(2 * math.pi)
_LOG_2 = math.log(2)
_UNIFORM_EDGE = 2.0**-53  # the spacing of float64 uniforms in [0, 1)


class Gaussian(Distribution[NamedArrayTuple]):
    """Independent normal per action dim; ``dist_info.mean`` (and ``log_std``) are ``[..., dim]``.

    - ``std``: a fixed standard deviation (scalar or one per dim); ``dist_info.log_std`` is then
      ignored and ``DistInfo(mean)`` suffices. With ``std=None`` the std comes from ``dist_info``.
    - ``min_std`` / ``max_std``: bounds on a learned std, applied in every formula.
    - ``noise_clip``: clamps the noise ``std * N(0, 1)`` when sampling (TD3's target smoothing).
    - ``clip``: clamps samples to ``[-clip, clip]``; not reflected in likelihoods or entropy.
    - ``squash``: samples become ``squash * tanh(u)``; :meth:`log_likelihood` then takes the
      *pre-squash* ``u`` and includes the change of variables (SAC). Entropy and KL are undefined.
    """

    def __init__(
        self,
        dim: int,
        std: float | Sequence[float] | torch.Tensor | None = None,
        clip: float | None = None,
        noise_clip: float | None = None,
        min_std: float | None = None,
        max_std: float | None = None,
        squash: float | None = None,
    ) -> None:
        self._dim = int(dim)
        self.std: torch.Tensor | None = None
        # log(std) on the device and dtype last asked for, with the std it came from (see _fixed_log_std).
        self._log_std_cache: tuple[torch.Tensor, torch.device, torch.dtype, torch.Tensor] | None = None
        self.set_std(std)
        if clip is not None and squash is not None:
            raise ValueError("Gaussian: give clip or squash, not both (squashing already bounds samples).")
        if min_std is not None and max_std is not None and min_std > max_std:
            raise ValueError(f"Gaussian: min_std ({min_std}) exceeds max_std ({max_std}).")
        self.clip = clip
        self.noise_clip = noise_clip
        self.min_std = min_std
        self.max_std = max_std
        self.min_log_std = None if min_std is None else math.log(min_std)
        self.max_log_std = None if max_std is None else math.log(max_std)
        self.squash: float | None = None
        self.set_squash(squash)

    @property
    def dim(self) -> int:
        return self._dim

    def _log_std(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        """log std broadcast to the mean's shape, from ``self.std`` or the (bounded) ``dist_info.log_std``."""
        mean = dist_info.mean
        if self.std is not None:
            return self._fixed_log_std(self.std, mean.device, mean.dtype).expand_as(mean)
        log_std: torch.Tensor = dist_info.log_std
        if self.min_log_std is not None or self.max_log_std is not None:
            log_std = torch.clamp(log_std, min=self.min_log_std, max=self.max_log_std)
        return log_std.expand_as(mean)

    def _fixed_log_std(self, std: torch.Tensor, device: torch.device, dtype: torch.dtype) -> torch.Tensor:
        """``log(std)`` on ``device``, copied there once per std rather than once per call: on a GPU each
        blocking copy from the host waits for all queued work (TD3's target noise runs every gradient step)."""
        cached = self._log_std_cache
        if cached is not None and cached[0] is std and cached[1] == device and cached[2] == dtype:
            return cached[3]
        log_std = torch.log(std.to(device, dtype))
        self._log_std_cache = (std, device, dtype, log_std)
        return log_std

    def __getstate__(self) -> dict[str, object]:
        # The cache may hold a GPU tensor; a pickled copy (a sampler worker's) rebuilds it where it runs.
        return dict(self.__dict__, _log_std_cache=None)

    def _no_squash(self, what: str) -> None:
        if self.squash is not None:
            raise NotImplementedError(f"Gaussian.{what} has no closed form with squash; set squash=None.")

    def kl(self, old_dist_info: NamedArrayTuple, new_dist_info: NamedArrayTuple) -> torch.Tensor:
        self._no_squash("kl")
        old_log_std, new_log_std = self._log_std(old_dist_info), self._log_std(new_dist_info)
        mean_sq = (old_dist_info.mean - new_dist_info.mean) ** 2
        vals = (
            new_log_std - old_log_std + (torch.exp(2 * old_log_std) + mean_sq) / (2 * torch.exp(2 * new_log_std)) - 0.5
        )
        return torch.sum(vals, dim=-1)

    def entropy(self, dist_info: NamedArrayTuple) -> torch.Tensor:
        self._no_squash("entropy")
        return torch.sum(self._log_std(dist_info) + 0.5 * (_LOG_2PI + 1), dim=-1)

    def log_likelihood(self, x: torch.Tensor, dist_info: NamedArrayTuple) -> torch.Tensor:
        """Log density of ``x``; with ``squash``, ``x`` is the pre-squash sample (avoids atanh)."""
        log_std = self._log_std(dist_info)
        z = (x - dist_info.mean) * torch.exp(-log_std)
        logli = -torch.sum(log_std + 0.5 * z**2, dim=-1) - 0.5 * self.dim * _LOG_2PI
        if self.squash is not None:
            # log d(squash * tanh(x))/dx, with log(1 - tanh(x)^2) written stably.
            log_det = math.log(self.squash) + 2 * (_LOG_2 - x - F.softplus(-2 * x))
            logli = logli - torch.sum(log_det, dim=-1)
        return logli

    def likelihood_ratio(
        self, x: torch.Tensor, old_dist_info: NamedArrayTuple, new_dist_info: NamedArrayTuple
    ) -> torch.Tensor:
        return torch.exp(self.log_likelihood(x, new_dist_info) - self.log_likelihood(x, old_dist_info))

    def sample_loglikelihood(self, dist_info: NamedArrayTuple) -> tuple[torch.Tensor, torch.Tensor]:
        """A reparameterised sample (squashed if ``squash``) and its log-likelihood, for SAC."""
        raw = self._raw_sample(dist_info)
        logli = self.log_likelihood(raw, dist_info)
        if self.squash is not None:
            return self.squash * torch.tanh(raw), logli
        return raw, logli

    @property
    def n_uniforms(self) -> int:
        return self._dim

    def sample(self, dist_info: NamedArrayTuple, *, uniform: torch.Tensor | None = None) -> torch.Tensor:
        """``mean + std * N(0, 1)`` (differentiable in mean and std), then clipped or squashed.

        Given ``uniform [..., dim]``, the standard normals are its inverse normal CDF (float64),
        so the noise is a deterministic function of it; without it, they come from torch's global RNG.
        """
        sample = self._raw_sample(dist_info, uniform)
        if self.clip is not None:
            return torch.clamp(sample, -self.clip, self.clip)
        if self.squash is not None:
            return self.squash * torch.tanh(sample)
        return sample

    def _raw_sample(self, dist_info: NamedArrayTuple, uniform: torch.Tensor | None = None) -> torch.Tensor:
        mean: torch.Tensor = dist_info.mean
        if mean.shape[-1] != self.dim:
            raise ValueError(
                f"Gaussian(dim={self.dim}) got a mean with last dim {mean.shape[-1]} (shape {tuple(mean.shape)}); "
                "the model's output size must equal the action dim."
            )
        if uniform is None:
            normal = torch.randn_like(mean)
        else:
            uniform = self.check_uniform(uniform, mean.shape[:-1], mean.device).to(torch.float64)
            # Clamping symmetrically keeps ndtri finite at 0 and bounds the noise at about 8.2 std.
            normal = torch.special.ndtri(uniform.clamp(_UNIFORM_EDGE, 1 - _UNIFORM_EDGE)).to(mean.dtype)
        noise = torch.exp(self._log_std(dist_info)) * normal
        if self.noise_clip is not None:
            noise = torch.clamp(noise, -self.noise_clip, self.noise_clip)
        return mean + noise

    def set_clip(self, clip: float | None) -> None:
        """Clamp samples to ``[-clip, clip]``; None turns clipping off."""
        if clip is not None and self.squash is not None:
            raise ValueError("Gaussian: cannot set clip while squash is on; set_squash(None) first.")
        self.clip = clip

    def set_squash(self, squash: float | None) -> None:
        """Output ``squash * tanh(sample)``; None turns squashing off."""
        if squash is not None and self.clip is not None:
            raise ValueError("Gaussian: cannot set squash while clip is on; set_clip(None) first.")
        if squash is not None and squash <= 0:
            raise ValueError(f"Gaussian: squash must be positive, got {squash}.")
        self.squash = squash

    def set_noise_clip(self, noise_clip: float | None) -> None:
        """Clamp sampling noise to ``[-noise_clip, noise_clip]``; None turns it off."""
        self.noise_clip = noise_clip

    def set_std(self, std: float | Sequence[float] | torch.Tensor | None) -> None:
        """Fix the std (one value or one per dim); None uses ``dist_info.log_std`` instead.

        A std of 0 makes ``sample`` return the mean (squashed or clipped as set): rlpyt's way to act
        deterministically, e.g. ``SacAgent(pretrain_std=0.0)``. Likelihoods are undefined there."""
        if std is None:
            self.std = None
            return
        std = torch.as_tensor(std, dtype=torch.float32).detach()
        if std.numel() not in (1, self.dim):
            raise ValueError(f"Gaussian(dim={self.dim}): std needs 1 or {self.dim} values, got {std.numel()}.")
        if not torch.all(std >= 0):
            raise ValueError(f"Gaussian: std must be >= 0 (0 samples the mean), got {std.tolist()}.")
        self.std = std.reshape(-1) if std.numel() == self.dim else std.reshape(())
