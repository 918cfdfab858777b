"""Sparse variational inference coresets (Campbell & Beronov 2019, Algorithm 1).

The coreset posterior ``pi_w ~ exp(sum_n w_n f_n(theta)) pi_0(theta)`` is an exponential family
with natural parameter ``w`` and sufficient statistic the potentials ``f_n`` (eq. 8), so the
gradient of ``KL(pi_w || pi)`` is a covariance under ``pi_w`` (eq. 10):

    grad_w KL = -Cov_w[f, f^T (s - w)],

with ``s`` the incoming sample weights (``s = 1`` in the paper). The greedy algorithm adds the
point whose potential correlates best with the residual ``f^T (s - w)`` (eqs. 13, 20) and then
runs stochastic gradient steps on the active weights (eq. 22). Covariances under ``pi_w`` come
from one of three samplers: closed forms for the Gaussian model (Appendix B, no Monte Carlo),
draws from a warm-started Laplace approximation, or a short warm-started emcee run.

Everything is vectorised over data points: the potentials of all rows for all S draws are one
matrix product followed by one elementwise kernel, written into reused buffers.

This module holds the greedy loop and the estimator; the moment estimators are in
:mod:`._sparsevi_moments`, the weight-update step rules in :mod:`._sparsevi_steps`.
"""

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from .._docstrings import fill_doc
from .._progress import Progress, format_seconds
from .._sklearn_compat import Interval, StrOptions
from ._base import LikelihoodCoreset
from ._checks import uniform_fallback
from ._docs import COMMON_ATTRS_DOC, COMMON_PARAMS_DOC
from ._samplers import EnsembleSampler, LaplaceSampler
from ._sparsevi_moments import _ExactGaussianMoments, _MonteCarloMoments
from ._sparsevi_steps import _optimise_weights
from .._typing import RandomStateLike

# Greedy steps in a row that re-select a coreset point without lowering the best KL so
# far before the construction stops (the coreset has stopped growing and improving).
_PATIENCE = 5
_NOT_SELECTED = object()
# Rows per parameter of the uniform start under a vague prior (at most half the budget).
_START_ROWS_PER_PARAMETER = 5


@dataclass
class SparseVIResult:
    """Output of :func:`sparse_vi`.

    Attributes
    ----------
    weights : ndarray of shape (n,)
        Non-negative coreset weights, in the units of ``sample_weight``.
    history : ndarray of shape (n_iter, 3)
        Per greedy step: coreset size, ``KL(pi_w || pi)`` and the symmetrised KL.
    n_iter : int
        Greedy steps run.
    stop_reason : str
        Why the greedy loop ended (see :func:`sparse_vi`).
    n_subsample : int or None
        Subsample size U used, or None when every row was used.
    """

    weights: np.ndarray
    history: np.ndarray
    n_iter: int
    stop_reason: str
    n_subsample: int | None = None


