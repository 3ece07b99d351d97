"""Reading the user's data files for the command line."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

__all__ = ["load_array"]

_TEXT = {".csv": ",", ".tsv": "\t", ".txt": None}


def load_array(path, *, column=None, ndim=1) -> np.ndarray:
    """Load a 1-D or 2-D numeric array from .npy (memory-mapped), .csv, .tsv or .txt.

    ``column`` picks one column of a table by header name or 0-based index;
    without it a one-column table gives a vector and a wider one a matrix.
    ``ndim=None`` accepts either (one column gives a vector). Errors are
    ``ValueError`` with the file name in the message.
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".npy":
        try:
            data = np.load(path, mmap_mode="r", allow_pickle=False)
        except Exception as exc:
            raise ValueError(f"{path}: not a readable .npy file ({exc})") from None
        if column is not None:
            if data.ndim != 2:
                raise ValueError(f"{path}: --column needs a 2-D array, this one has shape {data.shape}")
            data = data[:, _column_index(column, None, data.shape[1], path)]
    elif suffix in _TEXT:
        data = _load_text(path, _TEXT[suffix], column)
    else:
        raise ValueError(f"{path}: unsupported file type {suffix!r} (use .npy, .csv, .tsv or .txt)")
    if ndim != 2 and data.ndim == 2 and data.shape[1] == 1:
        data = data[:, 0]
    if ndim is not None and data.ndim != ndim:
        want = "one column (use --column to pick one)" if ndim == 1 else "a 2-D table"
        raise ValueError(f"{path}: expected {want}, got shape {data.shape}")
    return data


def _column_index(column, header, width, path) -> int:
    if header is not None and column in header:
        return header.index(column)
    try:
        index = int(column)
    except ValueError:
        names = ", ".join(header) if header else "none (no header row)"
        raise ValueError(f"{path}: no column {column!r}; columns: {names}") from None
    if not -width <= index < width:
        raise ValueError(f"{path}: column {index} is out of range for {width} columns")
    return index


def _load_text(path, delimiter, column) -> np.ndarray:
    try:
        with open(path, newline="", encoding="utf-8") as f:
            if delimiter is None:
                rows = [line.split() for line in f if line.strip() and not line.lstrip().startswith("#")]
            else:
                rows = [row for row in csv.reader(f, delimiter=delimiter) if row and any(c.strip() for c in row)]
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file (byte {exc.start} is not UTF-8)") from None
    except csv.Error as exc:
        raise ValueError(f"{path}: not a readable table ({exc})") from None
    if not rows:
        raise ValueError(f"{path}: the file is empty")
    header = None
    if not _is_numeric_row(rows[0]):
        header, rows = [c.strip() for c in rows[0]], rows[1:]
    if not rows:
        raise ValueError(f"{path}: no data rows")
    width = len(rows[0])
    for number, row in enumerate(rows, start=2 if header else 1):
        if len(row) != width:
            raise ValueError(f"{path}: line {number} has {len(row)} fields, expected {width}")
    try:
        data = np.array([[float(c) for c in row] for row in rows], dtype=np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: non-numeric value ({exc})") from None
    if column is not None:
        data = data[:, _column_index(column, header, width, path)]
    return data


def _is_numeric_row(row) -> bool:
    try:
        [float(c) for c in row]
    except ValueError:
        return False
    return True
