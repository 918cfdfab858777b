"""The Laplace start of the MCMC samplers, and the checks that they can sample from it.

MCMC weighs changes of the log posterior of about a nat: the Metropolis test of the
ensemble's stretch move, NUTS's choice of a point along its trajectory. float64 rounds a
log posterior of ``L`` nats to about ``eps |L|`` nats, so when that rounding reaches a nat
the samplers act on noise. This happens when the weights (or the counts) make the
posterior so concentrated that its standard deviation is a tiny fraction of its mean: the
log posterior grows like the total weight, the posterior sd shrinks like its inverse
square root.

The opposite failure is a posterior that the data do not bound in some direction: classes
separated by a hyperplane, all-zero counts, a feature that is zero wherever a count is
not. The likelihood then stays flat to infinity along that direction, and only the prior
ends it; under a very wide prior the posterior is a wall on one side and a plateau of the
prior's width on the other. No sampler that follows the curvature crosses that plateau in
reasonable time (NUTS needs about ``plateau / wall width`` leapfrog steps per iteration,
its trees saturate at every step), and the draws would only show the prior's scale. The
Laplace approximation at the mode sees it: some row's linear predictor gets a posterior sd
far beyond the scale on which any GLM's likelihood changes (a few units: probabilities of
0 or 1 to ``e^-10``, rates that change by ``e^10``).
"""

import numpy as np

from .._warnings import warn
from .._backend import as_storage
from .._design import latent_variances
from ..exceptions import MCMCDiagnosticWarning
from .laplace import laplace

# Largest rounding of the log posterior at the mode, in nats, that the samplers tolerate.
# Measured on 40 logistic rows with every weight scaled by the same factor: NUTS and emcee
# are right at 0.46 nats (means within 0.08 sd, sds within 7 %); at 4.6 nats NUTS builds
# maximal trees without end and emcee's means are 0.17 sd off.
MAX_ROUNDING_NATS = 1.0
# Largest posterior sd of a row's linear predictor under the Laplace approximation that the
# samplers accept. Measured on separated logistic rows (300 rows, 3 features): prior scales
# of 10 and 100 give sds of about 20 and 200, which NUTS samples (trees of depth 5 to 8);
# 1e4 gives 1e4, where every NUTS tree saturates the maximum depth.
MAX_LATENT_SD = 1e3


def mcmc_start(X, y, family, *, sample_weight, prior_prec, fit_intercept, tol, max_iter,
               offset=None, verbose=0, improper="raise"):
    """The Laplace fit the samplers start from (:func:`~.laplace.laplace`, same
    parameters); ValueError when float64 cannot resolve the posterior there, and
    ``improper`` (``"raise"`` a ValueError, or ``"warn"``) when it is flat in some
    direction (:func:`check_bounded`).

    Raises
    ------
    ValueError
        When the log posterior at the mode is rounded by more than ``MAX_ROUNDING_NATS``
        nats (``eps |log posterior|``), naming it, the posterior sd and what to do.
    """
    start = laplace(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                    fit_intercept=fit_intercept, tol=tol, max_iter=max_iter, offset=offset,
                    verbose=verbose)
    log_post = start.extra["log_posterior"]
    rounding = np.finfo(float).eps * abs(log_post)
    if not rounding <= MAX_ROUNDING_NATS:  # also a non-finite log posterior
        posterior = start.posterior
        sd = np.sqrt(np.diag(posterior.cov))
        raise ValueError(
            f"MCMC cannot sample this posterior in float64: it is too concentrated (very "
            f"large sample weights or counts). At the Laplace start the log posterior is "
            f"{log_post:.3g} nats, which float64 rounds by about {rounding:.2g} nats, more "
            f"than the nat or so by which a step of the sampler changes it: the posterior "
            f"sd there (smallest {sd.min():.2g}, beside means up to "
            f"{np.max(np.abs(posterior.mean)):.2g}) is below what float64 resolves at this "
            f"scale. Rescale sample_weight (a weight counts observations), or use "
            f"method='laplace': at this concentration the posterior is Gaussian to many digits.")
    check_bounded(X, y, sample_weight, start.posterior, fit_intercept, improper)
    return start


def _latent_sd(factor, fit_intercept, X, y, w, offset=None):
    """The sd of each row's linear predictor for theta of covariance ``factor^T factor``
    (0 for rows of no weight; a known offset adds no variance)."""
    return np.sqrt(latent_variances(X, factor, fit_intercept, lower=False)) * (w > 0)


def check_bounded(X, y, sample_weight, posterior, fit_intercept, action="raise"):
    """Raise a ValueError (``action="raise"``) or warn (``"warn"``) when the largest
    posterior sd of a row's linear predictor under the Laplace approximation ``posterior``
    exceeds ``MAX_LATENT_SD``: the posterior is flat in some direction up to the prior's
    scale (module docstring). ``X`` holds the rows, or is a row storage."""
    rows = as_storage(X, y, sample_weight)
    largest = np.max(rows.map_rows(_latent_sd, posterior.cov_cholesky.T, fit_intercept))
    largest = float(largest.compute() if hasattr(largest, "compute") else largest)
    if largest <= MAX_LATENT_SD:  # NaN: left to the samplers' own checks
        return
    sd = np.sqrt(np.diag(posterior.cov))
    message = (
        f"The posterior is flat or nearly improper: under its Laplace approximation a row's "
        f"linear predictor has a posterior sd of {largest:.3g} (parameter sds up to "
        f"{sd.max():.3g}), where the likelihood of a GLM changes over a few units. The data "
        "do not bound some direction of the coefficients (classes separated by a "
        "hyperplane, all-zero counts, a feature that is zero wherever a count is not), "
        "and only the prior ends it, at its scale. Use a proper prior (a smaller "
        "prior_scale or intercept_prior_scale)"
        + (", sampler='ensemble' (which does not follow the curvature, but its draws "
           "will show the prior's scale)" if action == "raise" else "")
        + ", more data, or method='laplace'.")
    if action == "raise":
        raise ValueError(message + " NUTS cannot sample it: its trajectories would need "
                         f"about {largest:.0f} leapfrog steps per draw.")
    warn(message, MCMCDiagnosticWarning)
