"""Posterior inference for weighted GLMs: one function per method, no scikit-learn inside.

Every method takes ``(X, y, family, sample_weight=..., prior_prec=..., fit_intercept=...)``
plus its own options and returns an :class:`InferenceResult`: :func:`laplace`,
:func:`kl_proximal`, :func:`pass_glm` and :func:`mcmc`. :func:`resolve_family` estimates a
family's ``"auto"`` parameters before a fit.

This package is the one surface the rest of skcoreset uses (the coreset constructors, the
estimators and the metrics import from here, never from a submodule):

* the log posterior and its prior: :class:`LogPosterior`, :func:`log_posterior_of` (of a
  row storage, chunked on a cluster or a memmap), :func:`prior_precision`;
* modes and warm refits: :func:`newton_map` (Newton's method on any object with the
  :class:`LogPosterior` interface), :func:`find_mode` (with the large-N start),
  :func:`initial_theta`, :func:`warn_not_converged`;
* samplers: :data:`SAMPLERS`, :func:`log_probability` (the vectorised log posterior for
  emcee), :func:`stretch_scale` (the stretch move's scale), :func:`sample_predictive_moments`
  (predictive moments over draws);
* the exact posterior of all rows by importance weighting: :func:`log_joint` (the log
  posterior of a batch of draws, one chunked pass over the rows), :func:`importance_summary`
  (the KL divergence of the proposal to it, Pareto-smoothed weights, weighted moments);
  :class:`PotentialEvaluator` and :func:`potential_sums`, the rows x draws log-likelihoods
  behind it and the Monte Carlo coreset constructions;
* PASS-GLM streams: :class:`PassGLMStream` (the statistics, pilot sample and pilot fit that
  ``partial_fit`` adds chunks to), :func:`check_pass_degree`.

Modules: ``_common`` (prior, log posterior, results), ``_newton`` (the damped Newton solver
behind every mode), ``laplace``, ``kl_proximal``, ``pass_glm/``, ``mcmc`` (emcee's ensemble
and the dispatch to ``nuts``), ``diagnostics`` (ESS, R-hat), ``resolve``, ``potentials``,
``importance``.
"""

from ._common import (InferenceResult, LogPosterior, log_posterior_of,
                      prior_precision)
from ._newton import warn_not_converged
from .diagnostics import effective_sample_size_of_means
from .importance import importance_summary, log_joint, pareto_smoothed
from .kl_proximal import kl_proximal
from .laplace import find_mode, initial_theta, laplace, newton_map
from .mcmc import SAMPLERS, log_probability, mcmc, sample_predictive_moments, stretch_scale
from .pass_glm import PassGLMStream, check_pass_degree, pass_glm
from .potentials import PotentialEvaluator, potential_sums
from .resolve import resolve_family

__all__ = ["SAMPLERS", "InferenceResult", "LogPosterior", "PassGLMStream", "PotentialEvaluator",
           "check_pass_degree", "effective_sample_size_of_means", "find_mode",
           "importance_summary", "initial_theta", "kl_proximal", "laplace", "log_joint",
           "log_posterior_of", "log_probability", "mcmc", "newton_map", "pareto_smoothed",
           "pass_glm", "potential_sums", "prior_precision", "resolve_family",
           "sample_predictive_moments", "stretch_scale", "warn_not_converged"]
