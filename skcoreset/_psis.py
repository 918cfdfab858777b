"""Pareto-smoothed importance sampling leave-one-out cross-validation (PSIS-LOO; Vehtari,
Gelman and Gabry, 2017), for many rows at once: the same estimates as ArviZ's ``loo``,
computed block of rows by block of rows, so that no draws-by-rows array of all rows is
ever held."""

from typing import NamedTuple

import numpy as np
from scipy.special import logsumexp

# Prior of the empirical Bayes fit of the generalized Pareto tail (Zhang and Stephens,
# 2009, as ArviZ and the loo R package use it): the scale of b's grid, and a weak prior
# pulling k towards 0.5 worth this many observations.
_PRIOR_BS = 3
_PRIOR_K = 10
_TINY_LOG = np.log(np.finfo(float).tiny)
_EPS = np.finfo(float).eps


def _logsumexp_rows(a):
    """``log sum_j exp(a_ij)`` of each row (scipy's ``logsumexp`` along axis 1, without
    its checks: several times faster on many rows)."""
    top = np.max(a, axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(divide="ignore"):
        return np.log(np.sum(np.exp(a - top), axis=1)) + top[:, 0]


def tail_length(n_draws, reff=1.0):
    """The number of largest importance ratios fitted by the Pareto tail:
    ``ceil(min(S / 5, 3 sqrt(S / reff)))``."""
    return int(np.ceil(min(n_draws / 5.0, 3 * (n_draws / reff) ** 0.5)))


def _gpd_fit(tails):
    """Empirical Bayes estimates ``(k, sigma)`` of the generalized Pareto distribution of
    each row of ``tails`` (sorted ascending, positive), vectorised over rows."""
    n = tails.shape[1]
    m = 30 + int(n**0.5)
    b = 1 - np.sqrt(m / (np.arange(1, m + 1, dtype=float) - 0.5))
    b = b[None, :] / (_PRIOR_BS * tails[:, int(n / 4 + 0.5) - 1])[:, None]
    b += 1 / tails[:, -1:]
    k = np.log1p(-b[:, :, None] * tails[:, None, :]).mean(axis=2)  # (rows, m)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        length = n * (np.log(-(b / k)) - k - 1)
        weights = 1 / np.exp(length[:, None, :] - length[:, :, None]).sum(axis=2)
    weights = np.where(weights >= 10 * _EPS, weights, 0.0)  # negligible weights dropped
    weights /= weights.sum(axis=1, keepdims=True)
    b_post = np.sum(b * weights, axis=1)
    k_post = np.log1p(-b_post[:, None] * tails).mean(axis=1)
    sigma = -k_post / b_post
    return (n * k_post + _PRIOR_K * 0.5) / (n + _PRIOR_K), sigma


def _gpd_quantiles(n, k, sigma):
    """The ``(i - 1/2) / n`` quantiles of the generalized Pareto distributions ``(k,
    sigma)`` of each row (NaN where ``sigma <= 0``)."""
    log1m = np.log1p(-np.arange(0.5, n) / n)[None, :]
    small = np.abs(k) < _EPS
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(small[:, None], -log1m,
                     np.expm1(-k[:, None] * log1m) / np.where(small, 1.0, k)[:, None])
    return np.where(sigma[:, None] > 0, x * sigma[:, None], np.nan)


def _smooth_row(x, cutoff_index):
    """PSIS of one row of log ratios (minus their maximum): its log weights (normalised)
    and Pareto k, ArviZ's ``_psislw`` (for the rows whose tail is not exactly the
    largest ``tail_length`` ratios: ties at the cut-off, or a cut-off below ``tiny``)."""
    x = x.copy()
    order = np.argsort(x)
    cutoff = max(x[order[cutoff_index]], _TINY_LOG)
    tail = np.flatnonzero(x > cutoff)
    k = np.inf
    if len(tail) > 4:
        tail = tail[np.argsort(x[tail])]
        k_row, sigma = _gpd_fit((np.exp(x[tail]) - np.exp(cutoff))[None, :])
        k = float(k_row[0])
        if np.isfinite(k):
            smoothed = _gpd_quantiles(len(tail), k_row, sigma)[0]
            x[tail] = np.log(smoothed + np.exp(cutoff))
            x[x > 0] = 0
    return x - logsumexp(x), k


def psis_log_weights(log_ratios, reff=1.0):
    """Pareto-smoothed log importance weights of each row, and each row's Pareto k.

    Parameters
    ----------
    log_ratios : ndarray of shape (n_rows, n_draws)
        Log importance ratios (``-log p(y_n | theta_s)`` for leave-one-out).
    reff : float, default=1.0
        Relative effective sample size of the draws (1 for independent draws).

    Returns
    -------
    log_weights : ndarray of shape (n_rows, n_draws)
        Smoothed, normalised log weights, in the order of each row's ascending ratios.
    k : ndarray of shape (n_rows,)
        Estimated Pareto shape of each row's tail (inf where it has at most 4 draws).
    sorted_ratios : ndarray of shape (n_rows, n_draws)
        Each row's log ratios in ascending order (that of ``log_weights``).
    """
    n_rows, n_draws = log_ratios.shape
    sorted_ratios = np.sort(log_ratios, axis=1)
    x = sorted_ratios - sorted_ratios[:, -1:]
    m = tail_length(n_draws, reff)
    cutoff_index = -m - 1
    k = np.full(n_rows, np.inf)
    if m < n_draws and m > 4:
        cutoff = x[:, cutoff_index]
        # the rows whose tail is exactly their m largest ratios, fitted together
        regular = (cutoff >= _TINY_LOG) & (x[:, -m] > cutoff)
        regular_rows = np.flatnonzero(regular)
        # the fits' temporaries hold rows x (30 + sqrt(m)) x m values: at most 2**21
        step = max(1, 2**21 // ((30 + int(m**0.5)) * m))
        for start in range(0, regular_rows.size, step):
            rows = regular_rows[start:start + step]
            cut = np.exp(cutoff[rows])[:, None]
            k_rows, sigma = _gpd_fit(np.exp(x[rows, -m:]) - cut)
            fitted = np.isfinite(k_rows)
            smoothed = np.log(_gpd_quantiles(m, k_rows, sigma) + cut)
            tails = x[rows, -m:]
            tails[fitted] = np.minimum(smoothed[fitted], 0.0)
            x[rows, -m:] = tails
            k[rows] = k_rows
        x[regular_rows] -= _logsumexp_rows(x[regular_rows])[:, None]
        for row in np.flatnonzero(~regular):
            x[row], k[row] = _smooth_row(x[row], cutoff_index)
    else:
        for row in range(n_rows):
            x[row], k[row] = _smooth_row(x[row], cutoff_index)
    return x, k, sorted_ratios


class LooResult(NamedTuple):
    """PSIS-LOO estimate of the expected log pointwise predictive density (the names of
    ArviZ's ``ELPDData``).

    Attributes
    ----------
    elpd_loo : float
        ``sum_n log p(y_n | y_-n)``, estimated.
    se : float
        Its standard error, ``sqrt(n var(loo_i))``.
    p_loo : float
        The effective number of parameters: ``lppd - elpd_loo``.
    n_samples : int
        The posterior draws used.
    n_data_points : int
        The rows.
    warning : bool
        Whether a Pareto k exceeds ``good_k`` (the estimate of those rows is unreliable).
    loo_i : ndarray of shape (n_data_points,)
        Each row's ``log p(y_n | y_-n)``.
    pareto_k : ndarray of shape (n_data_points,)
        Each row's Pareto k.
    good_k : float
        ``min(1 - 1 / log10(n_samples), 0.7)``.
    """

    elpd_loo: float
    se: float
    p_loo: float
    n_samples: int
    n_data_points: int
    warning: bool
    loo_i: np.ndarray
    pareto_k: np.ndarray
    good_k: float


class LooSums:
    """PSIS-LOO accumulated block of rows by block of rows (:meth:`add`), finished by
    :meth:`result`; the blocks of two sums add up (``+``) in any order, each placed by the
    number of its first row."""

    def __init__(self, n_draws, reff=1.0):
        self.n_draws, self.reff = n_draws, reff
        self.blocks = []  # (first row, loo_i, lppd_i, k) of each block

    def add(self, loglik, start=0):
        """Add the rows of ``loglik``, ``log p(y_n | theta_s)`` of shape (rows, draws), the
        first of which is row ``start``."""
        log_weights, k, sorted_ratios = psis_log_weights(-loglik, self.reff)
        self.blocks.append((start, _logsumexp_rows(log_weights - sorted_ratios),
                            _logsumexp_rows(-sorted_ratios) - np.log(self.n_draws), k))

    def __add__(self, other):
        """The blocks of both (the sums of tasks over chunks, in any order)."""
        both = LooSums(self.n_draws, self.reff)
        both.blocks = self.blocks + other.blocks
        return both

    def result(self):
        blocks = sorted(self.blocks, key=lambda block: block[0])
        loo_i, lppd_i, k = (np.concatenate([block[i] for block in blocks]) for i in (1, 2, 3))
        n = len(loo_i)
        good_k = min(1 - 1 / np.log10(self.n_draws), 0.7)
        elpd = float(loo_i.sum())
        return LooResult(elpd, float((n * np.var(loo_i)) ** 0.5),
                         float(lppd_i.sum() - elpd), self.n_draws, n,
                         bool(np.any(k > good_k)), loo_i, k, good_k)
