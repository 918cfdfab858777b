"""Pieces shared by the inference methods: the Gaussian prior and the weighted log posterior."""

import copy
from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import numpy as np
from scipy.sparse import issparse

from .._backend import InMemoryRows, float_rows, row_chunks, row_slice, row_width
from .._design import (accumulates_rmatvec, add_rmatvec, add_scaled_gram, add_sparse_gram,
                       block_rows, linear_predictor, n_params, rmatvec, sparse_block_rows,
                       split_theta, weighted_gram)
from .._linalg import cholesky_logdet


def prior_precision(n_features, *, prior_scale, intercept_prior_scale, fit_intercept):
    """Diagonal of the prior precision of ``theta = [coef..., intercept]``.

    The prior is ``N(0, prior_scale^2 I)`` on the coefficients and, independently,
    ``N(0, intercept_prior_scale^2)`` on the intercept.
    """
    diag = np.full(n_params(n_features, fit_intercept), prior_scale**-2.0)
    if fit_intercept:
        diag[-1] = intercept_prior_scale**-2.0
    return diag


@dataclass
class InferenceResult:
    """What an inference function returns.

    Attributes
    ----------
    posterior : GaussianPosterior or SamplePosterior
        The fitted posterior over ``theta``.
    n_iter : int
        Iterations (Newton steps, proximal steps, MCMC steps) run.
    converged : bool
        Whether the stopping criterion was met before the iteration cap.
    log_evidence : float or None
        Estimate of the log marginal likelihood, where the method gives one.
    elbo : float or None
        Evidence lower bound at the end, for variational methods.
    extra : dict
        Method-specific diagnostics.
    """

    posterior: object
    n_iter: int
    converged: bool
    log_evidence: float | None = None
    elbo: float | None = None
    extra: dict = field(default_factory=dict)


