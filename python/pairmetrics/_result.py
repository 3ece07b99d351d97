"""A small base for result objects: named fields, a readable repr, and optional
tuple unpacking for drop-in compatibility with the functions we replace."""

from __future__ import annotations

import dataclasses


class Result:
    """Mixin for ``@dataclasses.dataclass`` results.

    ``_unpack`` names the fields that ``tuple(result)`` / ``a, b = result``
    yields; an empty tuple makes the result non-iterable.
    """

    _unpack: tuple = ()

    def __iter__(self):
        if not self._unpack:
            raise TypeError(f"{type(self).__name__} does not unpack; use its fields")
        return iter(tuple(getattr(self, name) for name in self._unpack))

    def __len__(self):
        return len(self._unpack)

    def __getitem__(self, index):
        return tuple(self)[index]

    def asdict(self) -> dict:
        """The fields as a plain dict (arrays stay arrays)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
