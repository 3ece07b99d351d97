"""Drop-in for :func:`pairedeval.paired_eval`."""

from .._paired import paired_eval

__all__ = ["paired_eval"]
