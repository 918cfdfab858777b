"""The exact posterior of all rows, reached from draws of another distribution by importance
weighting.

For draws ``theta_s`` of a distribution ``q`` known up to a constant (``q~``) and the exact
posterior ``p`` known up to a constant (``p~``: prior times the weighted likelihood of every
row), the weights ``p~(theta_s) / q~(theta_s)`` turn expectations under ``q`` into
expectations under ``p``, and

``KL(q || p) = E_q[log q~ - log p~] + log E_q[p~ / q~]``

(the unknown normalising constants cancel). :func:`log_joint` is ``log p~`` of a batch of
draws (one pass over the rows in chunks, a rows x draws block of linear predictors at a time
through BLAS: memory independent of the number of rows); :func:`importance_summary` the
divergence with its standard error, the Pareto-smoothed weights (PSIS, Vehtari et al. 2024,
through ArviZ) with their shape ``k-hat``, their effective sample size and the weighted
posterior moments.
"""

from typing import NamedTuple

import numpy as np
from scipy import sparse

from .._backend import float_rows, row_chunks
from .._psis import psis_log_weights
from .dispersion import LOG_ALPHA_PRIOR_SD
from .potentials import PotentialEvaluator, potential_sums

# Rows x draws of a chunk of rows (32 MB of float64), and of a block of it the kernel works
# on in cache (1 MB of float32)
_CHUNK_ELEMENTS = 2**22
_BLOCK_ELEMENTS = 2**18

# float32 overflows exp() above 88.7: rows whose reference rate or weight is beyond this
# linear predictor are computed in float64
_FLOAT32_ETA_MAX = 80.0


class _LoglikPerAlpha:
    """Kernel of :class:`PotentialEvaluator` for the negative binomial model with one
    overdispersion per draw (picklable, for the tasks of a cluster)."""

    def __init__(self, family, alpha):
        self.family, self.alpha = family, alpha

    def __call__(self, y, eta, scratch):
        eta[...] = self.family.loglik_per_alpha(y, eta, self.alpha)


class _Difference:
    """The kernel ``f_n(eta0_n + delta) - f_n(eta0_n)`` for linear predictors ``delta``
    relative to each row's reference ``eta0_n``, in a form whose rounding error is relative
    to the difference, not to ``f_n`` (so float32 is accurate where a float32
    log-likelihood of large counts is not):

    * logistic, ``z = y eta`` with ``y = +-1``: ``log sigmoid(z0 + y delta) - log sigmoid(z0)
      = -log1p(sigmoid(-z0) expm1(-y delta))``;
    * Poisson, log link: ``y delta - mu0 expm1(delta)``, ``mu0 = exp(eta0)``.

    It works in place on an ``(n, S)`` block, with the per-row constants of
    :meth:`constants`.
    """

    def __init__(self, family):
        self.logistic = family.name == "logistic"

    @classmethod
    def of(cls, family):
        """The difference kernel of ``family``, or None when it has none."""
        if family.name == "logistic" or (family.name == "poisson"
                                         and family.link.name == "log"):
            return cls(family)
        return None

    def constants(self, y, eta0):
        """``(n, 2)`` per-row constants of the kernel at the reference linear predictors."""
        if self.logistic:
            return np.column_stack([-y, np.exp(-np.logaddexp(0.0, y * eta0))])
        return np.column_stack([y, np.exp(eta0)])

    def fits_float32(self, eta0, reach):
        """Whether no value of the kernel overflows float32, for rows whose ``|delta|`` is
        at most ``reach``: ``expm1(+-delta)``, and ``mu0 expm1(delta)`` of counts."""
        top = reach if self.logistic else eta0 + reach
        return bool(np.all(top <= _FLOAT32_ETA_MAX))

    def __call__(self, constants, delta, scratch):
        a, b = constants[:, :1], constants[:, 1:]
        if self.logistic:
            np.multiply(delta, a, out=delta)
            np.expm1(delta, out=delta)
            np.multiply(delta, b, out=delta)
            np.log1p(delta, out=delta)
            np.negative(delta, out=delta)
            return
        tmp = scratch[0]
        np.expm1(delta, out=tmp)
        np.multiply(tmp, b, out=tmp)
        np.multiply(delta, a, out=delta)
        np.subtract(delta, tmp, out=delta)


class _CentredPass:
    """What :func:`centred_sums` needs (picklable, for the tasks of a cluster): the
    ``reference`` draw, the :class:`_Difference` kernel, the ``dtype`` of the differences,
    and the family's float64 kernel (at the reference, and for chunks whose differences
    could overflow float32)."""

    def __init__(self, family, fit_intercept, reference, n_draws, dtype):
        self.reference, self.fit_intercept = reference, fit_intercept
        self.difference = _Difference(family)
        self.dtype = np.dtype(dtype)
        self.at_reference = PotentialEvaluator(family, fit_intercept, 1)
        self.plain = PotentialEvaluator(family, fit_intercept, n_draws)


