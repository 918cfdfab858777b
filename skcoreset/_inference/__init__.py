"""Posterior inference for weighted GLMs: one function per method, no scikit-learn inside.

Every method takes ``(X, y, family, sample_weight=..., prior_prec=..., fit_intercept=...)``
plus its own options and returns an :class:`~skcoreset._inference._common.InferenceResult`.
:func:`resolve_family` estimates a family's ``"auto"`` parameters before a fit.
"""

from ._common import InferenceResult, LogPosterior, prior_precision
from .kl_proximal import kl_proximal
from .laplace import laplace
from .mcmc import mcmc
from .pass_glm import pass_glm
from .resolve import resolve_family

__all__ = ["InferenceResult", "LogPosterior", "kl_proximal", "laplace",
           "mcmc", "pass_glm", "prior_precision", "resolve_family"]
