"""The one base of result objects: named fields, a readable repr, equality that
works with array fields, ``asdict()``, and optional tuple unpacking for
drop-in compatibility with the functions we replace."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np


def _equal(a: object, b: object) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True  # nan fields (nothing rankable) compare equal, as in a copy
    return bool(a == b)


def _private_names(cls: type) -> list[str]:
    """The ``InitVar`` pseudo-fields of a result class, in constructor order."""
    public = {f.name for f in dataclasses.fields(cls)}
    return [
        name
        for name, spec in getattr(cls, "__dataclass_fields__", {}).items()
        if name not in public and "InitVar" in str(spec.type)
    ]


class Result:
    """Mixin for ``@dataclasses.dataclass(eq=False)`` results.

    ``_unpack`` names the fields that ``tuple(result)`` / ``a, b = result``
    yields; an empty tuple makes the result non-iterable. A result is always
    truthy. Equality compares the public fields, except those declared with
    ``dataclasses.field(compare=False)`` (solver counters, a matching behind
    its statistics).

    Private state (such as a cached variance) is declared as
    ``_name: dataclasses.InitVar[T] = default`` (under ``if TYPE_CHECKING``
    as ``_name: T = default``, so that type checkers see the attribute): the
    constructor takes it as
    usual, ``__post_init__`` keeps it as a plain attribute, and it is not a
    dataclass field, so ``dataclasses.asdict``/``fields``, equality,
    ``asdict()`` and the repr see only the public fields.
    ``dataclasses.replace`` carries it over (it reads the attribute).
    """

    _unpack: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self, *private: object) -> None:
        for name, value in zip(_private_names(type(self)), private):
            object.__setattr__(self, name, value)  # results are frozen

    def __iter__(self) -> Iterator[Any]:
        if not self._unpack:
            raise TypeError(f"{type(self).__name__} does not unpack; use its fields")
        return iter(tuple(getattr(self, name) for name in self._unpack))

    def __len__(self) -> int:
        if not self._unpack:
            raise TypeError(f"{type(self).__name__} has no len(); use its fields")
        return len(self._unpack)

    def __bool__(self) -> bool:
        return True

    def __getitem__(self, index: Any) -> Any:
        return tuple(self)[index]

    def _public_fields(self) -> list[str]:
        fields = dataclasses.fields(self)  # type: ignore[arg-type]  # every subclass is a dataclass
        return [f.name for f in fields if not f.name.startswith("_")]

    def _public_properties(self) -> list[str]:
        names = []
        for klass in type(self).__mro__:
            for name, value in vars(klass).items():
                if isinstance(value, property) and not name.startswith("_") and name not in names:
                    names.append(name)
        return names

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        compared = [f.name for f in dataclasses.fields(self) if f.compare]  # type: ignore[arg-type]  # a dataclass
        return all(_equal(getattr(self, n), getattr(other, n)) for n in self._public_fields() if n in compared)

    __hash__ = None  # type: ignore[assignment]  # results hold arrays and floats: compare them, do not hash them

    def asdict(self) -> dict[str, Any]:
        """Public fields and derived values (such as ``auc``) as a plain dict; arrays stay arrays,
        nested results (also in tuples and lists) become dicts."""
        return {name: _plain(getattr(self, name)) for name in self._public_fields() + self._public_properties()}

    def __repr__(self) -> str:
        parts = []
        for name in self._public_fields():
            value = getattr(self, name)
            if isinstance(value, np.ndarray):
                value = f"<array shape={value.shape} dtype={value.dtype}>"
            elif isinstance(value, float):
                value = f"{value:.6g}"
            else:
                value = repr(value)
            parts.append(f"{name}={value}")
        return f"{type(self).__name__}({', '.join(parts)})"


def _plain(value: Any) -> Any:
    if isinstance(value, Result):
        return value.asdict()
    if isinstance(value, (tuple, list)) and any(isinstance(v, Result) for v in value):
        return type(value)(_plain(v) for v in value)
    return value
