"""Reading the command line's input: CSV, TSV, whitespace-separated text, Parquet, NPY or standard input.

CSV, TSV and Parquet are read by pyarrow (the ``cli`` extra, imported only
when such a file is read): its number parsing is correctly rounded, unlike
``pandas.read_csv``'s default. Whitespace-separated text and NPY need numpy only.

Numbers are kept exact: a table whose values are all integers is read as int64
(scores such as 2**60 + 1 stay distinct); a table with any non-integer value is
read as float64, and an integer beyond 2**53 in it, which float64 would round,
is refused with a message naming it. Lines may end in LF, CRLF or CR alone.
"""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

__all__ = ["FORMATS_HELP", "MissingExtraError", "load_array", "column_position"]

_SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "txt",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".npy": "npy",
}
_DELIMITERS = {"csv": ",", "tsv": "\t", "txt": None}  # None: runs of whitespace, '#' starts a comment

FORMATS_HELP = (
    "Input formats, by file name suffix: .csv (comma-separated), .tsv/.tab (tab-separated), .txt (separated by "
    "whitespace, '#' starts a comment), .parquet/.pq, .npy. '-' reads standard input: NPY and Parquet are "
    "recognised by their first bytes, other input is CSV, or TSV when its first line holds a tab. "
    "Text may start with a UTF-8 byte-order mark. A first row of names is a header; a numeric first row that could be "
    "a header of column numbers (such as 0 or 0,1,2) is refused unless --header or --no-header says what it is."
)

_PIECE_BYTES = 1 << 20  # of text parsed at once: bigger pieces cost memory and gain no speed
_NPY_MAGIC = b"\x93NUMPY"
_PARQUET_MAGIC = b"PAR1"
_COLUMN_NUMBERS = re.compile(r"\s*\d+\s*")
_NOT_BLANK = re.compile(rb"[^\r\n]")  # like pyarrow, a line of spaces is not blank
_EXACT_FLOAT_INTEGERS = 2**53  # every integer up to this magnitude is a float64
_INTEGER_TEXT = r"^\s*[+-]?[0-9]+\s*$"


class MissingExtraError(ImportError):
    """An optional dependency of the command line is not installed."""