class LogPosterior:
    """Unnormalised weighted log posterior of a GLM under a diagonal Gaussian prior.

    ``log p(theta | data) = sum_n w_n log p(y_n | a_n . theta) - theta^T P theta / 2 + const``
    with design rows ``a_n = [x_n, 1]`` (or ``x_n`` without intercept).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
        Non-negative multipliers of each point's log-likelihood.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision.
    fit_intercept : bool
    offset : ndarray of shape (n,), default=None
        A known term added to each row's linear predictor, ``eta_n = a_n . theta + o_n``
        (the log exposure of counts).
    loglik_constant : float, default=None
        ``sum_n w_n c(y_n)`` of the family's ``eta``-free terms when the caller knows it
        (e.g. summed over the distinct targets); computed from the rows otherwise.
    """

    def __init__(self, X, y, family, sample_weight, prior_prec, fit_intercept, offset=None,
                 loglik_constant=None):
        self.X = X
        self.y = y
        self.family = family
        self.sample_weight = sample_weight
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept
        self.offset = offset
        if loglik_constant is not None:
            self._loglik_constant = float(loglik_constant)
        self._mixed = None  # a MixedProducts, set by mixed_precision

    def mixed_precision(self, theta, mixed=None):
        """This log posterior with the products of :meth:`value_and_grad` in single
        precision about ``theta`` (:class:`MixedProducts`; ``mixed`` an existing one to
        share), or itself when X is not a dense float64 array in memory."""
        if mixed is None:
            mixed = MixedProducts.about(self, theta)
            if mixed is None:
                return self
        other = copy.copy(self)
        other._mixed = mixed
        return other

    @property
    def n_rows(self):
        return len(self.y)

    @property
    def total_weight(self):
        return self.sample_weight.sum()

    def mean_target(self):
        """Weighted mean of the encoded targets."""
        return np.average(self.y, weights=self.sample_weight)

    def mean_offset(self):
        """Weighted mean of the offsets (0 without)."""
        return 0.0 if self.offset is None else np.average(self.offset,
                                                          weights=self.sample_weight)

    def thinned(self, stride):
        """The log posterior of every ``stride``-th row, reweighted to the total weight of
        all rows (a contiguous copy: products with a strided view would copy it every
        time); None when those rows carry no weight."""
        rows = slice(0, None, stride)
        weight = self.sample_weight[rows]
        total = weight.sum()
        if total <= 0:
            return None
        X = float_rows(self.X[rows]) if issparse(self.X) else np.ascontiguousarray(self.X[rows])
        return LogPosterior(X, self.y[rows], self.family,
                            weight * (self.total_weight / total), self.prior_prec,
                            self.fit_intercept,
                            None if self.offset is None else self.offset[rows])

    def eta(self, theta):
        eta = linear_predictor(self.X, theta, self.fit_intercept)
        if self.offset is None:
            return eta
        return eta + (self.offset if eta.ndim == 1 else self.offset[:, None])

    def loglik(self, theta, eta=None):
        """Weighted log-likelihood; theta (p,) -> float, theta (S, p) -> (S,)."""
        eta = self.eta(theta) if eta is None else eta
        return self.sample_weight @ self.family.loglik(self.y, eta)

    def log_prior(self, theta):
        """Unnormalised log prior ``-theta^T P theta / 2``."""
        return -0.5 * np.sum(self.prior_prec * np.asarray(theta) ** 2, axis=-1)

    def value(self, theta, eta=None):
        return self.loglik(theta, eta) + self.log_prior(theta)

    def grad(self, theta, eta):
        r = self.sample_weight * self.family.d1(self.y, eta)
        return rmatvec(self.X, r, self.fit_intercept) - self.prior_prec * theta

    def value_and_grad(self, theta, rows_per_block=None, neg_hessian=None):
        """``(value, eta, grad)`` at ``theta`` in one pass over blocks of rows of X: each
        block serves both the linear predictors and the gradient while in cache (half the
        memory traffic of :meth:`eta` followed by :meth:`grad`). The family's terms come
        from one evaluation per block (``family.loglik_and_derivatives``) and its
        ``eta``-free terms are summed once per data set. ``rows_per_block`` defaults to
        :func:`~skcoreset._design.block_rows` of the design's width (for a sparse X,
        :func:`~skcoreset._design.sparse_block_rows`: its products stream through the
        nonzeros whatever the rows, and blocks bound the per-row temporaries).

        With ``neg_hessian=np.float64``, ``(value, eta, grad, neg_hessian)``: the exact
        :meth:`neg_hessian` at ``theta`` from the same pass (its Gram's block products while
        each block is in cache), saving the separate pass over X; with ``np.float32``, the
        single-precision approximation of ``neg_hessian(eta, dtype=np.float32)``.
        """
        coef, intercept = split_theta(theta, self.fit_intercept)
        n, d = self.X.shape
        mixed = self._mixed if neg_hessian is None else None
        if mixed is not None:
            step = (coef - mixed.coef).astype(np.float32)
        if rows_per_block is None:
            rows_per_block = (sparse_block_rows(self.X) if issparse(self.X)
                              else block_rows(len(self.prior_prec)))
        eta = np.empty(n)
        # a CSR X's gradient accumulates over its blocks with the bits of one product with
        # the whole matrix (add_rmatvec); another sparse X's is that product with the rows'
        # residuals (scipy copies a block's rows to transpose them)
        blocked_rmatvec = accumulates_rmatvec(self.X)
        resid = np.empty(n) if issparse(self.X) and not blocked_rmatvec else None
        loglik = 0.0
        grad_x = np.zeros(d)
        grad_1 = 0.0
        if neg_hessian is not None:
            p = len(self.prior_prec)
            gram = np.zeros((p, p))
            buffer = (None if issparse(self.X)
                      else np.empty((min(rows_per_block, n), p), dtype=neg_hessian))
        for start in range(0, n, rows_per_block):
            rows = slice(start, start + rows_per_block)
            X = row_slice(self.X if mixed is None else mixed.X, rows)
            eta_b = eta[rows]
            if mixed is not None:
                np.add(mixed.eta[rows], X @ step, out=eta_b)
            elif issparse(X):
                eta_b[:] = X @ coef
            else:
                np.dot(X, coef, out=eta_b)
            eta_b += intercept
            if self.offset is not None:
                eta_b += self.offset[rows]
            y, w = self.y[rows], self.sample_weight[rows]
            terms = self.family.loglik_and_derivatives(y, eta_b,
                                                       second=neg_hessian is not None)
            loglik += w @ terms[0]
            r = w * terms[1]
            if blocked_rmatvec:
                add_rmatvec(grad_x, X, r)
            elif resid is not None:
                resid[rows] = r
            elif mixed is None:
                grad_x += X.T @ r
            else:
                grad_x += X.T @ (r - mixed.r[rows]).astype(np.float32)
            grad_1 += r.sum()
            if neg_hessian is not None:
                c = -w * terms[2]
                add_scaled_gram(gram, buffer, X, np.sqrt(np.maximum(c, 0.0)),
                                self.fit_intercept)
        if mixed is not None:
            grad_x += mixed.grad
        if resid is not None:
            grad_x = np.asarray(self.X.T @ resid)
        grad = np.append(grad_x, grad_1) if self.fit_intercept else grad_x
        out = (loglik + self._loglik_constant + self.log_prior(theta), eta,
               grad - self.prior_prec * theta)
        if neg_hessian is not None:
            if not np.all(np.isfinite(gram)):  # float32 overflow (huge X), or NaN in X
                gram = self.neg_hessian(eta)
            else:
                gram[np.diag_indices_from(gram)] += self.prior_prec
            out += (gram,)
        return out

    @cached_property
    def _loglik_constant(self):
        """``sum_n w_n c(y_n)`` of the log-likelihood's ``eta``-free terms
        (``family.loglik_constant``): computed once, not in every pass of
        :meth:`value_and_grad`."""
        return float(self.sample_weight @ self.family.loglik_constant(self.y))

    def neg_hessian(self, eta, dtype=np.float64):
        """``-d^2 log posterior / d theta^2``: the Laplace precision at ``theta``; with
        ``dtype=np.float32`` an approximation from single-precision Grams (for Newton steps
        only, see :func:`~skcoreset._design.weighted_gram`)."""
        if issparse(self.X):
            # weighted_gram's blocks, with each block's curvature and rows shared with X
            # (no curvature of all rows, no copy of a block)
            p = len(self.prior_prec)
            H = np.zeros((p, p))
            for rows in self._sparse_blocks():
                add_sparse_gram(H, row_slice(self.X, rows), self._curvature(eta, rows),
                                self.fit_intercept)
        else:
            H = weighted_gram(self.X, self._curvature(eta), self.fit_intercept, dtype=dtype)
        H[np.diag_indices_from(H)] += self.prior_prec
        return H

    def _curvature(self, eta, rows=slice(None)):
        """Each row's weight in the Hessian, ``c_n = -w_n d2_n >= 0``: ``H = A^T C A + P``
        (of the ``rows``)."""
        return np.maximum(-self.sample_weight[rows] * self.family.d2(self.y[rows], eta[rows]),
                          0.0)

    def _sparse_blocks(self):
        """The row slices of a blocked pass over a sparse X (:func:`sparse_block_rows`)."""
        n = self.X.shape[0]
        size = sparse_block_rows(self.X)
        return [slice(start, min(start + size, n)) for start in range(0, n, size)]

    @property
    def cheap_products(self):
        """Whether a product with the Hessian costs far less than the Hessian: for sparse
        rows, a product is two passes over the nonzeros, the Hessian a sum over every pair of
        nonzeros in each row and a ``p x p`` factorisation."""
        return issparse(self.X)

    def neg_hessian_product(self, eta):
        """The function ``v -> H v`` for :meth:`neg_hessian` ``H`` at ``eta``, by two
        products with X (``H`` is never formed)."""
        if not issparse(self.X):
            c = self._curvature(eta)

            def product(v):
                latent = linear_predictor(self.X, v, self.fit_intercept)
                return rmatvec(self.X, c * latent, self.fit_intercept) + self.prior_prec * v
            return product
        # the curvature by row blocks (a block's temporaries): one vector of all rows
        blocks = self._sparse_blocks()
        c = np.empty(self.X.shape[0])
        for rows in blocks:
            c[rows] = self._curvature(eta, rows)
        if not accumulates_rmatvec(self.X):
            def sparse_product(v):
                # scipy copies a block's rows to transpose them: products with all of X
                latent = linear_predictor(self.X, v, self.fit_intercept)
                latent *= c
                return rmatvec(self.X, latent, self.fit_intercept) + self.prior_prec * v
            return sparse_product

        def blocked_product(v):
            # each product's latent values by row blocks, their sum over X's columns
            # accumulated (add_rmatvec): no second vector of all rows
            coef, intercept = split_theta(v, self.fit_intercept)
            out = np.zeros(self.X.shape[1])
            total = 0.0
            for rows in blocks:
                X = row_slice(self.X, rows)
                latent = X @ coef
                latent += intercept
                latent *= c[rows]
                add_rmatvec(out, X, latent)
                total += latent.sum()
            if self.fit_intercept:
                out = np.append(out, total)
            return out + self.prior_prec * v
        return blocked_product

    def log_prior_normaliser(self):
        """``log`` of the prior's normalising constant (:func:`prior_log_normaliser`)."""
        return prior_log_normaliser(self.prior_prec)