def sparse_vi(X, y, family, *, sample_weight, prior_prec, fit_intercept, M, n_draws=100,
              n_iter_opt=100, learning_rate="auto", n_subsample="auto", sampler="laplace",
              random_state=None, verbose=0, offset=None):
    """Greedy sparse variational inference (Campbell & Beronov 2019, Algorithm 1).

    For each greedy step: estimate the correlation of each potential with the residual
    ``f^T (s - w)`` under ``pi_w`` (eq. 20) and add the best point (eq. 13); then take T
    projected stochastic gradient steps on the active weights with the KL gradient of
    eq. (22). The selection's draws serve the first gradient step, since adding a point with
    weight 0 leaves ``pi_w`` unchanged.

    The paper starts from ``w = 0``, where ``pi_w`` is the prior. Under a prior too vague
    for its draws (log-link potentials ``-exp(eta)`` beyond float64, or their products
    over the rows), no Monte Carlo estimate exists there: the construction then starts
    from ``k = min(5 p, M // 2)`` rows drawn with probabilities ``s_n / sum(s)`` (p
    parameters), each of weight ``sum(s) / k``, which count as k greedy steps; the MCMC
    sampler's walkers then start at draws of that coreset posterior's Laplace fit.

    The loop runs at most ``min(M, C)`` greedy steps, C the number of rows with
    ``s_n > 0`` (a step adds at most one row, so by then the coreset may hold every row),
    and stops early (``stop_reason``) when

    * ``"no_improvement"``: 5 greedy steps in a row re-selected a point already in the
      coreset without lowering ``KL(pi_w || pi)`` below its best so far;
    * ``"constant_potentials"``: every potential is constant under ``pi_w``, so no
      correlation can guide a selection.

    Otherwise ``stop_reason`` is ``"max_steps"``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
        Incoming weights ``s``: the target is ``pi ~ exp(sum_n s_n f_n) pi_0`` and rows with
        ``s_n = 0`` are never selected.
    prior_prec : ndarray of shape (p,)
        Diagonal precision of the Gaussian prior ``pi_0`` (intercept last).
    fit_intercept : bool
    M : int
        Maximal number of greedy steps (an upper bound on the coreset size); values above
        the number C of rows with positive weight act as C.
    n_draws : int, default=100
        Draws S from ``pi_w`` per covariance estimate (eqs. 20, 22); unused by the exact
        sampler.
    n_iter_opt : int, default=100
        Gradient steps T per greedy step.
    learning_rate : float or "auto", default="auto"
        Step size ``gamma_t = learning_rate / t`` at gradient step ``t``: a fraction of the
        natural-gradient step for the exact sampler, a multiple of the mean coreset weight
        ``sum(s) / M`` for the others. ``"auto"``: 1 and 0.1 (the paper's ``1 / t`` of
        sections 5.1-5.2, and its ``0.5 / t`` of section 5.3 at N = 500, M = 100).
    n_subsample : int, "auto" or None, default="auto"
        U: estimate the residual from the active rows plus U rows drawn with replacement
        with probabilities ``s_n / sum(s)`` (an unbiased estimate) and select among those
        rows only (sections 3.2-3.3); ``None``, or U at least C, uses every row. ``"auto"``:
        U = 5000. Ignored by the exact sampler, whose cost per gradient step does not grow
        with N.
    sampler : {"exact", "laplace", "mcmc"}, default="laplace"
        How covariances under ``pi_w`` are obtained: closed forms for the Gaussian family
        (Appendix B), S draws from a warm-started Laplace approximation, or S walkers of a
        warm-started emcee ensemble.
    random_state : numpy.random.RandomState
        Source of the draws and subsamples.
    verbose : int, default=0
        When positive, print the set-up, then one line per greedy step (coreset size, KL,
        elapsed time and an estimate of the time left for the remaining steps, an upper
        bound when the loop stops early), then the stop reason.
    offset : ndarray of shape (n,), default=None
        The rows' offsets, a known term of each linear predictor (the log exposure of
        counts): in every potential, draw and Laplace fit. Not with the exact sampler.

    Returns
    -------
    SparseVIResult
    """
    # Every BLAS call in the loop is small (p x S, M x p, N x p by p x S): thread start-up
    # and synchronisation cost more than they save, ruinously so on a busy machine (the
    # same reason scikit-learn's KMeans limits BLAS threads inside its loop).
    with threadpool_limits(limits=1, user_api="blas"):
        return _sparse_vi(X, y, family, sample_weight=sample_weight, prior_prec=prior_prec,
                          fit_intercept=fit_intercept, M=M, n_draws=n_draws,
                          n_iter_opt=n_iter_opt, learning_rate=learning_rate,
                          n_subsample=n_subsample, sampler=sampler, rng=random_state,
                          verbose=verbose, offset=offset)


