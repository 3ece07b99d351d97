"""Generic Dask helpers of the drop-in paths (ROC AUC, concordance, gathered point sets).

The block helpers come from :mod:`pairmetrics.dask._blocks` and the score
split from :mod:`pairmetrics.dask.paired`.

It also holds the one step the drop-ins share: cutting the rows of a Dask
array by ranges of a sort key (scores, times) into partitions whose keys all
lie below those of the next partition, so that a kernel counts the pairs
inside a partition and the pairs between partitions follow from small
per-partition summaries. Equal keys always share a partition.
"""

from __future__ import annotations

import math

import numpy as np

from . import paired
from ._blocks import (
    align_rows,
    cluster_threads,
    compute,
    first_nonfinite,
    memory_capped,
    offsets,
    raise_nonfinite,
    to_dask_array,
    tree_reduce,
)
from .paired import LabelRule, _paired_split
from .paired import _partition_data as partition_data

__all__ = [
    "align_rows",
    "cluster_threads",
    "compute",
    "first_nonfinite",
    "offsets",
    "partition_data",
    "raise_nonfinite",
    "to_dask_array",
    "tree_reduce",
    "partition_count",
    "sample_rows",
    "key_bounds",
    "split_by_key",
]


def partition_count(n: int) -> int:
    """Key partitions of n rows: at least one per thread of the cluster, each within a worker's memory."""
    parts = max(
        cluster_threads(), math.ceil(n / memory_capped(paired.PARTITION_SAMPLES, paired.PARTITION_BYTES[False]))
    )
    return max(1, min(parts, n // 2 or 1))


def sample_rows(block, n_parts: int, n_blocks: int, seed: int) -> np.ndarray:
    """Row indices of a random sample of one block (enough over all blocks to place n_parts - 1 bounds)."""
    size = math.ceil(paired.SAMPLES_PER_PARTITION * n_parts / max(1, n_blocks))
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(block.shape[0], size=min(size, block.shape[0]), replace=False))


def key_bounds(sampled_keys: np.ndarray, n_parts: int) -> np.ndarray:
    """At most n_parts - 1 distinct bounds from sampled keys; a row goes to the partition
    ``searchsorted(bounds, key, side="right")``."""
    keys = np.sort(np.asarray(sampled_keys, dtype=np.float64))
    picks = keys[(np.arange(1, n_parts) * keys.size) // n_parts] if keys.size else keys
    return np.unique(picks)


REAL_PAYLOAD = LabelRule(0.0)  # the payload travels as real values (float32 keeps its width)


def split_by_key(keys, payload, bounds):
    """Per partition, the delayed (keys, payload) pieces of every block, in block order.

    ``keys`` is a 1-D dask array, ``payload`` a float dask array with the same
    row chunks (any chunk sizes, known or not, empty chunks included).
    """
    from dask import delayed

    n_parts = bounds.size + 1
    key_blocks, payload_blocks = keys.to_delayed().ravel(), payload.to_delayed().ravel()
    split = [
        delayed(_paired_split, nout=n_parts, pure=True)(k, p, 0, bounds, False, REAL_PAYLOAD)
        for k, p in zip(key_blocks, payload_blocks)
    ]
    return [[pieces[k] for pieces in split] for k in range(n_parts)]