# The rows of X (float64 bytes) from which MixedProducts pay: below, X stays in the cache
# between passes and a float64 pass is not bound by memory traffic; above 2 GiB the float32
# copy is not made.
_MIN_MIXED_BYTES = 2**23
_MAX_MIXED_BYTES = 2**31


class MixedProducts(NamedTuple):
    """Single-precision products of a blocked pass about a reference point ``theta_0``.

    ``X theta = X coef_0 + X (coef - coef_0)`` and ``X^T r = X^T r_0 + X^T (r - r_0)``
    hold for any ``coef_0`` and ``r_0``: the first terms are computed once in float64, the
    second at every pass from a float32 copy of X, in which a product costs about a third of
    the time (half the memory traffic, twice the SIMD width). Rounding to float32 is then
    relative to the small differences from the reference, not to the linear predictors and
    the sum of the gradient's terms, which cancel near the mode: at a NUTS draw, where
    ``coef - coef_0`` is of the posterior's scale, the log posterior changes by about
    ``1e-7`` nats per row's ``|x . (coef - coef_0)|`` and the gradient by about ``1e-6`` of
    its scale -- a fixed, deterministic perturbation of the target far below its Monte
    Carlo error, under which the leapfrog stays reversible and volume-preserving. For the
    sampler's passes (no Hessian)."""

    X: np.ndarray  # float32 copy of the rows
    coef: np.ndarray  # coef_0
    eta: np.ndarray  # X coef_0, float64
    r: np.ndarray  # r_0 = w d1(eta_0), float64
    grad: np.ndarray  # X^T r_0, float64

    @classmethod
    def about(cls, log_post, theta):
        """The products about ``theta`` of a :class:`LogPosterior`, or None when its X is not
        a dense float64 array in memory (sparse, a memmap, another dtype), holds fewer than
        ``_MIN_MIXED_BYTES`` or more than ``_MAX_MIXED_BYTES``, or overflows float32."""
        X = log_post.X
        if (not isinstance(X, np.ndarray) or X.dtype != np.float64 or X.ndim != 2
                or not _MIN_MIXED_BYTES <= X.nbytes <= _MAX_MIXED_BYTES
                or InMemoryRows(X, log_post.y, log_post.sample_weight).file_backed):
            return None
        return cls.of(log_post, theta)

    @classmethod
    def of(cls, log_post, theta):
        """The products about ``theta`` of a :class:`LogPosterior` of dense float64 rows
        whatever their size (a chunk's, on a cluster), or None when X overflows float32 or
        a residual is not finite."""
        X = log_post.X
        with np.errstate(over="ignore"):
            X32 = X.astype(np.float32)
        if not np.all(np.isfinite(X32)):
            return None
        coef, intercept = split_theta(theta, log_post.fit_intercept)
        eta = X @ coef
        # the reference's linear predictors from eta (log_post.eta would multiply X again)
        full = eta + intercept
        if log_post.offset is not None:
            full += log_post.offset
        r = log_post.sample_weight * log_post.family.d1(log_post.y, full)
        if not np.all(np.isfinite(r)):
            return None
        return cls(X32, np.array(coef), eta, r, X.T @ r)


