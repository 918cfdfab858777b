"""The Laplace start of the MCMC samplers, and the check that float64 can sample from it.

MCMC weighs changes of the log posterior of about a nat: the Metropolis test of the
ensemble's stretch move, NUTS's choice of a point along its trajectory. float64 rounds a
log posterior of ``L`` nats to about ``eps |L|`` nats, so when that rounding reaches a nat
the samplers act on noise. This happens when the weights (or the counts) make the
posterior so concentrated that its standard deviation is a tiny fraction of its mean: the
log posterior grows like the total weight, the posterior sd shrinks like its inverse
square root.
"""

import numpy as np

from .laplace import laplace

# Largest rounding of the log posterior at the mode, in nats, that the samplers tolerate.
# Measured on 40 logistic rows with every weight scaled by the same factor: NUTS and emcee
# are right at 0.46 nats (means within 0.08 sd, sds within 7 %); at 4.6 nats NUTS builds
# maximal trees without end and emcee's means are 0.17 sd off.
MAX_ROUNDING_NATS = 1.0


def mcmc_start(X, y, family, *, sample_weight, prior_prec, fit_intercept, tol, max_iter,
               offset=None, verbose=0):
    """The Laplace fit the samplers start from (:func:`~.laplace.laplace`, same
    parameters); ValueError when float64 cannot resolve the posterior there.

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
    return start
