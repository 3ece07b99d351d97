"""Type aliases of the public API: one home for what an argument accepts and
what a result field holds. Annotations only; nothing here runs checks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["ArrayLike", "FloatArray", "IntArray", "BoolArray", "NJobs", "Seed", "Metric", "FloatOrArray"]

ArrayLike = npt.ArrayLike
FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# a scalar (per_target=False) or one value per target column
FloatOrArray = float | FloatArray
# threads: None for every usable core, -1 for all cores, k for at most k
NJobs = int | None
# what _validation.check_rng turns into a Generator
Seed = None | int | np.integer[Any] | np.random.SeedSequence | np.random.BitGenerator | np.random.Generator
# a scipy.spatial.distance.cdist metric name, "rank_mahalanobis", or a callable on two rows
Metric = str | Callable[..., float]
