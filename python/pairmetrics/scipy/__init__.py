"""Drop-ins for :mod:`scipy.stats`' rank statistics: the same names, signatures, result fields and numbers."""

__all__: list[str] = []
