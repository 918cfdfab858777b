"""Coresets by subsampling and quasi-Newton refinement (Naik, Chen & Campbell, 2022).

A subset of M candidate rows is drawn once (by importance, :mod:`._candidates`); only its
weights ``w`` are then optimised, to
minimise ``KL(pi_w || pi)`` between the coreset posterior
``pi_w ~ exp(sum_m w_m f_m(theta)) pi_0(theta)`` and the full posterior
``pi ~ exp(sum_n s_n f_n(theta)) pi_0(theta)``. ``pi_w`` is an exponential family in ``w``
with sufficient statistic the coreset potentials, so with ``g_m = f_m - E_w[f_m]`` and the
residual ``r = sum_n s_n f_n - sum_m w_m f_m`` (centred under ``pi_w``),

    grad_w KL = -Cov_w[g, r],     Hessian ~ Cov_w[g, g],

and the quasi-Newton step ``w <- max(w - H^-1 grad, 0)`` is the least-squares regression of
the residual on the coreset potentials over draws from ``pi_w``. Covariances are estimated
from S draws of ``pi_w`` (a warm-started Laplace approximation or an emcee ensemble); the
full-data potentials enter only through their sum per draw, accumulated over row chunks.
The first step is taken with exact moments under the full data's Laplace approximation
(:mod:`._calibration`); with ``M="auto"`` the candidate set grows until the KL estimate
meets a target, or is every row when the posterior has too many parameters for any coreset
much smaller than the data.
"""

import functools
import time
from numbers import Integral, Real
from typing import Literal

import numpy as np
from threadpoolctl import threadpool_limits

from .._warnings import warn
from .._backend import InMemoryRows
from .._docstrings import fill_doc
from .._progress import Progress
from .._sklearn_compat import Interval, StrOptions
from ._base import LikelihoodCoreset
from ._docs import COMMON_ATTRS_DOC, COMMON_PARAMS_DOC
from ._calibration import DispersionSums, LaplaceKL, SecondOrderFit, dispersion_sums
from ._candidates import draw_candidates
from ._exact_distance import ExactDistance
from ._quasi_newton_weights import quasi_newton_weights
from .._typing import RandomStateLike
from ..exceptions import ImportanceSamplingWarning

# "auto" subsampling: exact passes up to this many rows of positive weight, above it
# subsamples of _AUTO_SUBSAMPLE rows with control variates.
_AUTO_EXACT_ROWS, _AUTO_SUBSAMPLE = 200_000, 50_000
# n_draws="auto": S = 4 p draws (at least 100, at most 1000): the covariances of the
# potentials are estimated in p directions, and the KL estimate's relative noise is
# sqrt(2 / S)
_DRAWS_PER_PARAM, _MIN_DRAWS, _MAX_DRAWS = 4, 100, 1000
# M="auto": the first budget is the number of second-order moments p (p + 3) / 2 that the
# coreset's log-likelihood must match (at least 500 rows); the second is 1.5 times larger,
# later ones follow the decay of the KL estimate, growing by a factor between 1.25 and 2
_MIN_AUTO_ROWS, _FIRST_GROWTH, _MIN_GROWTH, _MAX_GROWTH = 500, 1.5, 1.25, 2.0
# Penalties of the exact step tried in turn (see SecondOrderFit.solve) while its second-order
# KL disagrees with the KL between the Laplace approximations by more than a factor 2: with
# fewer candidates than second-order moments the smallest one can trade a precision lost in
# some direction for a better fit elsewhere, which the second-order expansion undercounts
_PENALTIES = (1e-6, 1e-4, 1e-2, 1.0)
# Pareto k-hat above which importance weights cannot be trusted whatever the number of draws
# (Vehtari et al. 2024)
_MAX_PARETO_K = 0.7
# With the exact distance the coreset grows to the full data's Laplace approximation's own
# distance when that is below target_exact_kl, down to target_exact_kl / this factor
_LAPLACE_FLOOR = 10.0


def auto_n_draws(n_params):
    """The draws per iteration of ``n_draws="auto"``: ``4 p``, clipped to [100, 1000]."""
    return int(min(_MAX_DRAWS, max(_MIN_DRAWS, _DRAWS_PER_PARAM * n_params)))


def _next_budget(path, target):
    """The next budget of a growing coreset from its ``(M, KL estimate)`` path: where the
    power law through the last two points meets the target (the first step: 1.5 times)."""
    M, kl = path[-1]
    growth = _FIRST_GROWTH
    if len(path) >= 2 and kl > 0 and path[-2][1] > kl:
        slope = np.log(path[-2][1] / kl) / np.log(M / path[-2][0])
        growth = 1.1 * (kl / target) ** (1.0 / slope)
    return int(np.ceil(M * min(_MAX_GROWTH, max(_MIN_GROWTH, growth))))


