"""Drop-ins for :mod:`sksurv.metrics`: Harrell's C, Uno's C and the cumulative/dynamic AUC."""

from .._survival import concordance_index_censored
from .._uno import concordance_index_ipcw, cumulative_dynamic_auc

__all__ = ["concordance_index_censored", "concordance_index_ipcw", "cumulative_dynamic_auc"]
