"""The distance of a coreset's exact posterior to the exact posterior of all rows, from one
set of draws and one pass over the rows.

The posterior an MCMC run on the coreset samples, ``p_c ~ prior x prod_m exp(w_m f_m)``,
and the full data's, ``p_f``, are both known up to a constant. Draws ``theta_s`` of a
Gaussian proposal ``q`` around the full data's Laplace approximation give expectations
under any density ``r`` close to it by self-normalised, Pareto-smoothed weights
``r~ / q`` (Vehtari et al. 2024), and

``KL(r || p_f) = E_r[log r~ - log p_f~] + log E_r[p_f~ / r~]``

(the constants cancel). ``log p_f~`` of the draws costs one chunked pass over all rows;
``r = p_c`` costs the coreset's rows only. The draws and ``log p_f~`` do not depend on the
coreset (its Laplace approximation matches the full data's by calibration), so one pass
serves every candidate size; ``r`` = the full data's Laplace approximation gives its own
distance to the exact posterior, the baseline a Gaussian method would reach, on the same
draws.

The proposal is the defensive mixture (Hesterberg 1995) of the Laplace approximation and
the same Gaussian widened by 1.3 in every direction, half each: the wider half covers the
heavier tails of the exact posteriors (measured: a lower Pareto k-hat than either Gaussian
alone on rare events). When the exact posterior's weights over it have a k-hat above 0.5
(a skewed posterior whose mean is off the mode), the mixture is moved to the exact
posterior's mean estimated from its draws, and the pass is made again with new draws.
"""

from typing import NamedTuple

import numpy as np
from scipy import linalg
from scipy.special import logsumexp

from .._backend import InMemoryRows
from .._inference import log_joint, pareto_smoothed

# The wider half of the proposal: the Laplace covariance times this factor squared
_WIDE_SCALE = 1.3
# k-hat of the exact posterior's weights over the proposal above which the proposal is
# centred again at the exact posterior's mean estimated from its draws (one more pass):
# on rare events at 5e4 rows it took k-hat from 0.4-0.8 to 0.1-0.3
_RECENTRE_K = 0.5
# Draws of the proposal: the estimate's Monte Carlo error at 0.01 nats was under 15 % at
# 30-60 features (benchmarks/bench_exact_auto.py)
EXACT_DRAWS = 1000


class ExactReading(NamedTuple):
    """``KL(r || exact posterior)`` in nats, and the largest Pareto k-hat of the two weight
    sets behind it (``r~ / q`` and ``p_f~ / q``)."""

    kl: float
    pareto_k: float


class ExactDistance:
    """``KL(p_c || p_f)`` of coreset weights by importance weighting (see the module).

    Parameters
    ----------
    data : InMemoryRows or DaskRows
        All rows, targets encoded, with their weights.
    family : Family
    mean, precision : ndarray
        The full data's Laplace approximation.
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool
    rng : numpy.random.RandomState
    n_draws : int, default=EXACT_DRAWS
    """

    def __init__(self, data, family, mean, precision, prior_prec, fit_intercept, rng,
                 n_draws=EXACT_DRAWS):
        self.family, self.prior_prec = family, prior_prec
        self.fit_intercept = fit_intercept
        # draws centre + U^-1 z for the precision's Cholesky factor U^T U
        self._upper = linalg.cholesky(precision, lower=False)
        self._laplace_mean = mean
        self._propose(data, mean, rng, n_draws)
        # read on the draws centred at it, whose weights for it are at most 2
        self._laplace = self._kl(self.log_laplace)
        if self.full_k > _RECENTRE_K:
            # the exact posterior's mean is off the mode (skewed posteriors, rare events):
            # centre the proposal there, estimated from these draws, for one more pass
            log_w, _ = pareto_smoothed(self.log_full - self.log_q)
            self._propose(data, np.exp(log_w) @ self.draws, rng, n_draws)

    def _propose(self, data, centre, rng, n_draws):
        """Draws of the proposal centred at ``centre``, their log densities, ``log p_f~``
        (one pass over the rows) and the k-hat of ``p_f~ / q``."""
        p = len(centre)
        z = rng.standard_normal((n_draws, p))
        z[: n_draws // 2] *= _WIDE_SCALE
        z = z[rng.permutation(n_draws)]
        self.draws = centre + linalg.solve_triangular(self._upper, z.T, lower=False).T
        quad = np.sum(z**2, axis=1)
        # log densities of the two halves, up to the same constant
        log_wide = -0.5 * quad / _WIDE_SCALE**2 - p * np.log(_WIDE_SCALE)
        self.log_q = np.logaddexp(-0.5 * quad, log_wide)
        white = self._upper @ (self.draws - self._laplace_mean).T
        self.log_laplace = -0.5 * np.sum(white**2, axis=0)
        # float32 where the model has a difference form (2.6x faster, the readings equal
        # to 1e-6 relative at 1e5 rows)
        self.log_full = log_joint(data, self.family, self.draws, self.prior_prec,
                                  self.fit_intercept, dtype=np.float32)
        # the weights p_f~ / q behind every reading's second term
        _, self.full_k = pareto_smoothed(self.log_full - self.log_q)

    def _kl(self, log_r):
        log_w, k = pareto_smoothed(log_r - self.log_q)
        w = np.exp(log_w)
        kl = w @ (log_r - self.log_full) + logsumexp(log_w + self.log_full - log_r)
        return ExactReading(max(float(kl), 0.0), max(k, self.full_k))

    def __call__(self, X, y, weights, offset=None):
        """:class:`ExactReading` of the coreset posterior of rows ``X, y`` (with their
        ``offset``) with ``weights``."""
        rows = InMemoryRows(X, y, weights, offset)
        return self._kl(log_joint(rows, self.family, self.draws, self.prior_prec,
                                  self.fit_intercept))

    def laplace(self):
        """:class:`ExactReading` of the full data's Laplace approximation."""
        return self._laplace
