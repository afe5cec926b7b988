"""rlpyt's path for the return and advantage functions, which live in :mod:`rlrun.utils.returns`."""

from rlrun.utils.returns import (
    discount_return,
    discount_return_n_step,
    discount_return_n_step_tl,
    discount_return_tl,
    generalized_advantage_estimation,
    generalized_advantage_estimation_tl,
    valid_from_done,
)

__all__ = [
    "discount_return",
    "generalized_advantage_estimation",
    "discount_return_tl",
    "generalized_advantage_estimation_tl",
    "discount_return_n_step",
    "discount_return_n_step_tl",
    "valid_from_done",
]
