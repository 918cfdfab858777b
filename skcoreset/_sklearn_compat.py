"""The one place that imports scikit-learn's private helpers.

``pyproject.toml`` declares the scikit-learn range these imports are tested on; if a release
moves them, only this module changes.
"""

from sklearn.base import _fit_context
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils._set_output import _get_output_config
from sklearn.utils.validation import _num_samples

__all__ = ["HasMethods", "Interval", "StrOptions", "_fit_context", "_get_output_config",
           "_num_samples"]
