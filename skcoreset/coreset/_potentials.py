"""Potentials ``f_n(theta) = log p(y_n | x_n, theta)`` of many rows at many parameter draws.

The N x S potentials behind every Monte Carlo coreset construction are one matrix product of
the rows with the draws followed by one elementwise kernel, written into reused buffers and
processed in row blocks so the scratch memory stays bounded whatever N.
"""

import numpy as np

from .._backend import row_chunks
from ..families import GaussianFamily, LogisticFamily, PoissonFamily

# Rows x draws per block of the potential kernel: bounds the scratch memory for large N.
_BLOCK_ELEMENTS = 65536
_SOFTPLUS_LOG_CUTOFF = -35.0


def _logistic_potential(y, eta, scratch):
    """In place: ``eta <- log sigmoid(y eta) = min(z, 0) - log1p(exp(-|z|))``, ``z = y eta``.

    Built from SIMD numpy ufuncs (``scipy.special.log_expit`` is a scalar loop, ~10x slower).
    """
    tmp = scratch[0]
    np.multiply(eta, y[:, None], out=eta)
    np.abs(eta, out=tmp)
    np.negative(tmp, out=tmp)
    np.exp(tmp, out=tmp)
    np.log1p(tmp, out=tmp)
    np.minimum(eta, 0.0, out=eta)
    np.subtract(eta, tmp, out=eta)


def _poisson_softplus_potential(y, eta, scratch):
    """In place: ``eta <- y log(softplus(eta)) - softplus(eta)`` (``-log y!`` dropped)."""
    rate, log_rate = scratch
    np.abs(eta, out=rate)
    np.negative(rate, out=rate)
    np.exp(rate, out=rate)
    np.log1p(rate, out=rate)
    np.maximum(eta, 0.0, out=log_rate)
    rate += log_rate
    with np.errstate(divide="ignore"):
        np.log(rate, out=log_rate)
    far_left = eta < _SOFTPLUS_LOG_CUTOFF
    if far_left.any():  # softplus(eta) = exp(eta) to double precision, even past underflow
        np.copyto(log_rate, eta, where=far_left)
    np.multiply(log_rate, y[:, None], out=eta)
    np.subtract(eta, rate, out=eta)


def _poisson_log_potential(y, eta, scratch):
    """In place: ``eta <- y eta - exp(eta)`` (``-log y!`` dropped)."""
    rate = scratch[0]
    np.minimum(eta, 500.0, out=rate)
    np.exp(rate, out=rate)
    np.multiply(eta, y[:, None], out=eta)
    np.subtract(eta, rate, out=eta)


def _gaussian_potential(precision):
    def potential(y, eta, scratch):
        """In place: ``eta <- -precision (y - eta)^2 / 2`` (normaliser dropped)."""
        np.subtract(eta, y[:, None], out=eta)
        np.square(eta, out=eta)
        np.multiply(eta, -0.5 * precision, out=eta)
    return potential


def _generic_potential(family):
    def potential(y, eta, scratch):
        eta[...] = family.loglik(y, eta)
    return potential


def potential_kernel(family):
    """Elementwise potential ``f(y, eta)``, in place on an ``(n, S)`` block of predictors.

    Exact up to a per-row constant: only centred potentials enter Algorithm 1 (eq. 20), so
    ``log y!`` and Gaussian normalisers are dropped. Known families get a kernel built from
    vectorised ufuncs working in two scratch buffers; any other family falls back to
    ``family.loglik``.

    Returns
    -------
    kernel : callable
        ``kernel(y, eta, scratch)`` overwrites ``eta`` of shape (n, S) with the potentials of
        targets ``y`` of shape (n,); ``scratch`` is a pair of arrays shaped like ``eta``.
    """
    if isinstance(family, LogisticFamily):
        return _logistic_potential
    if isinstance(family, PoissonFamily):
        if family.link_name == "softplus":
            return _poisson_softplus_potential
        return _poisson_log_potential
    if isinstance(family, GaussianFamily):
        return _gaussian_potential(1.0 / family.noise_scale**2)
    return _generic_potential(family)


class PotentialEvaluator:
    """``f_n(theta_s)`` for a block of rows and S draws, into reused buffers.

    The linear predictors of a block are one BLAS product written straight into the output,
    and the kernel works in place with two preallocated scratch blocks, so a call allocates
    nothing large (fresh multi-megabyte temporaries cost page faults on every call).

    Parameters
    ----------
    family : Family
    fit_intercept : bool
    n_draws : int
        Number S of draws per call.
    block_elements : int, default=65536
        Rows x draws per block; bounds the scratch memory for large N.
    """

    def __init__(self, family, fit_intercept, n_draws, block_elements=_BLOCK_ELEMENTS):
        self.kernel = potential_kernel(family)
        self.fit_intercept = fit_intercept
        self.block = max(1, block_elements // n_draws)
        self._out = np.empty((0, n_draws))
        self._scratch = np.empty((2, self.block, n_draws))

    def __call__(self, X, y, thetas):
        """Potentials of shape ``(n, S)``; a view of an internal buffer, valid until the
        next call."""
        n = X.shape[0]
        if self._out.shape[0] < n:
            self._out = np.empty((n, thetas.shape[0]))
        out = self._out[:n]
        if self.fit_intercept:
            coef, intercept = thetas[:, :-1], thetas[:, -1]
        else:
            coef, intercept = thetas, None
        for rows in row_chunks(n, max_elements=self.block):  # blocks of self.block rows
            eta = out[rows]
            np.matmul(X[rows], coef.T, out=eta)
            if intercept is not None:
                eta += intercept
            self.kernel(y[rows], eta, self._scratch[:, :rows.stop - rows.start])
        return out