def _with_ones(X, dtype):
    """``[X, 1]`` in ``dtype``: the intercept inside the product (one pass fewer)."""
    if sparse.issparse(X):
        return sparse.hstack([X, np.ones((X.shape[0], 1))], format="csr", dtype=dtype)
    out = np.empty((X.shape[0], X.shape[1] + 1), dtype=dtype)
    out[:, :-1] = X
    out[:, -1] = 1.0
    return out


def centred_sums(centred, thetas, X, y, w, offset=None):
    """``sum_n w_n f_n(theta_s)`` of some rows for every draw, as a 1-tuple, as
    :func:`~.potentials.potential_sums`, each row's log-likelihood split into its value at
    the reference draw (float64) and the difference to it (in ``centred.dtype``: a chunk's
    differences in one product per cache-sized block of rows, then the kernel in place); a
    chunk where that could overflow is summed in float64."""
    reference, fit_intercept, dtype = centred.reference, centred.fit_intercept, centred.dtype
    deltas = thetas - reference
    spread = np.max(np.abs(deltas), axis=0)
    directions = np.ascontiguousarray(deltas.T, dtype=dtype)  # (p, S), intercept last
    n_draws = len(thetas)
    sums = np.zeros(n_draws)
    out = scratch = None
    for rows in row_chunks(X.shape[0], n_draws, max_elements=_CHUNK_ELEMENTS):
        chunk_offset = None if offset is None else offset[rows]
        X_chunk = float_rows(X[rows])
        y_chunk = np.asarray(y[rows], dtype=float)
        w_chunk = np.asarray(w[rows], dtype=float)
        eta0 = np.asarray(X_chunk @ (reference[:-1] if fit_intercept else reference)).ravel()
        reach = np.asarray(abs(X_chunk) @ (spread[:-1] if fit_intercept else spread)).ravel()
        if fit_intercept:
            eta0, reach = eta0 + reference[-1], reach + spread[-1]
        if chunk_offset is not None:
            eta0 = eta0 + chunk_offset
        if not centred.difference.fits_float32(eta0, reach):
            sums += w_chunk @ centred.plain(X_chunk, y_chunk, thetas, chunk_offset)
            continue
        base = w_chunk @ centred.at_reference(X_chunk, y_chunk, reference[None, :],
                                              chunk_offset)[:, 0]
        constants = centred.difference.constants(y_chunk, eta0).astype(dtype)
        X_chunk = (_with_ones(X_chunk, dtype) if fit_intercept
                   else X_chunk.astype(dtype, copy=False))
        n = X_chunk.shape[0]
        if out is None:
            out = np.empty((n, n_draws), dtype=dtype)
            scratch = np.empty((2, min(n, max(1, _BLOCK_ELEMENTS // n_draws)), n_draws),
                               dtype=dtype)
        for block in row_chunks(n, n_draws, max_elements=_BLOCK_ELEMENTS):
            differences = out[block]
            if sparse.issparse(X_chunk):
                differences[:] = X_chunk[block] @ directions
            else:
                np.matmul(X_chunk[block], directions, out=differences)
            centred.difference(constants[block], differences,
                               scratch[:, :block.stop - block.start])
        sums += base + w_chunk.astype(dtype) @ out[:n]
    return (sums,)


def log_joint(rows, family, thetas, prior_prec, fit_intercept, *, log_alpha=None,
              dtype=np.float64):
    """``log p~(theta_s)``: the log prior plus the weighted log-likelihood of every row, for
    each of S draws, up to a constant that does not depend on the draws.

    Parameters
    ----------
    rows : InMemoryRows or DaskRows
        The rows (an ndarray, a ``np.memmap`` read in chunks, a CSR matrix, or chunks of a
        dask array summed where they live), targets encoded for ``family``, weights and
        offsets.
    family : Family
    thetas : ndarray of shape (S, p)
    prior_prec : ndarray of shape (p,)
        Diagonal precision of the Gaussian prior of theta.
    fit_intercept : bool
    log_alpha : ndarray of shape (S,), default=None
        Draws of ``log alpha`` of the negative binomial model made jointly with ``thetas``:
        each draw's likelihood then has its own overdispersion (normalising terms included)
        and the ``N(0, LOG_ALPHA_PRIOR_SD^2)`` prior of ``log alpha`` is added.
    dtype : {np.float64, np.float32}, default=np.float64
        Precision of the pass over the rows. float32 (about twice as fast) is used for the
        logistic and the log-link Poisson models, as the difference of each row's
        log-likelihood to its value at the draws' mean (computed in float64), in a form
        whose rounding is relative to that difference (:class:`_Difference`); other models,
        and the negative binomial with sampled ``log alpha``, run in float64.

    Returns
    -------
    log_joint : ndarray of shape (S,)
    """
    thetas = np.ascontiguousarray(thetas, dtype=float)
    kernel = None if log_alpha is None else _LoglikPerAlpha(family, np.exp(log_alpha))
    if np.dtype(dtype) != np.float64 and kernel is None and _Difference.of(family):
        # differences to a central draw: rounding relative to them, not to the loglik
        function, evaluator = centred_sums, _CentredPass(
            family, fit_intercept, thetas.mean(axis=0), len(thetas), dtype)
    else:  # no difference form: float64
        function, evaluator = potential_sums, PotentialEvaluator(
            family, fit_intercept, len(thetas), kernel=kernel)
    loglik = rows.sum(function, evaluator, thetas)[0]
    out = loglik - 0.5 * (thetas**2) @ prior_prec
    if log_alpha is not None:
        out -= 0.5 * (np.asarray(log_alpha) / LOG_ALPHA_PRIOR_SD) ** 2
    return out


def pareto_smoothed(log_ratios, r_eff=1.0):
    """Pareto-smoothed log importance weights in the draws' order, normalised, and the shape
    ``k-hat`` of the generalized Pareto distribution fitted to the largest weights (Vehtari
    et al. 2024), by the package's PSIS (:func:`~skcoreset._psis.psis_log_weights`, the
    estimates of ArviZ 0.x's ``psislw``; no optional dependency).

    Equal ratios (``q`` is ``p``) have no tail: ``k-hat = -inf`` and equal weights.
    Fewer than five draws in the tail (fewer than about 25 draws) give ``k-hat = inf``.
    """
    log_ratios = np.asarray(log_ratios, dtype=float)
    n = len(log_ratios)
    finite = log_ratios[np.isfinite(log_ratios)]
    if finite.size == n and np.ptp(log_ratios) <= 1e-12 * max(1.0, np.max(np.abs(finite))):
        return np.full(n, -np.log(n)), -np.inf
    order = np.argsort(log_ratios)
    sorted_weights, k, _ = psis_log_weights(log_ratios[order][None, :], r_eff)
    smoothed = np.empty(n)
    smoothed[order] = sorted_weights[0]
    return smoothed, float(k[0])


class ImportanceSummary(NamedTuple):
    """What :func:`importance_summary` returns (see there)."""

    kl: float
    kl_se: float
    pareto_k: float
    ess: float
    mean: np.ndarray
    sd: np.ndarray
    proposal_mean: np.ndarray
    log_ratio_range: float
    log_weights: np.ndarray


def importance_summary(draws, log_q, log_p, r_eff=1.0):
    """``KL(q || p)`` from draws of ``q``, and the exact posterior's moments by weighting.

    ``KL = -mean(l) + log mean(exp(l))`` with the log ratios ``l_s = log p~ - log q~``; its
    standard error is the delta method's, ``sd(z) / sqrt(S r_eff)`` with the influence
    values ``z_s = -l_s + exp(l_s) / mean(exp(l))``. The weighted mean and sd use the
    Pareto-smoothed normalised weights (:func:`pareto_smoothed`), and ``ess = 1 /
    sum(w_s^2)`` of them.

    Parameters
    ----------
    draws : ndarray of shape (S, p)
        Draws of ``q``.
    log_q, log_p : ndarray of shape (S,)
        ``log q~`` and ``log p~`` at the draws, each up to a constant.
    r_eff : float, default=1.0
        Effective sample size of the draws relative to S (1 for independent draws).

    Returns
    -------
    ImportanceSummary
        ``(kl, kl_se, pareto_k, ess, mean, sd, proposal_mean, log_ratio_range,
        log_weights)``: ``proposal_mean`` is the draws' own mean, ``log_ratio_range`` the
        largest log ratio minus the smallest (``log`` of the largest weight over the
        smallest), ``log_weights`` the normalised Pareto-smoothed log weights of the draws.
    """
    draws = np.asarray(draws, dtype=float)
    log_ratio = np.asarray(log_p, dtype=float) - np.asarray(log_q, dtype=float)
    if np.any(np.isnan(log_ratio)) or np.any(log_ratio == np.inf):
        raise FloatingPointError("The log density ratios of the draws are NaN or infinite.")
    n = len(log_ratio)
    top = np.max(log_ratio)
    if top == -np.inf:
        raise FloatingPointError("The exact posterior density is 0 at every draw.")
    scaled = np.exp(log_ratio - top)
    mean_scaled = scaled.mean()
    with np.errstate(invalid="ignore"):
        kl = float(-np.mean(log_ratio) + top + np.log(mean_scaled))
        influence = -log_ratio + scaled / mean_scaled
        kl_se = float(np.std(influence, ddof=1) / np.sqrt(n * r_eff))
    log_weights, pareto_k = pareto_smoothed(log_ratio, r_eff)
    weights = np.exp(log_weights)
    mean = weights @ draws
    sd = np.sqrt(np.maximum(weights @ (draws - mean) ** 2, 0.0))
    return ImportanceSummary(kl=max(kl, 0.0), kl_se=kl_se,  # >= 0 by Jensen, but rounding
                             pareto_k=pareto_k, ess=float(1.0 / np.sum(weights**2)),
                             mean=mean, sd=sd, proposal_mean=draws.mean(axis=0),
                             log_ratio_range=float(top - np.min(log_ratio)),
                             log_weights=log_weights)