def _sparse_vi(X, y, family, *, sample_weight, prior_prec, fit_intercept, M, n_draws,
               n_iter_opt, learning_rate, n_subsample, sampler, rng, verbose, offset):
    if learning_rate == "auto":
        learning_rate = 1.0 if sampler == "exact" else 0.1
    n_candidates = np.count_nonzero(sample_weight > 0)
    # the coreset cannot outgrow the rows; nothing below allocates by M
    max_steps = min(M, n_candidates)
    progress = Progress("SparseVI", max_steps, verbose, unit="step")
    if sampler == "exact":
        if offset is not None:
            raise ValueError("sampler='exact' is of the gaussian model, whose rows have no "
                             "offsets.")
        oracle = _ExactGaussianMoments(X, y, sample_weight, family.noise_scale, prior_prec,
                                       fit_intercept)
    else:
        if sampler == "laplace":
            draws = LaplaceSampler(X, y, family, prior_prec, fit_intercept, offset)
        else:
            draws = EnsembleSampler(X, y, family, prior_prec, fit_intercept, n_draws, rng,
                                    offset=offset)
        oracle = _MonteCarloMoments(X, y, sample_weight, family, fit_intercept, prior_prec,
                                    draws, n_draws, n_subsample, max_steps, rng, offset)
    n_used = getattr(oracle, "n_subsample", None)
    rows = "every row" if n_used is None else f"subsamples of {n_used} rows"
    progress.message(f"{n_candidates} rows of positive weight, sampler {sampler!r}, {rows}; "
                     f"up to {max_steps} greedy steps of {n_iter_opt} gradient steps")
    active = np.empty(0, dtype=np.intp)
    weights = np.empty(0)
    history = []
    best_kl, stalled = np.inf, 0
    stop_reason = "max_steps"
    start = 1
    # the first selection, made here to see whether the prior's draws are usable
    pending = oracle.select(active, weights)
    if oracle.overflowed:
        # the prior is too vague for its draws: start from a uniform subsample instead
        active, weights = _uniform_start(sample_weight, len(prior_prec), max_steps, rng)
        if sampler == "mcmc":
            # the walkers are draws of the prior, where the potentials overflow and no
            # stretch move is ever accepted: move them to the start's Laplace fit
            start_fit = LaplaceSampler(X, y, family, prior_prec, fit_intercept, offset)
            start_fit.update(active, weights)
            draws.start_at(start_fit.mean, start_fit.precision_chol_inv, rng)
        progress.message(f"the potentials overflow at draws from the prior: starting from "
                         f"{len(active)} rows of uniform weight")
        weights = _optimise_weights(oracle, active, weights, n_iter_opt, learning_rate)
        oracle.refresh(active, weights)
        history.append((np.count_nonzero(weights), *oracle.kl()))
        best_kl = history[-1][1]
        start, pending = len(active) + 1, _NOT_SELECTED
    for step in range(start, max_steps + 1):
        index = oracle.select(active, weights) if pending is _NOT_SELECTED else pending
        pending = _NOT_SELECTED
        if index is None:  # every potential is constant under pi_w: nothing to correlate
            stop_reason = "constant_potentials"
            break
        added = not np.any(active == index)
        if added:
            active = np.append(active, index)
            weights = np.append(weights, 0.0)
        weights = _optimise_weights(oracle, active, weights, n_iter_opt, learning_rate)
        oracle.refresh(active, weights)
        history.append((np.count_nonzero(weights), *oracle.kl()))
        kl = history[-1][1]
        stalled = 0 if added or kl < best_kl else stalled + 1
        best_kl = min(best_kl, kl)
        # every step: a greedy step takes long enough for a line of its own
        progress.line(step, f"size {history[-1][0]:{progress.width}d}  KL {kl:.4e}")
        if stalled >= _PATIENCE:
            stop_reason = "no_improvement"
            break
    progress.message(f"stopped after {len(history)} greedy steps ({stop_reason}), "
                     f"{format_seconds(progress.elapsed())}")
    full_weights = np.zeros(X.shape[0])
    full_weights[active] = weights
    return SparseVIResult(weights=full_weights, history=np.array(history).reshape(-1, 3),
                          n_iter=len(history), stop_reason=stop_reason, n_subsample=n_used)


