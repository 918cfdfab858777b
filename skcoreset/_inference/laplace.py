"""Laplace approximation: weighted MAP by damped Newton, Hessian at the mode as precision."""

import weakref

import numpy as np

from .._backend import as_storage
from ._newton import NewtonObjective, newton_maximise, warn_not_converged
from .._posterior import GaussianPosterior
from ._common import InferenceResult, laplace_log_evidence, log_posterior_of

# Reuse the Hessian while the step is small on the scale the Hessian varies on: for GLMs the
# curvature at a row changes by a factor ~exp(|x . step|), and |x . step| is about
# sqrt(2 decrement / total weight) for a typical row.
_STALE_HESSIAN_SCALE = 0.005


def _dead():
    """A weak reference to nothing."""


def _reference(state):
    """A weak reference to a point's linear predictors (a vector of every row, which must
    not outlive the point); a chunked pass's state (its sums, a few numbers per feature,
    which cannot be referenced weakly) is held."""
    try:
        return weakref.ref(state)
    except TypeError:
        return lambda: state


class LogPosteriorObjective(NewtonObjective):
    """A log posterior as a :class:`~skcoreset._inference._newton.NewtonObjective`; the state is the
    linear predictors.

    ``log_post`` is a :class:`LogPosterior`, a :class:`ChunkedLogPosterior` (rows on a
    cluster, whose state is the sums over rows) or anything with their ``eta``, ``value``,
    ``grad`` and ``neg_hessian`` (the coreset samplers' dense active rows, the streaming
    path's chunked sums).
    """

    def __init__(self, log_post, approx=False):
        self.log_post = log_post
        self.approx = approx
        # large problems: the value and the gradient in one pass over X (the gradient of a
        # rejected line-search trial is wasted, which is rare near the mode), and a Hessian
        # with them where Newton expects one (saves its pass over X)
        self.fuses_derivatives = approx and hasattr(log_post, "value_and_grad")
        # large problems whose Hessian costs far more than a product with it (sparse rows):
        # inexact Newton steps by conjugate gradients, one exact Hessian at the mode
        self.refines_steps = approx and getattr(log_post, "cheap_products", False)
        # the gradient at the last point evaluated, with a weak reference to its linear
        # predictors (which would otherwise stay alive after Newton's method lets go of
        # them, a vector of every row)
        self._grad = (_dead, None)

    def value(self, theta):
        if self.fuses_derivatives:
            value, eta, grad = self.log_post.value_and_grad(theta)
            self._grad = (_reference(eta), grad)
            return value, eta
        eta = self.log_post.eta(theta)
        return self.log_post.value(theta, eta), eta

    def value_and_derivatives(self, theta, exact=True):
        if not self.fuses_derivatives:
            return super().value_and_derivatives(theta, exact)
        out = self.log_post.value_and_grad(theta,
                                           neg_hessian=np.float64 if exact else np.float32)
        # the gradient of this point, not a stale trial's (whose linear predictors, a vector
        # of every row, would be kept alive)
        self._grad = (_reference(out[1]), out[2])
        return out

    def gradient(self, theta, eta):
        if self._grad[0]() is eta:
            return self._grad[1]
        return self.log_post.grad(theta, eta)

    def neg_hessian(self, theta, eta):
        return self.log_post.neg_hessian(eta)

    def neg_hessian_product(self, theta, eta):
        return self.log_post.neg_hessian_product(eta)

    def approx_neg_hessian(self, theta, eta):
        if self.approx:
            return self.log_post.neg_hessian(eta, dtype=np.float32)
        return self.log_post.neg_hessian(eta)