class _Sums(NamedTuple):
    """The sums over rows of the weighted log-likelihood at ``theta``: the state of a point
    of a :class:`ChunkedLogPosterior` (the linear predictors stay where the rows are), with
    minus its exact Hessian when the pass computed it."""

    theta: np.ndarray
    loglik: float
    grad: np.ndarray
    neg_hessian: np.ndarray | None = None


def _loglik_sums(family, theta, fit_intercept, neg_hessian, X, y, sample_weight,
                 offset=None):
    """Weighted log-likelihood of some rows (with their offsets), its gradient and, with
    ``neg_hessian`` (a dtype), minus its Hessian: :meth:`LogPosterior.value_and_grad`
    without the prior (the task of one chunk), in row chunks (no linear predictor of all
    the rows is held)."""
    no_prior = np.zeros(len(theta))
    total = None
    for rows in row_chunks(len(y), row_width(X) + 1):
        out = LogPosterior(X[rows], y[rows], family, sample_weight[rows], no_prior,
                           fit_intercept, None if offset is None else offset[rows],
                           ).value_and_grad(theta, neg_hessian=neg_hessian)
        sums = (out[0], out[2]) + out[3:]
        total = sums if total is None else tuple(a + b for a, b in zip(total, sums))
    return total


def _mixed_chunk(family, theta, fit_intercept, X, y, sample_weight, offset=None):
    """:class:`MixedProducts` of some rows about ``theta`` (what a worker keeps beside its
    chunk for :func:`_mixed_loglik_sums`)."""
    return MixedProducts.of(LogPosterior(X, y, family, sample_weight, np.zeros(len(theta)),
                                         fit_intercept, offset), theta)


