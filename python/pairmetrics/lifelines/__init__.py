"""Drop-in for :func:`lifelines.utils.concordance_index`."""

from .._survival import concordance_index

__all__ = ["concordance_index"]