def newton_map(log_post, theta0, *, tol=1e-10, max_iter=100, verbose=0, full_steps=0,
               approx=False, initial_neg_hessian=None, confirm=True, full_output=False,
               total_weight=None, keep_neg_hessian=True):
    """Maximise a concave :class:`LogPosterior` by Newton's method with backtracking.

    Stops when half the Newton decrement ``g^T H^-1 g / 2`` (the predicted gain of the next
    step, in units of log density) falls below ``tol``, or when the line search cannot
    improve the objective beyond rounding error (:func:`._newton.newton_maximise`).

    Once the decrement is small compared with the total weight, the linear predictors move
    by much less than 1 per step and the Hessian hardly changes: the following steps reuse
    its Cholesky factor (chord steps, each costing one gradient instead of an ``n p^2``
    Hessian) and converge linearly at a rate set by that small change. The Hessian is always
    recomputed at the final point, and convergence is confirmed with it, so the returned
    precision is exact at the returned mode. ``full_steps`` leading steps from a warm start
    are taken whole while they increase the log posterior.

    For large problems, ``approx=True`` steers the steps with single-precision Hessians
    (``log_post.neg_hessian(eta, dtype=np.float32)``), bought only when the chord steps'
    rate says they pay, and ``initial_neg_hessian`` (e.g. a subsample's, from
    :func:`thinned_start`) starts with chord steps; convergence is still confirmed with the
    exact float64 Hessian, which is the one returned. Where a fresh Hessian is expected at a
    new point (the exact one when the chord steps' rate predicts convergence there), it is
    computed in the same pass over X as the value and gradient. ``confirm=False`` (a warm
    start for a larger problem) skips the confirmation and returns the approximate Hessian
    that steered the last step (:func:`._newton.newton_maximise`).

    ``full_output=True`` returns the :class:`._newton.NewtonResult` instead (with the log
    posterior at the mode). ``total_weight`` (the scale of the Hessian reuse) is by
    default ``log_post.sample_weight.sum()``. ``keep_neg_hessian=False`` (with
    ``full_output``): the result holds the Cholesky factor of the precision, computed in
    its place, instead of the precision (:func:`._newton.newton_maximise`).

    Returns
    -------
    theta : ndarray of shape (p,)
        The mode.
    eta : ndarray of shape (n,)
        Linear predictors at the mode.
    precision : ndarray of shape (p, p)
        Negative Hessian of the log posterior at the mode.
    n_iter : int
        Newton (or chord) steps taken.
    converged : bool
    """
    if total_weight is None:
        total_weight = log_post.sample_weight.sum()
    result = newton_maximise(
        LogPosteriorObjective(log_post, approx), theta0, tol=tol, max_iter=max_iter,
        reuse_below=_STALE_HESSIAN_SCALE * total_weight,
        full_steps=full_steps, approx_steps=approx, initial_neg_hessian=initial_neg_hessian,
        confirm=confirm, verbose=verbose, label="laplace", value_name="log posterior",
        keep_neg_hessian=keep_neg_hessian)
    if full_output:
        return result
    return result.x, result.state, result.neg_hessian, result.n_iter, result.converged


def initial_theta(y, family, sample_weight, n_params, fit_intercept):
    """Zero coefficients; the intercept at the link of the weighted mean target."""
    theta = np.zeros(n_params)
    if fit_intercept:
        mean = np.average(y, weights=sample_weight)
        theta[-1] = family.initial_predictor(mean)
    return theta


def _initial_theta_of(log_post):
    """:func:`initial_theta` of the rows of a log posterior (in memory or on a cluster)."""
    n_params = len(log_post.prior_prec)
    if not log_post.fit_intercept:
        return np.zeros(n_params)
    theta = initial_theta(np.array([log_post.mean_target()]), log_post.family, np.ones(1),
                          n_params, True)
    # the intercept that, with the offsets, fits the mean target
    theta[-1] -= log_post.mean_offset()
    return theta


# From this many rows on, the large-N paths: a thinned start and single-precision Hessians
# steering Newton's steps (and KL-proximal's fixed-point steps); below, the full Hessians are
# cheap enough as they are.
LARGE_N = 50_000
_THINNING_STRIDE = 8
# The thinned mode is ~p * stride / 2 nats of decrement from the full one (its sampling
# error): solving it more accurately than this buys nothing.
_THINNED_TOL = 1.0


def thinned_start(log_post, theta0, *, tol, max_iter):
    """Mode of every ``_THINNING_STRIDE``-th row, reweighted to the full data's total weight
    (:meth:`LogPosterior.thinned`; on a cluster :meth:`ChunkedLogPosterior.thinned`: the
    same rows, drawn from all chunks).

    A large-N warm start: the thinned problem costs 1/8 of the full Hessians, and its mode is
    within a few posterior standard deviations of the full one. Its Hessian there, whose
    weights sum to the full total, approximates the full one well enough for chord steps: the
    full data then need one approximate Hessian and the exact one at the mode. The thinned
    problem is solved only to ``tol`` with single-precision Hessians and no exact one
    (``newton_map(..., confirm=False)``), itself from a thinned start when it is large
    enough. Deterministic.

    Returns
    -------
    theta : ndarray of shape (p,)
    neg_hessian : ndarray of shape (p, p) or None
        None when the thinned rows carry no weight (``theta`` is then ``theta0``).
    """
    thinned = log_post.thinned(_THINNING_STRIDE)
    if thinned is None:
        return theta0, None
    neg_hessian0 = None
    if thinned.n_rows >= LARGE_N:
        theta0, neg_hessian0 = thinned_start(thinned, theta0, tol=tol, max_iter=max_iter)
    theta, _, neg_hessian, _, _ = newton_map(thinned, theta0, tol=tol, max_iter=max_iter,
                                             approx=True, initial_neg_hessian=neg_hessian0,
                                             confirm=False, total_weight=thinned.total_weight)
    return theta, neg_hessian