def load_array(
    source: str | Path,
    *,
    column: str | None = None,
    ndim: int | None = 1,
    header: bool | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> np.ndarray:
    """Load a 1-D or 2-D int64 or float64 array from a file, or from standard input when ``source`` is ``'-'``.

    ``column`` picks one column of a table by header name or 0-based index;
    without it a one-column table gives a vector and a wider one a matrix.
    ``ndim=None`` accepts either (one column gives a vector). ``header``
    says whether a text table's first row is a header; None decides from
    the row itself (see ``FORMATS_HELP``). ``progress(done, total)`` is
    called as a CSV or TSV input is parsed (in bytes). Errors are
    ``ValueError`` naming the input (and the line, for a malformed text row
    or a missing value).
    """
    data = _Input(source)
    if data.format in ("npy", "parquet"):
        array = _load_npy(data, column) if data.format == "npy" else _load_parquet(data, column)
        if array.dtype.kind == "f" and array.size and np.isnan(array).any():
            row = int(np.flatnonzero(np.isnan(array.reshape(array.shape[0], -1)).any(axis=1))[0])
            raise ValueError(f"{data.name}: row {row} (counting from 0) has a missing value (NaN)")
    else:
        array = _load_text(data, column, header, progress)
    if ndim != 2 and array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if ndim is not None and array.ndim != ndim:
        want = "one column (use --column to pick one)" if ndim == 1 else "a 2-D table"
        raise ValueError(f"{data.name}: expected {want}, got shape {array.shape}")
    return array


def column_position(source: str | Path, column: str | None, header: bool | None = None) -> int | None:
    """The 0-based position of ``column`` (a header name or an index) in a file's table, or None when the file
    is not a table of named or numbered columns (a vector, unreadable input: ``load_array`` reports those)."""
    if column is None or str(source) == "-":
        return None
    try:
        data = _Input(source)
        if data.format == "npy":
            shape = np.load(data.source(), mmap_mode="r", allow_pickle=False).shape
            return _column_index(column, None, shape[1], data.name) if len(shape) == 2 else None
        if data.format == "parquet":
            names = list(_require("pyarrow.parquet").ParquetFile(data.source()).schema_arrow.names)
            return _column_index(column, names, len(names), data.name)
        rows = _rows(data)
        first = next(rows, None)
        rows.close()
        if first is None:
            return None
        titles = [f.strip() for f in first[1]] if _has_header(data.name, *first, header) else None
        return _column_index(column, titles, len(first[1]), data.name)
    except (ValueError, OSError, ImportError):
        return None


class _Input:
    """A named file or the bytes of standard input, with its format."""

    def __init__(self, source: str | Path):
        self.content: bytes | None = None
        if str(source) == "-":
            self.name = "<stdin>"
            self.path = None
            self.content = sys.stdin.buffer.read()
            self.format = _sniff(self.content)
            return
        self.path = Path(source)
        self.name = str(source)
        if self.path.is_dir():
            raise ValueError(f"{self.name}: is a directory; give a file")
        if not self.path.is_file():
            raise ValueError(f"{self.name}: no such file")
        suffix = self.path.suffix.lower()
        if suffix not in _SUFFIXES:
            known = ", ".join(_SUFFIXES)
            raise ValueError(f"{self.name}: unsupported file type {suffix!r} (use one of {known}, or '-')")
        self.format = _SUFFIXES[suffix]

    def binary(self) -> BinaryIO:
        if self.content is not None:
            return io.BytesIO(self.content)
        assert self.path is not None
        return open(self.path, "rb")

    def size(self) -> int:
        """Bytes of the input."""
        return len(self.content) if self.content is not None else self.path.stat().st_size  # type: ignore[union-attr]

    def count_lines(self) -> int:
        """Lines of text (an upper bound on the rows of a table), counted without decoding: each LF, and
        each CR not followed by LF (old Mac line ends)."""
        count, previous = 1, b""
        with self.binary() as stream:
            while block := stream.read(1 << 20):
                count += block.count(b"\n") + block.count(b"\r") - block.count(b"\r\n")
                count -= previous == b"\r" and block.startswith(b"\n")  # a CRLF cut between two blocks
                previous = block[-1:]
        return count

    def pieces(self, skipped: int) -> Iterator[bytes]:
        """The bytes after the first ``skipped`` lines, in pieces of whole lines, blank pieces left out."""
        with self.binary() as stream:
            rest = _skip_lines(stream, skipped)
            while block := stream.read(_PIECE_BYTES):
                block = rest + block if rest else block
                cut = max(block.rfind(b"\n"), block.rfind(b"\r")) + 1  # a CR cut from its LF leaves a blank line
                piece, rest = block[:cut], block[cut:]
                if _NOT_BLANK.search(piece):
                    yield piece
            if _NOT_BLANK.search(rest):
                yield rest

    def source(self) -> Path | BinaryIO:
        """What a reader opens: the path (streamed) or the bytes read from standard input."""
        return self.path if self.path is not None else self.binary()


def _skip_lines(stream: BinaryIO, count: int) -> bytes:
    """Read past ``count`` lines (ended by LF, CRLF or CR); return the bytes read beyond them."""
    rest = b""
    while count > 0:
        block = stream.read(1 << 16)
        if not block:
            return b""
        rest += block
        for match in re.finditer(rb"\r\n|\r|\n", rest):
            if match.group() == b"\r" and match.end() == len(rest):
                break  # a CR at the end of what was read: its LF may follow
            count -= 1
            if count == 0:
                return rest[match.end() :]
        else:
            rest = b""
            continue
        rest = rest[match.start() :]
    return rest


def _sniff(content: bytes) -> str:
    if content.startswith(_NPY_MAGIC):
        return "npy"
    if content.startswith(_PARQUET_MAGIC):
        return "parquet"
    first_line = content.lstrip(b"\r\n").split(b"\n", 1)[0]
    return "tsv" if b"\t" in first_line else "csv"


def _require(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f'reading this input needs {module.split(".")[0]}: pip install "pairmetrics[cli]"'
        ) from None


# --- NPY ----------------------------------------------------------------------------------


def _load_npy(data: _Input, column: str | None) -> np.ndarray:
    try:
        if data.path is not None:
            array = np.load(data.path, mmap_mode="r", allow_pickle=False)
        else:
            array = np.load(data.binary(), allow_pickle=False)
    except Exception as exc:
        raise ValueError(f"{data.name}: not a readable .npy file ({exc})") from None
    if not isinstance(array, np.ndarray):
        raise ValueError(f"{data.name}: holds several arrays, not one")
    if column is not None:
        if array.ndim != 2:
            raise ValueError(f"{data.name}: --column needs a 2-D array, this one has shape {array.shape}")
        picked: np.ndarray = array[:, _column_index(column, None, array.shape[1], data.name)]
        return picked
    return array


# --- Parquet --------------------------------------------------------------------------------


def _load_parquet(data: _Input, column: str | None) -> np.ndarray:
    pq = _require("pyarrow.parquet")
    pa = _require("pyarrow")
    try:
        parquet = pq.ParquetFile(data.source())
        names = list(parquet.schema_arrow.names)
        picked = names if column is None else [names[_column_index(column, names, len(names), data.name)]]
        table = parquet.read(columns=picked)
    except (OSError, pa.ArrowException) as exc:
        raise ValueError(f"{data.name}: not a readable Parquet file ({exc})") from None
    if table.num_columns == 0:
        raise ValueError(f"{data.name}: no columns")
    for name, values in zip(table.column_names, table.columns):
        if not (
            pa.types.is_integer(values.type) or pa.types.is_floating(values.type) or pa.types.is_boolean(values.type)
        ):
            raise ValueError(f"{data.name}: column {name!r} holds {values.type}, not numbers")
        if values.null_count:
            raise ValueError(f"{data.name}: column {name!r} has {values.null_count} missing values")
    columns = [np.asarray(values.to_numpy()) for values in table.columns]
    return _exact_columns(columns, table.column_names, data.name)


# --- text tables ------------------------------------------------------------------------------


def _load_text(
    data: _Input, column: str | None, header: bool | None, progress: Callable[[int, int], None] | None
) -> np.ndarray:
    rows = _rows(data)
    first = next(rows, None)
    if first is None:
        raise ValueError(f"{data.name}: the input is empty")
    has_header = _has_header(data.name, *first, header)
    names = [f.strip() for f in first[1]] if has_header else None
    width = len(first[1])
    second = next(rows, None)
    rows.close()
    if second is None and has_header:
        raise ValueError(f"{data.name}: no data rows")
    if second is not None and len(second[1]) != width:  # readers would drop or shift columns
        raise ValueError(f"{data.name}: {_wrong_width(second[0], len(second[1]), width, first[0])}")
    picked = None if column is None else _column_index(column, names, width, data.name)
    skipped = first[0] if has_header else 0  # lines before the data: blank ones, comments, the header
    try:
        if data.format == "txt":
            array = _read_whitespace(data, skipped, picked)
        else:
            array = _read_delimited(data, skipped, width, picked, progress)
    except ValueError as exc:  # a malformed row (the readers' messages do not name the line)
        raise ValueError(f"{data.name}: {_first_problem(data, picked, has_header) or _one_line(exc)}") from None
    if array.dtype.kind == "f" and np.isnan(array).any():
        row = int(np.flatnonzero(np.isnan(array).any(axis=1))[0])
        raise ValueError(f"{data.name}: line {_line_of_row(data, row, has_header)} has a missing value (NaN)")
    return array


def _read_delimited(
    data: _Input, skipped: int, width: int, picked: int | None, progress: Callable[[int, int], None] | None
) -> np.ndarray:
    """CSV or TSV by pyarrow (correctly rounded), piece by piece into one array sized by the count of lines.

    pyarrow's own readers hold much more of the text in memory (its
    streaming reader reads far ahead of its parser); pieces of whole lines
    keep the memory used near the size of the numbers plus a few buffers.
    """
    pa = _require("pyarrow")
    pa_csv = _require("pyarrow.csv")
    names = [f"c{i}" for i in range(width)]
    read = pa_csv.ReadOptions(column_names=names)
    parse = pa_csv.ParseOptions(delimiter=_DELIMITERS[data.format])
    convert = pa_csv.ConvertOptions(
        column_types={n: pa.float64() for n in names},
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
        include_columns=None if picked is None else [names[picked]],
    )
    shape = (data.count_lines() - skipped, 1 if picked is not None else width)
    out: np.ndarray = np.empty(shape, dtype=np.int64)  # integers until a value is not one
    filled = done = 0
    total = data.size()
    for piece in data.pieces(skipped):
        if progress is not None:
            done += len(piece)
            progress(done, total)
        table = None
        if out.dtype.kind == "i":
            try:
                table = _parse_piece(pa_csv, piece, read, parse, convert, pa.int64())
            except pa.ArrowInvalid:  # from here on float64, once the integers so far fit in it
                if not _fits_float64(out[:filled]):
                    _refuse_big_integers("")
                floats = out.view(np.float64)  # converted in place: no second table of the whole input
                floats[:filled] = out[:filled].astype(np.float64)
                out = floats
        if table is None:
            try:
                table = _parse_piece(pa_csv, piece, read, parse, convert, pa.float64())
            except pa.ArrowInvalid as exc:
                raise ValueError(str(exc)) from None
            _check_float_piece(pa_csv, piece, read, parse, convert, table)
        for i, values in enumerate(table.columns):
            out[filled : filled + table.num_rows, i] = values.to_numpy()
        filled += table.num_rows
    return out[:filled]


def _parse_piece(pa_csv: Any, piece: bytes, read: Any, parse: Any, convert: Any, kind: Any) -> Any:
    """One piece of text as a pyarrow table with every column of type ``kind``."""
    convert.column_types = {name: kind for name in read.column_names}
    return pa_csv.read_csv(io.BytesIO(piece), read_options=read, parse_options=parse, convert_options=convert)


def _check_float_piece(pa_csv: Any, piece: bytes, read: Any, parse: Any, convert: Any, table: Any) -> None:
    """Refuse integers beyond 2**53 written as such in a float64 piece (float64 rounded them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not any(_beyond_exact(np.asarray(values.to_numpy())) for values in table.columns):
        return  # the common case: no value that large, nothing was rounded
    text = _parse_piece(pa_csv, piece, read, parse, convert, pa.string())
    for values, numbers in zip(text.columns, table.columns):
        integer = np.asarray(pc.match_substring_regex(values, _INTEGER_TEXT).to_numpy(zero_copy_only=False))
        _refuse_rounded(np.asarray(values.to_numpy(zero_copy_only=False)), np.asarray(numbers.to_numpy()), integer)


def _refuse_rounded(fields: np.ndarray, numbers: np.ndarray, integer: np.ndarray) -> None:
    """Refuse the first field written as an integer that its float64 value does not equal."""
    for k in np.flatnonzero(integer & (np.abs(numbers) >= _EXACT_FLOAT_INTEGERS)):
        text = str(fields.flat[k]).strip()
        if int(text) != int(numbers.flat[k]):
            _refuse_big_integers("", text)


def _beyond_exact(values: np.ndarray) -> bool:
    """Whether some value is large enough (2**53 or more) for float64 to have rounded an integer to it."""
    return bool(values.size) and bool(np.nanmax(np.abs(values)) >= _EXACT_FLOAT_INTEGERS)


def _fits_float64(values: np.ndarray) -> bool:
    """Whether integers convert to float64 exactly (magnitudes up to 2**53)."""
    limit = _EXACT_FLOAT_INTEGERS
    return not values.size or (int(values.max()) <= limit and int(values.min()) >= -limit)


def _refuse_big_integers(where: str, value: str | None = None) -> Any:
    """The error of an integer float64 would round (``where``: a prefix naming the input or its column)."""
    shown = f" ({value})" if value else ""
    raise ValueError(
        f"{where}an integer beyond 2**53{shown} among non-integer values: float64 cannot hold it exactly; "
        "write the column with integers only (read exactly as int64), or convert it yourself"
    )


def _exact_columns(columns: list[np.ndarray], names: list[str], name: str) -> np.ndarray:
    """Columns as one int64 table when all hold integers (or booleans), else float64 (refusing integers beyond
    2**53, which float64 would round)."""
    if all(c.dtype.kind in "biu" for c in columns):
        for column, title in zip(columns, names):
            if column.dtype.kind == "u" and column.size and int(column.max()) > np.iinfo(np.int64).max:
                raise ValueError(f"{name}: column {title!r} holds integers beyond the int64 range")
        return np.column_stack([c.astype(np.int64) for c in columns]) if columns else np.empty((0, 0), np.int64)
    for column, title in zip(columns, names):
        if column.dtype.kind in "iu" and not _fits_float64(column):
            _refuse_big_integers(f"{name}: column {title!r} holds ")
    return np.column_stack([c.astype(np.float64) for c in columns])


def _read_whitespace(data: _Input, skipped: int, picked: int | None) -> np.ndarray:
    def read(dtype: Any) -> np.ndarray:
        with data.binary() as stream:
            text = io.TextIOWrapper(stream, encoding="utf-8-sig")
            return np.loadtxt(text, dtype=dtype, comments="#", skiprows=skipped, usecols=picked, ndmin=2)

    try:
        return read(np.int64)  # exact integers
    except (ValueError, OverflowError):
        numbers = read(np.float64)
    if _beyond_exact(numbers):
        fields = read(str)
        integer = np.vectorize(lambda f: re.fullmatch(_INTEGER_TEXT, f) is not None, otypes=[bool])(fields)
        _refuse_rounded(fields, numbers, integer)
    return numbers


def _rows(data: _Input) -> Generator[tuple[int, list[str]], None, None]:
    """(line number, fields) of each non-blank row, from the start of the input."""
    stream = io.TextIOWrapper(data.binary(), encoding="utf-8-sig", newline="")
    delimiter = _DELIMITERS[data.format]
    number = 0
    try:
        if delimiter is None:
            for number, line in enumerate(stream, start=1):
                fields = line.split("#", 1)[0].split()
                if fields:
                    yield number, fields
        else:
            reader = csv.reader(stream, delimiter=delimiter)
            for fields in reader:
                number = reader.line_num
                if fields:
                    yield number, fields
    except UnicodeDecodeError:
        raise ValueError(f"{data.name}: not UTF-8 text (after line {number})") from None
    except csv.Error as exc:
        raise ValueError(f"{data.name}: line {number + 1} is not a readable table row ({exc})") from None
    finally:
        stream.close()


def _has_header(name: str, number: int, fields: list[str], header: bool | None) -> bool:
    """Whether the first row is a header: as told, else a row of names is one and a row of numbers is not."""
    if header is not None:
        return header
    numeric = [_is_number(f) for f in fields]
    if not any(numeric):
        return True
    shown = _shown(fields)
    if not all(numeric):
        raise ValueError(
            f"{name}: line {number} ({shown}) mixes numbers and text; pass --header if it is a header "
            "row, --no-header if it is data"
        )
    if _could_be_column_numbers(fields):
        raise ValueError(
            f"{name}: line {number} ({shown}) could be a header of column numbers or data; pass --header "
            "to skip it or --no-header to read it as data"
        )
    return False


def _could_be_column_numbers(fields: list[str]) -> bool:
    """0, 1, 2, ...: how pandas labels unnamed columns (``Series.to_csv`` writes the header ``0``)."""
    return all(_COLUMN_NUMBERS.fullmatch(f) and int(f) == i for i, f in enumerate(fields))


def _line_of_row(data: _Input, row: int, has_header: bool) -> int:
    """The line number of data row ``row`` (0-based) of a text table."""
    rows = _rows(data)
    try:
        for index, (number, _) in enumerate(rows):
            if index == row + has_header:
                return number
    finally:
        rows.close()
    return -1  # not reached: the row was read from this input


def _first_problem(data: _Input, picked: int | None, has_header: bool) -> str | None:
    """The first malformed row (wrong number of fields, a field that is not a number), or None."""
    width = first = 0
    for number, fields in _rows(data):
        if not first:
            width, first = len(fields), number
            if has_header:
                continue
        if len(fields) != width:
            return _wrong_width(number, len(fields), width, first)
        for field in fields if picked is None else [fields[picked]]:
            if not _is_number(field):
                return f"line {number}: {field.strip()!r} is not a number"
    return None


def _wrong_width(number: int, found: int, width: int, first: int) -> str:
    return f"line {number} has {found} field{'s' * (found != 1)}, expected {width} like line {first}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return "_" not in text  # float() accepts 1_000; table readers do not


def _shown(fields: list[str]) -> str:
    text = ",".join(f.strip() for f in fields)
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _one_line(exc: Exception) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


def _column_index(column: str, names: list[str] | None, width: int, name: str) -> int:
    if names is not None and column in names:
        return names.index(column)
    try:
        index = int(column)
    except ValueError:
        shown = ", ".join(names) if names else "none (no header row)"
        raise ValueError(f"{name}: no column {column!r}; columns: {shown}") from None
    if not -width <= index < width:
        raise ValueError(f"{name}: column {index} is out of range for {width} columns")
    return index % width