def _mixed_loglik_sums(family, theta, fit_intercept, mixed, X, y, sample_weight,
                       offset=None):
    """:func:`_loglik_sums` (no Hessian) with the products of ``mixed`` (the rows'
    :class:`MixedProducts`; None: float64 products, for rows whose copy overflowed)."""
    if mixed is None:
        return _loglik_sums(family, theta, fit_intercept, None, X, y, sample_weight, offset)
    out = LogPosterior(X, y, family, sample_weight, np.zeros(len(theta)), fit_intercept,
                       offset).mixed_precision(None, mixed).value_and_grad(theta)
    return out[0], out[2]


def _target_sums(X, y, sample_weight, offset=None):
    return (sample_weight.sum(), sample_weight @ y,
            0.0 if offset is None else sample_weight @ offset)


# A pass over rows whose Hessian costs fewer flops (rows x parameters^2) than this is
# dominated by the latency of its tasks (~1e7 per 10 ms of one core): it computes the
# Hessian whether asked or not.
_EAGER_HESSIAN_FLOPS = 2**25


class ChunkedLogPosterior:
    """:class:`LogPosterior` of rows read in chunks: held in chunks on a cluster (a
    :class:`~skcoreset._backend.DaskRows` storage), or a ``np.memmap`` (an
    :class:`~skcoreset._backend.InMemoryRows` storage read in row chunks).

    Every evaluation is one pass over the rows: each chunk computes the value and gradient
    of its weighted log-likelihood (and its negative Hessian when asked) by
    :meth:`LogPosterior.value_and_grad`, the blocked pass of the in-memory fit, and the
    chunks' results are summed; on a cluster by the workers' tasks (one per worker thread
    over the chunks it holds, or one per chunk and a tree of tasks), the last sums in this
    process: only ``O(p^2)`` numbers reach this process. The linear predictors are never
    held: the state of a point is its sums (:class:`_Sums`), so memory does not grow
    with the rows, and a Hessian at a point costs a pass of its own unless it comes with
    the value (:meth:`value_and_grad`). Where a pass on a cluster costs its latency rather
    than its arithmetic (at most ``_EAGER_HESSIAN_FLOPS`` for the Hessian), every pass also
    computes the exact Hessian, which a later request at the same point then takes instead
    of a pass of its own: the same steps in half the passes. ``n_passes`` counts the passes
    over the rows.

    Parameters
    ----------
    rows : DaskRows or InMemoryRows
        The rows, with encoded targets and their weights.
    family : Family
    prior_prec : ndarray of shape (p,)
    fit_intercept : bool
    gather_rows : int, default=None
        Thinned rows (:meth:`thinned`) up to this many are gathered into this process; by
        default the rows of the largest chunk of a cluster, which bounds the memory used
        here, and all thinned rows of an in-memory storage.
    target_sums : tuple of float, default=None
        ``(sum_n w_n, sum_n w_n y_n, sum_n w_n o_n)`` (``o``: the offsets) when known;
        otherwise one pass computes them when first needed (for :attr:`total_weight`,
        :meth:`mean_target` and :meth:`mean_offset`).
    """

    def __init__(self, rows, family, prior_prec, fit_intercept, gather_rows=None,
                 target_sums=None):
        self.rows = rows
        self.family = family
        self.prior_prec = prior_prec
        self.fit_intercept = fit_intercept
        if gather_rows is None:
            gather_rows = max(rows.sizes) if rows.chunked else rows.n
        self.gather_rows = gather_rows
        self.n_passes = 0
        self._mixed = None  # the chunks' MixedProducts kept on the cluster (mixed_precision)
        self._eager_hessian = (rows.chunked
                               and rows.n * len(prior_prec) ** 2 <= _EAGER_HESSIAN_FLOPS)
        if target_sums is not None:
            self.__dict__["_target_sums"] = target_sums

    def _pass(self, function, *args):
        self.n_passes += 1
        return self.rows.sum(function, *args)

    @property
    def n_rows(self):
        return self.rows.n

    @cached_property
    def _target_sums(self):
        return self._pass(_target_sums)

    @property
    def total_weight(self):
        return float(self._target_sums[0])

    def mean_target(self):
        total, weighted, _ = self._target_sums
        return weighted / total

    def mean_offset(self):
        total, _, offsets = self._target_sums
        return offsets / total

    def thinned(self, stride):
        """The log posterior of every ``stride``-th row (global row numbers), reweighted to
        the total weight of all rows: on the cluster, or in this process (a
        :class:`LogPosterior`) when it has at most ``gather_rows`` rows; None when those
        rows carry no weight."""
        rows = self.rows.every(stride, gather_rows=self.gather_rows)
        if not rows.chunked:
            total = rows.sample_weight.sum()
            if total <= 0:
                return None
            return log_posterior_of(rows.scaled(self.total_weight / total), self.family,
                                    self.prior_prec, self.fit_intercept)
        sums = rows.sum(_target_sums)
        if sums[0] <= 0:
            return None
        scale = self.total_weight / sums[0]
        return ChunkedLogPosterior(rows.scaled(scale), self.family, self.prior_prec,
                                   self.fit_intercept, self.gather_rows,
                                   tuple(value * scale for value in sums))

    def mixed_precision(self, theta):
        """This log posterior with the products of its gradient passes in single precision
        about ``theta`` (:meth:`LogPosterior.mixed_precision`): each worker keeps a
        :class:`MixedProducts` beside each of its chunks, made once, so that its tasks read
        float32 rows. Itself when the rows are not held on a cluster, hold fewer than
        ``_MIN_MIXED_BYTES`` in all or more than ``_MAX_MIXED_BYTES`` on a worker (the
        bounds in memory), or when a worker's memory limit leaves no room for the copy."""
        d = self.rows.n_features
        if not self.rows.chunked or self.rows.n * d * 8 < _MIN_MIXED_BYTES:
            return self
        # the copy adds half the rows' bytes, and the reference's eta and residuals
        mixed = self.rows.hold(_mixed_chunk, self.family, np.array(theta, dtype=float),
                               self.fit_intercept, max_bytes=_MAX_MIXED_BYTES,
                               grows=0.5 + 2 / d)
        if mixed is None:
            return self
        other = copy.copy(self)
        other._mixed = mixed
        return other

    def _sums(self, theta, neg_hessian=None):
        theta = np.asarray(theta, dtype=float)
        if self._mixed is not None and neg_hessian is None:
            self.n_passes += 1
            out = self.rows.sum_held(self._mixed, _mixed_loglik_sums, self.family, theta,
                                     self.fit_intercept)
            return _Sums(theta, float(out[0]), out[1]), ()
        eager = neg_hessian is None and self._eager_hessian
        out = self._pass(_loglik_sums, self.family, theta, self.fit_intercept,
                         np.float64 if eager else neg_hessian)
        return (_Sums(theta, float(out[0]), out[1], out[2] if eager else None),
                () if eager else out[2:])

    def eta(self, theta):
        return self._sums(theta)[0]

    def log_prior(self, theta):
        return -0.5 * np.sum(self.prior_prec * np.asarray(theta) ** 2, axis=-1)

    def value(self, theta, sums):
        return sums.loglik + self.log_prior(theta)

    def grad(self, theta, sums):
        return sums.grad - self.prior_prec * theta

    def _with_prior(self, gram):
        gram[np.diag_indices_from(gram)] += self.prior_prec
        return gram

    def value_and_grad(self, theta, neg_hessian=None):
        """``(value, sums, grad)`` at ``theta`` in one pass; with ``neg_hessian`` (a dtype,
        see :meth:`LogPosterior.value_and_grad`) also the negative Hessian."""
        sums, more = self._sums(theta, neg_hessian)
        out = (self.value(theta, sums), sums, self.grad(theta, sums))
        return out + tuple(self._with_prior(gram) for gram in more)

    def neg_hessian(self, sums, dtype=np.float64):
        """The negative Hessian at the point of ``sums`` (one pass, unless the pass of
        ``sums`` computed it)."""
        if dtype == np.float64 and sums.neg_hessian is not None:
            return self._with_prior(sums.neg_hessian.copy())
        return self._with_prior(self._sums(sums.theta, dtype)[1][0])

    def log_prior_normaliser(self):
        return prior_log_normaliser(self.prior_prec)