def find_mode(log_post, theta0=None, *, neg_hessian0=None, tol, max_iter, verbose=0,
              keep_neg_hessian=True):
    """The mode of a :class:`LogPosterior` (or :class:`ChunkedLogPosterior`) and the exact
    negative Hessian there.

    :func:`newton_map` from ``theta0`` (by default :func:`initial_theta`, refined for
    N >= ``LARGE_N`` by :func:`thinned_start`), with single-precision Hessians
    steering the steps at large N. ``neg_hessian0``, a negative Hessian near ``theta0``
    (e.g. that of a subsample's mode with weights summing to the full data's), starts with
    chord steps. ``keep_neg_hessian=False``: the result holds the exact negative
    Hessian's Cholesky factor, computed in its place, instead of the Hessian.

    Returns
    -------
    NewtonResult
    """
    large = log_post.n_rows >= LARGE_N
    if theta0 is None:
        theta0 = _initial_theta_of(log_post)
        if large and not getattr(log_post, "cheap_products", False):
            theta0, neg_hessian0 = thinned_start(log_post, theta0, tol=_THINNED_TOL,
                                                 max_iter=max_iter)
    return newton_map(log_post, theta0, tol=tol, max_iter=max_iter, verbose=verbose,
                      approx=large, initial_neg_hessian=neg_hessian0, full_output=True,
                      total_weight=log_post.total_weight, keep_neg_hessian=keep_neg_hessian)


def laplace(X, y, family, *, sample_weight, prior_prec, fit_intercept, tol=1e-10,
            max_iter=100, theta0=None, offset=None, verbose=0, keep_precision=True):
    """Laplace approximation of a weighted GLM posterior.

    Finds the mode ``theta*`` of ``sum_n w_n log p(y_n | a_n . theta) + log N(theta; 0, P^-1)``
    by Newton's method with an Armijo line search and returns ``N(theta*, H^-1)`` with ``H``
    the negative Hessian of the log posterior at ``theta*``.

    Every sum over rows is one pass over the rows in memory or, for rows on a cluster, one
    map-reduce over their chunks (:class:`ChunkedLogPosterior`): the same Newton steps from
    the same thinned start, so the same posterior.

    Parameters
    ----------
    X : ndarray of shape (n, d), InMemoryRows or DaskRows
        The rows; a row storage (:class:`~skcoreset._backend.InMemoryRows`, or
        :class:`~skcoreset._backend.DaskRows` for rows on a cluster) holds them with their
        encoded targets and weights (``y`` and ``sample_weight`` are then None).
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    tol : float
        Stop when half the Newton decrement is below ``tol``.
    max_iter : int
        Newton step cap; a :class:`~sklearn.exceptions.ConvergenceWarning` is raised when hit.
    theta0 : ndarray of shape (p,), default=None
        Starting point (warm start); by default zero coefficients and the intercept at the
        link of the weighted mean target, refined for large N by :func:`thinned_start`.
    offset : ndarray of shape (n,), default=None
        A known term of each row's linear predictor (a storage holds its own).
    verbose : int
        Print one line per Newton step when positive.
    keep_precision : bool, default=True
        Whether the posterior keeps the precision (the exact negative Hessian at the mode)
        besides the covariance's Cholesky factor, for callers that read it (e.g. a sampler's
        start or a coreset's pilot). False: the precision is factored in its own memory and
        the covariance's factor computed there (:meth:`GaussianPosterior.from_precision_cholesky`:
        the same ``cov_cholesky``, bit for bit), so the posterior is one ``p x p`` array and
        the fit never holds two; ``precision`` is then formed from the factor when read (to
        the rounding of two inversions).

    Returns
    -------
    InferenceResult
        With a :class:`GaussianPosterior` and the Laplace log evidence; ``extra`` holds
        ``log_posterior``, the unnormalised log posterior at the mode.
    """
    rows = as_storage(X, y, sample_weight, offset)
    log_post = log_posterior_of(rows, family, prior_prec, fit_intercept)
    result = find_mode(log_post, theta0, tol=tol, max_iter=max_iter, verbose=verbose,
                       keep_neg_hessian=keep_precision)
    if not result.converged:
        warn_not_converged("Newton's method", max_iter)
    if keep_precision:
        posterior = GaussianPosterior(result.x, precision=result.neg_hessian)
    else:
        # the precision factored in its own memory, the covariance's factor in the same
        # array: the posterior is one p x p array (30.5 MiB at p = 2,001), never two at once
        posterior = GaussianPosterior.from_precision_cholesky(result.x,
                                                              result.neg_hessian_factor)
    return InferenceResult(
        posterior=posterior, n_iter=result.n_iter, converged=result.converged,
        log_evidence=laplace_log_evidence(log_post, result.x, result.state, posterior,
                                          value=result.value),
        extra={"log_posterior": float(result.value)})
