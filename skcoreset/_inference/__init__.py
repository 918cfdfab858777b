"""Posterior inference for weighted GLMs: one function per method, no scikit-learn inside.

Every method takes ``(X, y, family, sample_weight=..., prior_prec=..., fit_intercept=...)``
plus its own options and returns an :class:`~skcoreset._inference._common.InferenceResult`.
"""

from ._common import InferenceResult, LogPosterior, prior_precision
from .kl_proximal import kl_proximal
from .laplace import laplace
from .mcmc import mcmc
from .pass_glm import pass_glm

METHODS = {"laplace": laplace, "kl_proximal": kl_proximal, "pass_glm": pass_glm, "mcmc": mcmc}


def fit_posterior(method, X, y, family, **kwargs):
    """Dispatch to the inference function named ``method``."""
    try:
        function = METHODS[method]
    except KeyError:
        raise ValueError(f"Unknown method {method!r}; expected one of {sorted(METHODS)}.")
    return function(X, y, family, **kwargs)


__all__ = ["InferenceResult", "LogPosterior", "fit_posterior", "kl_proximal", "laplace",
           "mcmc", "pass_glm", "prior_precision"]