_QN_PARAMS_DOC = """
    candidates : {"auto", "uniform"}, default="auto"
        How the candidate rows are drawn, whose weights are then optimised. ``"auto"``:
        importance sampling without replacement (priority sampling) on a mixture of the
        uniform distribution (20 %) and each row's score and leverage under the full data's
        Laplace approximation, per class for the logistic model, with inverse-probability
        starting weights: rows the model fits badly (the positives of a rare class, the
        extreme counts of a heavy tail) and rows with extreme linear predictors are drawn
        far more often than uniformly, many with certainty (see Notes). ``"uniform"``: a
        uniform draw (per class, in proportion to the class sizes).

    target_kl : float, default=0.1
        With ``M="auto"``: the KL estimate between the Laplace approximations of the
        coreset's posterior and the full data's, in nats, at which the coreset stops
        growing (or, with the exact distance, starts being measured by it).

    distance : {"auto", "laplace", "exact"}, default="auto"
        What ``M="auto"`` sizes the coreset by. ``"laplace"``: the KL estimate between
        Laplace approximations (``kl_estimate_``, no pass over the data per size), enough
        when a Gaussian method (Laplace, KL-proximal, PASS-GLM) is fitted on the coreset.
        ``"exact"``: once that estimate meets ``target_kl``, the coreset keeps growing
        until ``KL(coreset posterior || full posterior)`` between the *exact* posteriors,
        the one an MCMC run on the coreset samples and the one MCMC on all rows would, is
        below ``target_exact_kl`` (estimated by importance weighting, see Notes; one pass
        over the data in all, two for skewed posteriors, 1,000 draws). ``"auto"``:
        ``"exact"`` when the coreset is built in a :class:`~skcoreset.pipeline.Pipeline`
        whose final estimator samples (``method="mcmc"``), else ``"laplace"``. With an
        integer ``M``, ``"exact"`` only measures (``exact_kl_estimate_``).

    target_exact_kl : float, default=0.01
        With ``M="auto"`` and the exact distance: the estimate of ``KL(coreset posterior ||
        full posterior)``, in nats, at which the coreset stops growing; or the full data's
        Laplace approximation's own distance to the exact posterior (``laplace_exact_kl_``)
        when that is smaller, down to a tenth of ``target_exact_kl``: MCMC on a coreset
        further off than a Gaussian fit of all rows would be wasted.

    max_rows : int, default=20000
        With ``M="auto"``: the largest coreset. When the KL estimate is still above
        ``target_kl`` at this size, ``fit`` warns. When no coreset of this size can come
        close (``p (p + 3) / 2`` above twice ``max_rows``), every row instead (see ``M``).

    max_time : float or None, default=None
        With ``M="auto"``: no larger coreset is tried once this many seconds have passed
        since ``fit`` started; ``fit`` then warns if the target is not met. ``None``: no
        time budget.

    n_draws : int or "auto", default="auto"
        Number S of draws from the coreset posterior ``pi_w`` per iteration of the
        refinement, behind the covariances of the quasi-Newton step and its KL estimate; at
        least 2. ``"auto"``: ``4 p`` for ``p`` parameters, at least 100 and at most 1000.
        Each iteration evaluates the potentials of all rows (or ``n_subsample`` rows) at
        these draws, so the cost per iteration is proportional to ``N * S``.

    max_iter : int, default=0
        Maximum number of Monte Carlo quasi-Newton iterations after the exact first step;
        none by default: the exact step already reaches (and with enough candidates goes
        far below) the noise floor of S draws, and on the benchmark data the iterations
        changed neither the coreset posterior nor its distance to the exact full posterior
        beyond that noise. They see the log-likelihoods beyond second order, with
        ``sampler="mcmc"`` also a coreset posterior far from Gaussian.

    tol : float, default=1e-3
        Stop the iterations once the Monte Carlo estimate of ``KL(pi_w || pi)`` of the
        accepted weights falls below ``tol`` nats.

    n_iter_no_change : int, default=4
        Stop after this many proposals in a row are rejected (the Monte Carlo noise floor
        of S draws has been reached).

    n_subsample : int, "auto" or None, default="auto"
        Rows for an unbiased estimate of the full data's potentials in the iterations:
        their second-order Taylor expansion about the full data's mode, computed exactly,
        plus a remainder estimated from ``n_subsample`` rows of an independent priority
        sample on the candidates' importance (inverse-probability weighted). ``None``:
        every row at every iteration (exact). ``"auto"``: exact up to 200,000 rows of
        positive weight, 50,000-row subsamples above.

    sampler : {"laplace", "mcmc"}, default="laplace"
        Draws from ``pi_w``: its Laplace approximation, refitted on the M coreset rows by
        Newton's method warm-started at the previous mode, or the walkers of an emcee
        ensemble started at that Laplace approximation and advanced 20 stretch moves per
        iteration (slower; for posteriors far from Gaussian).

    stratify : bool, default=True
        Draw the logistic model's candidates per class, with at least one row of every
        class, so that a rare class is never dropped. Other models have no classes.
"""

