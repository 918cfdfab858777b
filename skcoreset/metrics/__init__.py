"""Measures of how well a coreset, or the posterior fitted on it, matches the full data.

* :func:`coreset_quality`: how far a fitted coreset's Laplace posterior is from the full
  data's, in nats (KL divergence) and in full-posterior standard deviations (largest mean
  difference): the numbers to read when judging a coreset;
* :func:`exact_kl`: how far any fitted posterior (Gaussian or MCMC draws, on a coreset or on
  all rows) is from the exact posterior of all rows, in nats, by importance weighting over
  every row, with the Pareto ``k-hat`` that says whether to trust it (:class:`ExactKL`);
* :func:`gaussian_check`: whether a Laplace (or other Gaussian) fit is enough, in one line:
  its distance to the exact posterior and, when it is off, the faster way to sample it;
* :func:`gaussian_kl` and :func:`posterior_kl`: KL divergence between Gaussian (or
  moment-matched) posteriors, the error measure of the sparse-VI and GIGA papers;
* :func:`mean_error_sd`: largest difference between two posterior means, in standard
  deviations of the reference posterior;
* :func:`polynomial_mmd`: maximum mean discrepancy between two sets of posterior samples with
  a polynomial kernel, the error measure of Huggins et al. (2016, Section 4);
* :func:`loglik_relative_error`: how far the coreset's weighted log-likelihood is from the
  full data's at given parameter values (the quantity coresets bound uniformly).
"""

from ._divergences import gaussian_kl, mean_error_sd, posterior_kl
from ._evaluation import CoresetQuality, coreset_quality, loglik_relative_error
from ._exact import ExactKL, exact_kl
from ._gaussian_check import GaussianCheck, gaussian_check
from ._mmd import polynomial_mmd

__all__ = ["CoresetQuality", "ExactKL", "GaussianCheck", "coreset_quality", "exact_kl",
           "gaussian_check", "gaussian_kl", "loglik_relative_error", "mean_error_sd",
           "polynomial_mmd", "posterior_kl"]
