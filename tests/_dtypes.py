"""The dtypes every kernel accepts: bool, the signed and unsigned integers and the floats numpy computes in."""

import numpy as np

DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float32,
    np.float64,
]