def _uniform_start(sample_weight, n_params, max_steps, rng):
    """Rows and weights of a uniform subsample: the starting coreset when the prior is too
    vague for Monte Carlo estimates under it.

    ``k = min(5 p, max_steps // 2)`` distinct rows (p parameters) drawn with probabilities
    ``s_n / sum(s)``, each standing for ``sum(s) / k`` of the data (the uniform-subsample
    start of Naik, Rousseau & Campbell 2022 and Chen & Campbell 2024). The coreset
    posterior is then proper and near the target, so its draws stay where the potentials
    are finite; the greedy steps and the projected gradient then add, reweight or drop rows
    with the other half of the budget. With only p rows the start is an exact fit of p
    points, far from the target (a Laplace-proxy KL of 1e8-1e9 nats measured on Poisson
    counts, d = 5) and the greedy loop could stall there.
    """
    candidates = np.flatnonzero(sample_weight > 0)
    k = min(_START_ROWS_PER_PARAMETER * n_params, max(max_steps // 2, 1), len(candidates))
    prob = sample_weight[candidates] / sample_weight[candidates].sum()
    active = np.sort(rng.choice(candidates, size=k, replace=False, p=prob))
    return active, np.full(k, sample_weight.sum() / k)


_SPARSEVI_PARAMS_DOC = """
    n_draws : int, default=100
        Number S of draws from the coreset posterior ``pi_w`` behind every Monte Carlo
        covariance estimate (eqs. 20 and 22); at least 2. Unused by ``sampler="exact"``.

    n_iter_opt : int, default=100
        Number T of stochastic gradient steps on the active weights after each greedy
        selection (Algorithm 1, lines 15-22).

    learning_rate : float or "auto", default="auto"
        Step size ``gamma_t = learning_rate / t`` of gradient step ``t``. With
        ``sampler="exact"`` the step is ``gamma_t`` times the natural gradient (the KL gradient
        preconditioned by the exact Fisher information ``Cov_w[f_I, f_I]``, the metric of
        Campbell & Beronov 2019, eq. 23), so ``gamma_1 = 1`` is a full Gauss-Newton step. With
        the Monte Carlo samplers the gradient is normalised per coordinate by Adam's moment
        estimates, as in the reference implementation, and the step is ``gamma_t`` times the
        mean coreset weight ``sum(sample_weight) / M``. ``"auto"``: 1 for the exact sampler (the
        paper's ``gamma_t = 1 / t``, sections 5.1-5.2) and 0.1 otherwise (at the paper's N = 500
        and M = 100 its ``gamma_t = 0.5 / t`` in units of weight, section 5.3).

    n_subsample : int, "auto" or None, default="auto"
        U, for large N: at every selection and gradient step, estimate the residual
        ``f^T (s - w)`` from the coreset rows plus a fresh subsample of U rows, and select
        only among those rows (Campbell & Beronov 2019, sections 3.2-3.3). The U rows are
        drawn with replacement, row n with probability proportional to its
        ``sample_weight`` (uniformly over the data the rows stand for), which makes the
        estimate unbiased. A step then costs ``O((m + U) S)`` for a coreset of m points
        instead of ``O(N S)``. ``"auto"``: U = 5000, so every row is used up to 5000 rows
        (the papers' experiments are unchanged) and the cost of a step stops growing with
        N beyond. ``None`` always uses every row (slow at large N: about 30 s per greedy
        step at N = 1e5 with the default S and T). A U at least the number of rows with
        positive weight also uses every row. Ignored by ``sampler="exact"``, whose cost per
        gradient step does not grow with N.

    sampler : {"auto", "exact", "laplace", "mcmc"}, default="auto"
        How expectations under ``pi_w`` are computed. ``"exact"``: the closed forms of the
        Gaussian model (Appendix B) -- the posterior, the covariance of the potentials and
        the KL, with no Monte Carlo at all; gaussian model only. ``"laplace"``: S draws from
        the Laplace approximation of ``pi_w``, refitted by Newton's method warm-started at
        the previous mode (the reference implementation's choice). ``"mcmc"``: S walkers of
        an emcee ensemble, advanced a few stretch moves after every weight update from
        their previous positions. ``"auto"``: exact for the gaussian model, laplace
        otherwise.
"""


_SPARSEVI_ATTRS_DOC = """
    history_ : ndarray of shape (`n_iter_`, 3)
        Per greedy step: the number of points with positive weight, ``KL(pi_w || pi)`` and
        the symmetrised ``KL(pi_w || pi) + KL(pi || pi_w)`` (the quantity of Lemma 3). Exact
        with ``sampler="exact"``; otherwise between Gaussian proxies: the Laplace
        approximation of ``pi_w`` (the walkers' moment-matched Gaussian for ``"mcmc"``)
        and the Laplace approximation of the full-data posterior ``pi``.

    n_iter_ : int
        Greedy steps run: at most ``min(M, C)``, C the number of rows with positive
        ``sample_weight``; fewer when the loop stopped early (``stop_reason_``).

    stop_reason_ : str
        Why the greedy loop ended: ``"max_steps"`` (ran ``min(M, C)`` steps; a step adds
        at most one row, so with ``M >= C`` the coreset may then hold every row),
        ``"no_improvement"`` (5 greedy steps in a row re-selected a coreset point without
        lowering ``KL(pi_w || pi)`` below its best so far) or ``"constant_potentials"``
        (every potential is constant under ``pi_w``: nothing left to correlate).

    n_subsample_ : int or None
        The subsample size U used (``n_subsample`` resolved), or None when every row was
        used.

    sampler_ : str
        The sampler used (``sampler`` with ``"auto"`` resolved).
"""


_fill_sparsevi_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC,
                              sparsevi_params=_SPARSEVI_PARAMS_DOC,
                              sparsevi_attrs=_SPARSEVI_ATTRS_DOC)


@_fill_sparsevi_doc
class SparseVICoreset(LikelihoodCoreset):
    """Coreset by greedy sparse variational inference (Campbell & Beronov 2019, Algorithm 1).

    The coreset posterior ``pi_w ~ exp(sum_n w_n f_n) pi_0`` itself guides the
    construction, so no weighting distribution has to be chosen. Each of M greedy steps
    adds the point whose log-likelihood ``f_n`` correlates best, under ``pi_w``, with the
    residual ``sum_n (s_n - w_n) f_n`` (eqs. 13, 20; points already in the coreset compete
    with the absolute correlation and can be picked again), then runs T projected
    stochastic gradient steps on the active weights along the gradient of
    ``KL(pi_w || pi)``, ``-Cov_w[f, f^T (s - w)]`` (eqs. 10, 22). Here ``s`` is the
    incoming ``sample_weight`` (all ones by default), so the coreset approximates the
    weighted posterior.

    Parameters
    ----------
    M : int, default=100
        Maximal number of greedy steps, an upper bound on the coreset size. Values above
        the number of rows with positive ``sample_weight`` act as that number, and the
        loop may stop earlier (``stop_reason_``), so a huge M such as ``10**10`` means "as
        large as useful".
    {sparsevi_params}
    {common_params}
    Attributes
    ----------
    {sparsevi_attrs}
    {common_attrs}
    See Also
    --------
    GIGACoreset : Hilbert coreset on a fixed weighting distribution (Campbell & Broderick 2018).
    UniformCoreset : The uniform subsampling baseline.

    Notes
    -----
    The potentials of all rows for all S draws are one matrix product and one vectorised
    elementwise kernel; the selection's draws are reused for the first gradient step
    (adding a point with weight 0 does not change ``pi_w``); the Laplace sampler refits
    only the active rows, warm-started, and the MCMC sampler continues its walkers. BLAS
    runs single-threaded inside the loop, whose products are all small.

    **Vague priors.** The algorithm starts from the prior (``w = 0``). When the prior is
    so wide that the potentials of its draws overflow (counts under the log link with a
    prior scale of a few tens or more, depending on the covariates), it starts instead
    from a uniform subsample of five rows per parameter (at most half of M), each
    standing for an equal share of the data; with ``sampler="mcmc"`` the walkers start
    at draws of that coreset posterior's Laplace approximation rather than of the prior.

    **Large N.** With the Monte Carlo samplers a selection or gradient step evaluates the
    potentials of ``m + U`` rows at S draws (m the coreset size, U = ``n_subsample``), and
    a greedy step takes T such gradient steps. The default ``n_subsample="auto"`` uses
    every row up to 5000 rows and U = 5000 beyond, so the time per greedy step stops
    growing with N and memory stays ``O((m + U) S)`` besides the data. Measured on
    synthetic logistic data (d = 10, M = 100, S = T = 100, a busy 2-core machine): with
    every row a greedy step took about 60 s at N = 1e5 (several minutes at N = 2e5); with
    ``"auto"`` about 7 s at both N = 1e5 and 2e5, reaching ``KL(coreset Laplace || full
    Laplace)`` of 5.0 and 5.2 nats. Smaller U is faster but noisier (U = 1000: 1.4 s per
    step, 20 nats at N = 1e5); larger U approaches the full-data algorithm (U = 20,000:
    2.6 nats, 1.5x the time of U = 5000). For speed, lower ``n_iter_opt`` (T) or U; for
    quality, raise U. ``verbose=1`` prints per-step progress with an estimate of the time
    left; a very large M is capped at the number of rows of positive weight and the loop
    stops once it no longer improves (``stop_reason_``).

    References
    ----------
    T. Campbell and B. Beronov, "Sparse variational inference: Bayesian coresets from
    scratch", NeurIPS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import SparseVICoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=500) > 0).astype(int)
    >>> coreset = SparseVICoreset(M=20, n_iter_opt=20, random_state=0).fit(X, y)
    >>> len(coreset.sample_indices_) <= 20, coreset.history_.shape
    (True, (20, 3))
    """

    _parameter_constraints = {
        **LikelihoodCoreset._parameter_constraints,
        "n_draws": [Interval(Integral, 2, None, closed="left")],
        "n_iter_opt": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
        "n_subsample": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                        None],
        "sampler": [StrOptions({"auto", "exact", "laplace", "mcmc"})],
    }

    def __init__(self, M: int = 100, *, n_draws: int = 100, n_iter_opt: int = 100,
                 learning_rate: float | Literal["auto"] = "auto",
                 n_subsample: int | Literal["auto"] | None = "auto", sampler: str = "auto",
                 model: str = "auto", link: str = "log", noise_scale: float = 1.0,
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        super().__init__(M, model=model, link=link, noise_scale=noise_scale,
                         prior_scale=prior_scale, intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.n_draws = n_draws
        self.n_iter_opt = n_iter_opt
        self.learning_rate = learning_rate
        self.n_subsample = n_subsample
        self.sampler = sampler

    def _resolve_sampler(self):
        if self.sampler == "auto":
            return "exact" if self.model_ == "gaussian" else "laplace"
        if self.sampler == "exact" and self.model_ != "gaussian":
            raise ValueError(
                f"sampler='exact' needs the gaussian model (closed forms exist only for the "
                f"Gaussian linear model), but the model is {self.model_!r}; use "
                "sampler='laplace' or 'mcmc'.")
        return self.sampler

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        self.sampler_ = self._resolve_sampler()
        # weights near the float64 limit overflow in the moments: reported below
        with np.errstate(over="ignore", invalid="ignore"):
            result = sparse_vi(X, y, family, sample_weight=sample_weight,
                               prior_prec=prior_prec, fit_intercept=self.fit_intercept,
                               M=self.M, n_draws=self.n_draws, n_iter_opt=self.n_iter_opt,
                               learning_rate=self.learning_rate, n_subsample=self.n_subsample,
                               sampler=self.sampler_, random_state=rng, verbose=self.verbose,
                               offset=offset)
        self.history_ = result.history
        self.n_iter_ = result.n_iter
        self.stop_reason_ = result.stop_reason
        self.n_subsample_ = result.n_subsample
        if not np.all(np.isfinite(result.weights)):
            raise ValueError(
                f"SparseVICoreset's weight optimisation overflowed (the largest sample weight "
                f"is {sample_weight.max():.3g}); divide sample_weight by a constant: a "
                "weight is the number of rows a row stands for.")
        indices = np.flatnonzero(result.weights)
        if len(indices) == 0:
            return uniform_fallback(
                self, f"the greedy steps left every weight at zero (stop reason "
                f"{self.stop_reason_!r}): the weighted data do not move the posterior away "
                f"from the prior (the largest sample weight is {sample_weight.max():.3g}), "
                "so no point improves on an empty coreset.", sample_weight, rng)
        return indices, result.weights[indices]