_QN_ATTRS_DOC = """
    kl_path_ : ndarray of shape (n_sizes, 2)
        The coreset sizes tried (rows: budget M, KL estimate after the exact step); one row
        for an integer ``M``.

    distance_ : {"laplace", "exact"}
        The distance the coreset was sized (or, with an integer ``M``, measured) by:
        ``distance`` with ``"auto"`` resolved.

    exact_kl_path_ : ndarray of shape (n_exact_sizes, 3)
        With the exact distance: the sizes measured by it (rows: budget M, estimate of
        ``KL(coreset posterior || full posterior)`` in nats, Pareto k-hat of its weights);
        empty otherwise.

    exact_kl_estimate_ : float or None
        With the exact distance: the estimate of ``KL(coreset posterior || full
        posterior)`` between the exact posteriors, in nats, of the returned weights (0 for a
        coreset of every row); ``None`` otherwise.

    exact_pareto_k_ : float or None
        With the exact distance: the Pareto k-hat of the importance weights behind
        ``exact_kl_estimate_`` (the larger of the coreset posterior's and the full
        posterior's over the proposal); above 0.7 the estimate cannot be trusted and ``fit``
        warns. ``None`` otherwise.

    laplace_exact_kl_ : float or None
        With the exact distance: ``KL(full data's Laplace approximation || full
        posterior)`` from the same draws, what a Gaussian method on all rows would be off
        by (the baseline of ``exact_kl_estimate_``); ``None`` otherwise.

    n_draws_ : int
        The draws per iteration used (``n_draws`` with ``"auto"`` resolved).

    history_ : ndarray of shape (`n_iter_`, 3)
        Per Monte Carlo iteration: the estimate of ``KL(pi_w || pi)`` in nats of the
        proposed weights (half the variance of the log density ratio over the S draws),
        the damping after the iteration, and 1.0 if the proposal was accepted.

    n_iter_ : int
        Monte Carlo iterations run.

    stop_reason_ : str
        Why the iterations stopped: ``"tol"``, ``"n_iter_no_change"``, ``"max_iter"``,
        ``"constant potentials"`` (nothing to regress on), or ``"whole data"`` when the
        coreset holds every row of positive weight (``M`` at least their number, or a wide
        design with ``M="auto"``), which is then the exact answer.
"""

_fill_qn_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC,
                        qn_params=_QN_PARAMS_DOC, qn_attrs=_QN_ATTRS_DOC)