def log_posterior_of(rows, family, prior_prec, fit_intercept):
    """The log posterior of the rows of a storage (with their offsets): a
    :class:`LogPosterior` of rows in this process
    (:class:`~skcoreset._backend.InMemoryRows`), a :class:`ChunkedLogPosterior` of rows on
    a cluster (:class:`~skcoreset._backend.DaskRows`) or in a ``np.memmap``, whose memory
    then does not grow with the rows."""
    if rows.chunked or rows.file_backed:
        return ChunkedLogPosterior(rows, family, prior_prec, fit_intercept)
    return LogPosterior(rows.X, rows.y, family, rows.sample_weight, prior_prec, fit_intercept,
                        rows.offset)


def prior_log_normaliser(prior_prec):
    """``log`` of the normalising constant of ``N(0, P^-1)``: ``(log det P - p log 2 pi) / 2``
    for the diagonal precision ``P = diag(prior_prec)``."""
    return 0.5 * (np.sum(np.log(prior_prec)) - len(prior_prec) * np.log(2 * np.pi))


def laplace_log_evidence(log_post, theta, eta, posterior, value=None):
    """Laplace estimate of ``log p(data)`` at the mode ``theta`` with precision-based posterior.

    ``log p(data) ~ log p(data, theta) + p/2 log 2 pi + log det(cov) / 2``; exact for the
    Gaussian family. ``value``: the log posterior at ``theta`` when known (no pass over the
    data then).
    """
    if value is None:
        value = log_post.value(theta, eta)
    logdet_cov = cholesky_logdet(posterior.cov_cholesky)
    p = len(theta)
    return (value + log_post.log_prior_normaliser()
            + 0.5 * p * np.log(2 * np.pi) + 0.5 * logdet_cov)