@_fill_qn_doc
class QuasiNewtonCoreset(LikelihoodCoreset):
    """Coreset by importance subsampling and quasi-Newton refinement (Naik, Chen & Campbell,
    2022).

    Draws candidate rows by importance (``candidates``), then optimises only their weights
    so that the coreset posterior ``pi_w`` matches the full posterior ``pi``: quasi-Newton
    steps on ``KL(pi_w || pi)``, whose gradient ``-Cov_w[f_I, (s - w)^T f]`` and Hessian
    ``Cov_w[f_I, f_I]`` are covariances of the rows' log-likelihoods. The first step uses
    their exact values under the full data's Laplace approximation (to second order); the
    next ones estimate them from S draws of ``pi_w``. Each step is the regression of the
    full data's log-likelihood on the coreset rows' log-likelihoods. With ``M="auto"`` the
    candidate set grows, reusing the rows already chosen, until the KL estimate is below
    ``target_kl``. This is the constructor for large N.

    Parameters
    ----------
    M : int or "auto", default="auto"
        Number of rows in the coreset (all rows with positive weight when there are
        fewer). Weights that the optimisation drives to zero are dropped, so the coreset
        may be smaller. ``"auto"``: the smallest of a growing sequence of sizes whose KL
        estimate is below ``target_kl``, up to ``max_rows`` rows and ``max_time`` seconds;
        every row of positive weight, with a warning and without a pass over the data, when
        the ``p (p + 3) / 2`` rows a posterior of ``p`` parameters needs are at least half
        of them or more than twice ``max_rows`` (a wide design, see Notes), except for rows
        in a ``np.memmap`` or a dask array, which keep the budget.
    {qn_params}
    {common_params}
    Attributes
    ----------
    {qn_attrs}
    {common_attrs}
    See Also
    --------
    UniformCoreset : A uniform subset with uniform weights.
    SparseVICoreset : Greedy selection with the same objective, much slower at large N.

    Notes
    -----
    **Candidates.** The full data's Laplace approximation ``N(theta*, Sigma)`` is fitted by
    Newton's method from a pilot (a class-balanced uniform subsample of ``max(5000, 20 p)``
    rows), every pass summed over row chunks. Row n gets the importance ``w_n (0.2 + 0.8
    (score_n / mean score + leverage_n / mean leverage) / 2)`` with ``score_n = |d1_n|
    sqrt(v_n)`` and ``leverage_n = c_n v_n``, where ``v_n = a_n^T Sigma a_n`` is the
    posterior variance of its linear predictor and ``d1_n``, ``-c_n`` the first and second
    derivatives of its log-likelihood there. The candidates are a priority sample on it
    (Duffield, Lund & Thorup, 2007): the rows of highest importance / uniform draw, with
    inverse-probability weights, which are unbiased for every sum over rows. Rows whose
    importance dominates are kept with certainty and their own weight; a larger budget keeps
    a superset of a smaller one's rows.

    **The exact first step.** With ``theta = theta* + L z`` (``Sigma = L L^T``) and
    ``z ~ N(0, I)``, the covariance of two rows' log-likelihoods expanded to second order
    is ``d1_m d1_k (b_m . b_k) + c_m c_k (b_m . b_k)^2 / 2`` with ``b_m = L^T a_m``, so the
    quasi-Newton step can be taken with its exact moments: it minimises, over ``w >= 0``::

        KL_2(w) = |sum_m w_m d1_m b_m - L^T g|^2 / 2
                  + |sum_m w_m c_m b_m b_m^T - L^T H L|_F^2 / 4,

    the second-order expansion of ``KL(pi_w || pi)`` with ``g`` and ``H`` the full data's
    log-likelihood gradient and negative Hessian at ``theta*`` (the candidates' weights are
    calibrated so that their log-likelihood has the full data's gradient and Hessian at the
    mode; a small penalty keeps them close to the inverse-probability weights). It is solved
    by block coordinate descent over blocks of 2000 rows. ``kl_estimate_`` is ``KL_2`` of
    the returned weights. With about ``p (p + 3) / 2`` well-spread candidates the step can
    match the second-order terms exactly; ``M="auto"`` starts there (at least 500 rows) and
    grows the budget where the decay of the estimate predicts it meets ``target_kl``.

    **Sized by the exact posterior** (``distance="exact"``, the default in a Pipeline whose
    final estimator has ``method="mcmc"``). ``kl_estimate_`` compares Laplace
    approximations, which the exact step matches: it cannot see the non-Gaussian part of the
    posteriors, which is why one samples. Once it meets ``target_kl``, the distance between
    the exact posteriors, ``KL(pi_w || pi)``, is estimated by importance weighting: 1,000
    draws of a proposal ``q``, half from the full data's Laplace approximation and half from
    it widened by 1.3 (a defensive mixture, Hesterberg 1995), weighted by ``pi_w~ / q``
    (Pareto-smoothed, Vehtari et al. 2024) for expectations under ``pi_w``; then ``KL =
    E_w[log pi_w~ - log pi~] + log E_w[pi~ / pi_w~]``, the normalising constants cancelling.
    ``log pi~`` of the draws is one pass over all rows, made once: the proposal does not
    depend on the coreset, so each larger size tried costs only its own rows. When the
    Pareto k-hat of ``pi~ / q`` exceeds 0.5 (a skewed exact posterior whose mean is off the
    mode, e.g. rare events), ``q`` is moved to the exact posterior's mean estimated from
    those draws and the pass is made again (on rare events at 5e4 rows this took k-hat
    from 0.8 to 0.1-0.3). The coreset
    grows until the estimate is below ``target_exact_kl``, or below the full data's Laplace
    approximation's own distance (``laplace_exact_kl_``, from the same draws) when that is
    smaller, down to a tenth of the target.
    Costs, one core, 5e4-3e5 rows and 30-60 features: the exact rule's build took 2.4-28
    times the Laplace-level rule's (the passes about a quarter of the difference, the rest
    the exact steps of the larger sizes), the sampler then ran on 2-10 times more rows, and
    build plus sampler took 1.5-2.4 times as long; the route went from 0.02-0.27 nats to
    0.001-0.009 nats from the exact posterior. Measured against the KL of NUTS draws of
    the coreset posterior weighted over all rows (:func:`~skcoreset.metrics.exact_kl`), the
    estimate was within 25 % at 0.001-0.3 nats; it is low for coresets much farther off,
    whose posterior the proposal covers poorly (0.22 against 0.36 nats at 15 rows), which
    only matters below the target. A Pareto k-hat of the weights above 0.7 warns
    (:class:`~skcoreset.exceptions.ImportanceSamplingWarning`). A negative binomial
    overdispersion is held at the value the constructor estimated.

    **Wide designs.** When ``p (p + 3) / 2`` is at least half of the rows of positive weight
    (e.g. 2,001 parameters of one-hot columns, 2e6 moments, and 1e6 rows) no coreset much
    smaller than the data can stand in for it, and one of about as many rows saves nothing
    and is never exact. When it is more than twice ``max_rows`` (e.g. 986 parameters, 5e5
    moments) no coreset within the budget can: on the benchmarks ``target_kl=0.1`` took
    about three quarters of ``p (p + 3) / 2`` rows (d = 50 and 100), and a fifth of them
    left 4 nats (d = 100). ``M="auto"`` then returns every row of positive weight with its own
    weight (``stop_reason_="whole data"``, ``kl_estimate_=0``) before any pass over the data,
    and warns, naming the numbers; ``fit_coreset`` and a Pipeline hand X itself to the next
    step, not a copy, when every row has positive weight. An integer ``M`` still builds a
    coreset of that size (approximate: see ``kl_estimate_``). Rows in a ``np.memmap`` or a
    dask array are not gathered whole into this process: they keep the budget
    ``max_rows``, and the budget's warning says why the target is out of reach.

    **The Monte Carlo iterations** (Algorithm 1 of Naik, Chen & Campbell, 2022) then draw
    S samples from ``pi_w`` (its Laplace approximation, or emcee walkers) and regress the
    full data's log-likelihood on the coreset rows', which also sees the terms beyond second
    order. A proposal is accepted when its Monte Carlo KL estimate on its own draws is below
    that of the last accepted weights, or, within the Monte Carlo noise of that comparison,
    when its residual variance is the smaller of the two on the same draws; the step is
    damped Levenberg-Marquardt style (raised tenfold after a rejection, lowered threefold
    after an acceptance). The full data enter each iteration only through
    ``sum_n s_n f_n(theta_s)`` for the S draws, accumulated over row chunks or estimated
    with control variates. A float ``np.memmap`` is read chunk by chunk: besides the
    targets and weights, memory is ``O(M d)`` plus a chunk, whatever N. On a dask array
    the same steps run where the chunks live: every sum over rows (the Laplace fit's
    passes, the potentials of the iterations) is one reduction over the chunks, the pilot
    and the candidates are priority samples merged from all chunks, and only they and the
    sums reach this process. The priority keys are hashes of the row numbers, so the same
    ``random_state`` gives the same coreset in memory and on a cluster, up to rounding.

    References
    ----------
    C. Naik, T. Campbell and J. Chen, "Fast Bayesian coresets via subsampling and
    quasi-Newton refinement", NeurIPS 2022.

    T. Hesterberg, "Weighted average importance sampling and defensive mixture
    distributions", Technometrics 37(2), 1995.

    A. Vehtari, D. Simpson, A. Gelman, Y. Yao and J. Gabry, "Pareto smoothed importance
    sampling", Journal of Machine Learning Research 25(72), 2024.

    N. Duffield, C. Lund and M. Thorup, "Priority sampling for estimation of arbitrary
    subset sums", Journal of the ACM 54(6), 2007.

    J.-C. Deville and C.-E. Sarndal, "Calibration estimators in survey sampling", Journal
    of the American Statistical Association 87(418), 1992.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import QuasiNewtonCoreset
    >>> from skcoreset.datasets import make_logistic_regression
    >>> X, y = make_logistic_regression(20_000, coef=[1.0, -2.0, 0.5], random_state=0)
    >>> coreset = QuasiNewtonCoreset(M=200, random_state=0).fit(X, y)
    >>> len(coreset.sample_indices_) <= 200, coreset.kl_estimate_ < 0.1
    (True, True)
    >>> auto = QuasiNewtonCoreset(target_kl=0.01, random_state=0).fit(X, y)
    >>> bool(auto.kl_estimate_ <= 0.01)
    True
    """

    _parameter_constraints = {
        **LikelihoodCoreset._parameter_constraints,
        "M": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        "candidates": [StrOptions({"auto", "uniform"})],
        "target_kl": [Interval(Real, 0, None, closed="neither")],
        "max_rows": [Interval(Integral, 1, None, closed="left")],
        "max_time": [Interval(Real, 0, None, closed="neither"), None],
        "n_draws": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "n_subsample": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                        None],
        "sampler": [StrOptions({"laplace", "mcmc"})],
        "stratify": ["boolean"],
        "distance": [StrOptions({"auto", "laplace", "exact"})],
        "target_exact_kl": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, M: int | Literal["auto"] = "auto", *, candidates: str = "auto",
                 target_kl: float = 0.1, distance: str = "auto",
                 target_exact_kl: float = 0.01, max_rows: int = 20_000,
                 max_time: float | None = None, n_draws: int | Literal["auto"] = "auto",
                 max_iter: int = 0, tol: float = 1e-3, n_iter_no_change: int = 4,
                 n_subsample: int | Literal["auto"] | None = "auto",
                 sampler: str = "laplace", stratify: bool = True, model: str = "auto",
                 link: str = "log", noise_scale: float = 1.0, prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 random_state: RandomStateLike = None, verbose: int = 0) -> None:
        super().__init__(M, model=model, link=link, noise_scale=noise_scale,
                         prior_scale=prior_scale, intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.candidates = candidates
        self.target_kl = target_kl
        self.distance = distance
        self.target_exact_kl = target_exact_kl
        self.max_rows = max_rows
        self.max_time = max_time
        self.n_draws = n_draws
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.n_subsample = n_subsample
        self.sampler = sampler
        self.stratify = stratify

    def _resolve_subsample(self, n_candidates):
        if self.n_subsample == "auto":
            return None if n_candidates <= _AUTO_EXACT_ROWS else _AUTO_SUBSAMPLE
        if self.n_subsample is not None and self.n_subsample >= n_candidates:
            return None
        return self.n_subsample

    def _whole_data(self, data, rng):
        """Every row of positive weight with its own weight: in memory in their order,
        sharing X when every row has positive weight; gathered from the chunks on a
        cluster."""
        self.history_, self.kl_estimate_ = np.empty((0, 3)), 0.0
        self.n_iter_, self.stop_reason_ = 0, "whole data"
        self.kl_path_ = np.empty((0, 2))
        if self.distance_ == "exact":  # the exact posterior itself
            self.exact_kl_estimate_, self.exact_pareto_k_ = 0.0, -np.inf
        if data.chunked:
            return data.subsample(data.n_positive(), rng)
        rows = np.flatnonzero(data.sample_weight > 0)
        return data.take(rows, data.sample_weight[rows])

    def _fit_rows(self, data, family, prior_prec, rng):
        """The coreset of a row storage: the same steps in memory, on a ``np.memmap`` (read
        in row chunks) and on a cluster (every sum over rows one reduction over the chunks,
        the candidates a priority sample merged from all chunks; only the candidate rows and
        sums reach this process)."""
        start = time.perf_counter()
        self.n_draws_ = (auto_n_draws(len(prior_prec)) if self.n_draws == "auto"
                         else self.n_draws)
        self.distance_ = (self.distance if self.distance != "auto" else
                          "exact" if getattr(self, "_for_sampler", False)
                          and isinstance(self.M, str) else "laplace")
        self.exact_kl_path_ = np.empty((0, 3))
        self.exact_kl_estimate_ = self.exact_pareto_k_ = self.laplace_exact_kl_ = None
        auto = isinstance(self.M, str)
        n_candidates = data.n_positive()
        budget = min(self.max_rows if auto else self.M, n_candidates)
        p = len(prior_prec)
        needed = p * (p + 3) // 2  # the second-order moments the coreset must match
        self._all_rows_reason, wide = None, None
        advice = ""
        if auto and 2 * needed >= n_candidates:
            wide = (f"a posterior of {p} parameters needs about {needed:,} coreset rows "
                    "(p(p+3)/2) to match the full data's to second order, at least half of "
                    f"the {n_candidates:,} rows of positive weight")
        elif auto and needed > 2 * self.max_rows:
            # the sizes that met target_kl=0.1 held 3/4 of p(p+3)/2 rows (d = 50, 100): not
            # even half of them fit in the budget
            wide = (f"a posterior of {p} parameters needs about {needed:,} coreset rows "
                    "(p(p+3)/2) to match the full data's to second order, more than twice "
                    f"max_rows={self.max_rows}")
            advice = " or raise max_rows,"
        if wide is not None and not (data.chunked or data.file_backed):
            # no coreset within reach can stand in for these data: the exact answer, before
            # any pass over them
            self._all_rows_reason = (
                f"{wide}; with M='auto' the coreset is every row (exact), so the next step "
                "fits all rows",
                f"For a wide design, fit the estimator on all rows directly;{advice} an "
                "integer M forces a smaller, approximate coreset (see kl_estimate_).")
            return self._whole_data(data, rng)
        first = min(budget, max(_MIN_AUTO_ROWS, needed)) if auto else budget
        if first == n_candidates:  # the whole data: nothing to approximate
            return self._whole_data(data, rng)
        n_subsample = self._resolve_subsample(n_candidates)
        progress = Progress("QuasiNewtonCoreset", budget, self.verbose, unit="rows")
        # every product below is small or a single chunk: BLAS threads only add
        # synchronisation (as in SparseVICoreset)
        with threadpool_limits(limits=1, user_api="blas"):
            found = draw_candidates(
                data, family, prior_prec, self.fit_intercept, budget, rng,
                stratify=self.stratify and family.binary,
                uniform=self.candidates == "uniform", subsample=n_subsample)
            laplace_kl = LaplaceKL(found.laplace, family, prior_prec, self.fit_intercept)
            # an overdispersion the estimator estimates again: calibrate it too
            dispersion = (DispersionSums(*data.sum(dispersion_sums, found.laplace.mean, family,
                                                   self.fit_intercept))
                          if getattr(self, "_dispersion_estimated", False) else None)
            # one pass over the data, when first needed
            exact = None if self.distance_ != "exact" else functools.cache(
                functools.partial(ExactDistance, data, family, found.laplace.mean,
                                  found.laplace.precision, prior_prec, self.fit_intercept,
                                  rng))
            part, calibrated, exact_reading = self._exact_step(
                found, family, laplace_kl, first, budget, start, progress, wide, dispersion,
                exact)
            result = quasi_newton_weights(
                data, part, family, weights=calibrated, prior_prec=prior_prec,
                fit_intercept=self.fit_intercept, n_draws=self.n_draws_,
                max_iter=self.max_iter, tol=self.tol,
                n_iter_no_change=self.n_iter_no_change, n_subsample=n_subsample,
                sampler=self.sampler, reference=found.laplace,
                subsample_rows=None if n_subsample is None
                else found.subsample.draw(n_subsample),
                random_state=rng, verbose=self.verbose)
        self.history_ = result.history
        self.n_iter_ = len(result.history)
        self.stop_reason_ = result.stop_reason
        weights = result.weights
        if family.binary and len(np.unique(part.y[weights > 0])) < 2:
            weights = calibrated  # the iterations dropped a class: keep the exact step's
        self.kl_estimate_ = laplace_kl(part.X, part.y, weights, part.offset)
        if exact is not None:
            self._set_exact(exact(), part, weights, exact_reading)
        return part.take(np.arange(part.size), weights)

    def _exact_target(self, exact):
        """``target_exact_kl``, or the full data's Laplace approximation's distance to the
        exact posterior when it is smaller (down to a tenth of the target): MCMC on a coreset
        further off than a Gaussian fit of all rows would be wasted."""
        return min(self.target_exact_kl,
                   max(exact.laplace().kl, self.target_exact_kl / _LAPLACE_FLOOR))

    def _set_exact(self, exact, part, weights, reading=None):
        """The exact distance's attributes of the returned weights (``reading`` when it is
        that of the exact step's weights and they are returned); warns when its importance
        weights cannot be trusted."""
        if reading is None or not np.array_equal(reading[0], weights):
            reading = exact(part.X, part.y, weights, part.offset)
        else:
            reading = reading[1]
        self.exact_kl_estimate_, self.exact_pareto_k_ = reading
        self.laplace_exact_kl_ = exact.laplace().kl
        if reading.pareto_k > _MAX_PARETO_K:
            warn(
                f"QuasiNewtonCoreset: the estimate of KL(coreset posterior || full "
                f"posterior), {reading.kl:.3g} nats, rests on importance weights with Pareto "
                f"k-hat {reading.pareto_k:.2f} > {_MAX_PARETO_K}: the exact posteriors are "
                "too far from the full data's Laplace approximation for its draws to "
                "measure them, and the estimate is then usually too small. Check the fit "
                "with skcoreset.metrics.exact_kl on the MCMC draws, or lower target_kl.",
                ImportanceSamplingWarning)

    def _far_advice(self):
        if isinstance(self.M, str):
            return ("Raise max_rows (or max_time) so that M='auto' can grow the coreset to "
                    "target_kl")
        return (f"Increase M (now {self.M}), or set M='auto' to size the coreset for a "
                "target accuracy (target_kl)")

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        part = self._fit_rows(InMemoryRows(X, y, sample_weight, offset), family, prior_prec,
                              rng)
        return part.indices, part.weights

    def _exact_step(self, found, family, laplace_kl, size, budget, start, progress,
                    wide=None, dispersion=None, exact=None):
        """The candidates at ``size`` rows (growing up to ``budget`` with ``M="auto"``) and
        their weights after the exact first step, with the exact reading of those weights
        (``(weights, ExactReading)``, or None when not read); sets ``kl_path_`` (and
        ``exact_kl_path_`` when ``exact()`` gives the :class:`ExactDistance`, by which the
        coreset then grows on once ``target_kl`` is met) and warns when a budget stops the
        growth short of the target (saying why no budget can meet it when ``wide``, the wide
        design's rows needed, is given)."""
        auto = isinstance(self.M, str)
        path, exact_path, reading = [], [], None
        while True:
            part = found.rows.draw(size)
            weights, kl = self._calibrated(part, family, found.laplace, laplace_kl,
                                           dispersion)
            path.append((part.size, kl))
            progress.line(part.size, f"KL estimate {kl:.4e} nats")
            if not auto:
                break
            measure = f"{kl:.3g} nats, above target_kl={self.target_kl:g}"
            if kl <= self.target_kl:
                if exact is None:
                    break
                reading = exact()(part.X, part.y, weights, part.offset)
                exact_path.append((part.size, reading.kl, reading.pareto_k))
                progress.line(part.size, f"exact KL estimate {reading.kl:.4e} nats "
                              f"(k-hat {reading.pareto_k:.2f})")
                target = self._exact_target(exact())
                if reading.kl <= target:
                    break
                measure = (f"{kl:.3g} nats between their Laplace approximations, and "
                           f"{reading.kl:.3g} nats between the exact posteriors, above "
                           f"{target:.3g} (target_exact_kl={self.target_exact_kl:g}, or "
                           "the full data's Laplace approximation's distance when smaller)")
            elapsed = time.perf_counter() - start
            if size >= budget or (self.max_time is not None and elapsed >= self.max_time):
                limit = (f"max_rows={self.max_rows}" if size >= budget
                         else f"max_time={self.max_time:g} s ({elapsed:.1f} s spent)")
                advice = ("Raise the budget for a closer coreset." if wide is None else
                          "The target is out of reach of any coreset much smaller than "
                          f"the data: {wide} (rows on a cluster or in a np.memmap are not "
                          "gathered whole into this process). Fit the estimator on all rows "
                          "directly (it reads them where they are).")
                warn(
                    f"QuasiNewtonCoreset: the coreset stopped growing at {part.size} rows, "
                    f"the budget {limit}, with an estimated KL(coreset posterior || full "
                    f"posterior) of {measure}. {advice}", UserWarning)
                break
            if exact_path:
                size = min(budget, _next_budget([row[:2] for row in exact_path], target))
            else:
                size = min(budget, _next_budget(path, self.target_kl))
        self.kl_path_ = np.array(path, dtype=float)
        # a fresh array: an empty reshaped one keeps strides its copies do not share
        self.exact_kl_path_ = np.array(exact_path, dtype=float).reshape(-1, 3).copy()
        # the last exact reading, when it is of these weights, serves _set_exact
        if not exact_path or exact_path[-1][0] != part.size:
            reading = None
        return part, weights, None if reading is None else (weights, reading)

    def _calibrated(self, part, family, full, laplace_kl, dispersion=None):
        """The exact step's weights and their KL between Laplace approximations: the first
        penalty whose second-order KL agrees with it (within a factor 2), else the best of
        all penalties and of the starting weights. For the logistic model only weights that
        keep both classes count (the starting weights do)."""
        fit = SecondOrderFit(part.X, part.y, family, self.fit_intercept, full.mean,
                             full.precision, full.grad_sum, full.neg_hessian_sum,
                             dispersion=dispersion, offset=part.offset)
        classes = np.unique(part.y) if family.binary else None
        best = (part.weights, laplace_kl(part.X, part.y, part.weights, part.offset))
        for penalty in _PENALTIES:
            weights = fit.solve(part.weights, penalty=penalty)
            if classes is not None and len(np.unique(part.y[weights > 0])) < len(classes):
                continue
            kl = laplace_kl(part.X, part.y, weights, part.offset)
            if kl < best[1]:
                best = (weights, kl)
            if kl <= 2.0 * fit.kl(weights):
                break
        return best
