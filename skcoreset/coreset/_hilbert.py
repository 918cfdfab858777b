"""Hilbert coresets (Campbell & Broderick 2018): random projections of the log-likelihoods,
then a sparse non-negative vector-sum solver (GIGA or Frank-Wolfe)."""

from numbers import Integral, Real
from typing import Literal

import numpy as np

from .._backend import take_offset
from .._warnings import warn
from .._inference import laplace
from .._posterior import GaussianPosterior
from .._sklearn_compat import Interval, StrOptions
from ..solvers import frank_wolfe, giga
from .._docstrings import fill_doc
from .._progress import Progress, format_seconds
from ._base import LikelihoodCoreset
from ._checks import uniform_fallback
from ._docs import COMMON_ATTRS_DOC, COMMON_PARAMS_DOC
from ._projection import project_loglik, weighting_weights
from .._typing import RandomStateLike

# projection_dim="auto": the papers' J = 500, or M when larger (see _HILBERT_PARAMS_DOC).
_AUTO_MIN_PROJECTION = 500
# ... but at large N, the draws beyond max(M, _AUTO_FLOOR) are dropped to keep the N x J
# float32 matrix within _AUTO_MEMORY GiB: at N = 1e6, d = 10, M = 100 the coreset's KL in nats
# was no worse with J = 134 than with 500 (benchmarks/README.md), while time and memory
# follow J (the projection and every solver iteration read the matrix).
_AUTO_MEMORY = 0.5
_AUTO_FLOOR = 100
# The projected vectors are stored as float32: the Monte Carlo projection's relative error
# (~ 1 / sqrt(J)) dwarfs float32 rounding, and GIGA's error measured against the float64
# vectors is unchanged (tests/coreset/test_hilbert.py).
_VECTOR_DTYPE = np.float32
# A coreset below this fraction of its budget after the solver converged gets a warning.
_SMALL_FRACTION = 0.5
# Solver iterations are capped at this many per row: a budget M far above N (e.g. 10**10)
# only reweights rows already chosen, and slow (sublinear) progress must not run for ever.
_ITER_PER_ROW = 10
# Projected error under which the solver has matched the projection: more points can only
# come from a larger projection.
_MATCHED_ERROR = 1e-6


class _HilbertCoreset(LikelihoodCoreset):
    """Shared fit of the Hilbert coresets; subclasses choose the solver."""

    _parameter_constraints = {
        **LikelihoodCoreset._parameter_constraints,
        # J = 1 centres every log-likelihood to zero: nothing to fit, an empty coreset
        "projection_dim": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "weighting": [StrOptions({"laplace", "laplace-subsample", "prior"})],
        "n_subsample": [Interval(Integral, 1, None, closed="left"), None],
        "max_memory": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, M: int = 100, *, projection_dim: int | Literal["auto"] = "auto",
                 weighting: str = "laplace", n_subsample: int | None = None,
                 max_memory: float | None = 4.0, model: str = "auto", link: str = "log",
                 noise_scale: float = 1.0, prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 random_state: RandomStateLike = None, verbose: int = 0) -> None:
        super().__init__(M, model=model, link=link, noise_scale=noise_scale,
                         prior_scale=prior_scale, intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.projection_dim = projection_dim
        self.weighting = weighting
        self.n_subsample = n_subsample
        self.max_memory = max_memory

    @staticmethod
    def _gib_rows(gib):
        """Rows x J that ``gib`` GiB of float32 vectors hold (``None``: unlimited)."""
        if gib is None:
            return np.inf
        return gib * 2**30 / np.dtype(_VECTOR_DTYPE).itemsize

    def _memory_rows(self):
        """Rows x J the budget ``max_memory`` (GiB) allows for the float32 vectors."""
        return self._gib_rows(self.max_memory)

    def _resolve_projection_dim(self, n_rows=None):
        """J for ``n_rows`` rows: ``projection_dim``, or for ``"auto"`` max(500, M), trimmed
        towards max(M, 100) to keep within ``_AUTO_MEMORY`` and then towards 500 to fit
        ``max_memory`` (``n_rows=None``: neither, e.g. bounded merge-reduce blocks)."""
        if self.projection_dim != "auto":
            return int(self.projection_dim)
        wanted = max(_AUTO_MIN_PROJECTION, min(self.M, n_rows or self.M))
        if n_rows:
            # draws beyond the coreset's needs only refine the projection: dropped at large N
            needed = min(wanted, max(_AUTO_FLOOR, min(self.M, n_rows)))
            wanted = max(min(wanted, int(self._gib_rows(_AUTO_MEMORY) // n_rows)), needed)
            if np.isfinite(self._memory_rows()):
                fits = int(self._memory_rows() // n_rows)
                wanted = max(min(wanted, fits), min(_AUTO_MIN_PROJECTION, wanted))
        return wanted

    def _check_memory(self, n_rows, n_proj):
        """Refuse an ``(n_rows, n_proj)`` projection larger than ``max_memory``."""
        if n_rows * n_proj <= self._memory_rows():
            return
        size = n_rows * n_proj * np.dtype(_VECTOR_DTYPE).itemsize / 2**30
        name = type(self).__name__
        raise MemoryError(
            f"{name} would project {n_rows} rows on {n_proj} draws: a {n_rows} x {n_proj} "
            f"float32 matrix of {size:.1f} GiB, more than max_memory={self.max_memory} GiB. "
            f"Use StreamingCoreset({name}(...), block_size=...), whose memory is bounded by "
            "block_size * projection_dim (it also takes memmaps and dask arrays), or lower "
            "projection_dim, or raise max_memory (None: no limit) if the memory is there.")

    def _stage(self, what):
        """Print ``[Name] what ...`` before a long stage (if verbose); time it."""
        progress = Progress(type(self).__name__, 1, self.verbose)
        progress.message(f"{what} ...")
        return progress

    def _weighting_distribution(self, X, y, sample_weight, family, prior_prec, rng,
                                offset=None):
        """The distribution pi-hat the projection draws parameters from.

        The Laplace posterior of the rows with the weights of :func:`weighting_weights`
        (and their offsets, when they have them): under the Poisson model the weights as
        they enter the log-likelihood, so exposures carried by the weights of rates keep
        their scale as with ``exposure=``; under the others the weights over their mean.
        """
        if self.weighting == "prior":
            return GaussianPosterior(np.zeros(len(prior_prec)), np.diag(1.0 / prior_prec))
        rows = np.flatnonzero(sample_weight > 0)
        if self.weighting == "laplace-subsample":
            size = self.n_subsample or int(np.sqrt(X.shape[0]))
            rows = rng.choice(rows, size=min(max(size, 1), len(rows)), replace=False)
        progress = self._stage(f"Laplace fit of the weighting distribution on {len(rows)} rows")
        result = laplace(X[rows], y[rows], family,
                         sample_weight=weighting_weights(sample_weight[rows], family),
                         prior_prec=prior_prec, fit_intercept=self.fit_intercept,
                         offset=take_offset(offset, rows),
                         verbose=max(int(self.verbose) - 1, 0))
        progress.message(f"weighting distribution fitted in {result.n_iter} Newton steps, "
                         f"{format_seconds(progress.elapsed())}")
        return result.posterior

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        rows = np.flatnonzero(sample_weight > 0)  # zero-weight rows are never projected
        self.projection_dim_ = self._resolve_projection_dim(len(rows))
        self._check_memory(len(rows), self.projection_dim_)
        thetas = self._draw_projection(X, y, sample_weight, family, prior_prec, rng, offset)
        if len(rows) < len(sample_weight):
            X, y, offset = X[rows], y[rows], take_offset(offset, rows)
        local, factor = self._solve_projected(X, y, sample_weight[rows], family, thetas,
                                              offset=offset)
        if len(local) == 0:
            return self._fallback(sample_weight, rng)
        self._warn_if_small(len(local), len(rows))
        indices = rows[local]
        return indices, factor * sample_weight[indices]

    def _draw_projection(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        """Fit the weighting distribution and draw the J parameters of the projection.

        Split from :meth:`_build_projected` so that merge-reduce and the dask path can draw
        them once and project every block under the same pi-hat.
        """
        self.weighting_posterior_ = self._weighting_distribution(
            X, y, sample_weight, family, prior_prec, rng, offset)
        return self.weighting_posterior_.sample(self.projection_dim_, random_state=rng)

    def _solve_projected(self, X, y, sample_weight, family, thetas, target=None, offset=None):
        """Project on ``thetas`` (with the rows' ``offset`` in their linear predictors), run
        the solver; return the selected rows and the factor by which each row's
        ``sample_weight`` is multiplied.

        Weights and target are rescaled by one power of two (exact) before the float32
        projection, so weights of 1e-300 or 1e300 neither underflow nor overflow there.
        """
        self._check_memory(X.shape[0], len(thetas))
        shift = -np.frexp(sample_weight.max())[1] if sample_weight.max() > 0 else 0
        unit = np.ldexp(sample_weight, shift)
        progress = self._stage(f"projecting {X.shape[0]} rows on {len(thetas)} draws")
        vectors, total = project_loglik(X, y, unit, family, thetas, self.fit_intercept,
                                        dtype=_VECTOR_DTYPE, return_sum=True, offset=offset)
        progress.message(f"projected in {format_seconds(progress.elapsed())}")
        # the float64 sum, not that of the float32 rows
        target = total if target is None else np.ldexp(target, shift)
        result = self._solve(vectors, target)
        self.error_ = result.error
        self.history_ = result.history
        self.stop_reason_ = result.stop_reason
        if self.verbose:
            print(f"[{type(self).__name__}] {np.count_nonzero(result.weights)} points, "
                  f"relative error {result.error:.3e} ({result.stop_reason})")
        indices = np.flatnonzero(result.weights)
        return indices, result.weights[indices]

    def _build_projected(self, X, y, sample_weight, family, thetas, target=None, rng=None,
                         offset=None):
        """Project on the given draws, run the solver; deterministic given ``thetas``.

        ``target`` is the projected vector to approximate, by default the sum of the rows'
        vectors; merge-reduce passes the exact sum of all the data the rows stand in for.
        A solver that selects nothing (the projected log-likelihoods carry no information)
        falls back to a uniform subset drawn with ``rng``, so the coreset is never empty.
        """
        indices, factor = self._solve_projected(X, y, sample_weight, family, thetas, target,
                                                offset)
        if len(indices) == 0:
            return self._fallback(sample_weight, rng or np.random.RandomState(0))
        return indices, factor * sample_weight[indices]

    def _block_projection(self, n_samples, family, prior_prec, rng, *, full_laplace,
                          subsample):
        """Draw the J projection parameters once for every block of a merge-reduce tree.

        Every block is then projected under the same weighting distribution pi-hat, so the
        block coresets and their merges approximate the same vector (Campbell & Broderick
        2018, eq. 39). ``"laplace"`` is the Laplace posterior of all the data
        (``full_laplace()``, on the weights as in memory);
        ``"laplace-subsample"`` that of ``n_subsample`` (default ``sqrt(N)``) uniformly
        drawn rows; ``"prior"`` the prior. Sets ``weighting_posterior_`` and
        ``projection_dim_`` (blocks are bounded, so ``"auto"`` needs no memory cap here).
        """
        if self.weighting == "laplace":
            posterior = full_laplace()
        elif self.weighting == "laplace-subsample":
            X, y, w, offset = subsample(max(self.n_subsample or int(np.sqrt(n_samples)), 1),
                                        rng)
            posterior = laplace(X, y, family, sample_weight=weighting_weights(w, family),
                                prior_prec=prior_prec, fit_intercept=self.fit_intercept,
                                offset=offset).posterior
        else:  # the prior needs no data
            posterior = self._weighting_distribution(None, None, None, family, prior_prec,
                                                     rng=None)
        self.weighting_posterior_ = posterior
        self.projection_dim_ = self._resolve_projection_dim()
        return posterior.sample(self.projection_dim_, random_state=rng)

    def _build_block(self, X, y, sample_weight, family, prior_prec, rng, *, thetas=None,
                     target=None, offset=None):
        if thetas is None:
            return self._build(X, y, sample_weight, family, prior_prec, rng, offset)
        return self._build_projected(X, y, sample_weight, family, thetas, target, rng, offset)

    def _fallback(self, sample_weight, rng):
        """A uniform coreset, when the solver returns no point (a coreset is never empty)."""
        return uniform_fallback(
            self, f"the projected log-likelihoods sum to zero (stop reason "
            f"{self.stop_reason_!r}): under the weighting distribution the data do not inform "
            "the parameters, and no point improves on an empty coreset; check the data "
            "(constant columns, fit_intercept) or use weighting='prior'.", sample_weight, rng)

    def _warn_if_small(self, size, n_rows):
        """Warn when the projection, not the budget, kept the coreset far below M.

        That is the case when the solver matched the projection or when the coreset already
        has as many points as the centred projection has dimensions (J - 1): further rows
        are linearly dependent on them there, so the solver can only reweight.
        """
        budget = min(self.M, n_rows)
        limited = (size >= self.projection_dim_ - 1 or self.stop_reason_ != "n_iter"
                   or self.error_ <= _MATCHED_ERROR)
        if size >= _SMALL_FRACTION * budget or not limited or self.projection_dim_ > n_rows:
            return
        if self.projection_dim == "auto":
            # "auto" takes at least min(M, N) draws unless max_memory forbids them
            fix = (f"'auto' was limited to {self.projection_dim_} draws by max_memory="
                   f"{self.max_memory} GiB: raise max_memory (None: no limit) or use "
                   "StreamingCoreset")
        else:
            fix = (f"Raise projection_dim (now {self.projection_dim_}; 'auto' uses at least "
                   "M draws where max_memory allows)")
        warn(
            f"{type(self).__name__} returned {size} points for M={self.M}: they match the "
            f"{self.projection_dim_}-dimensional projection of the log-likelihoods to relative "
            f"error {self.error_:.1e} ({self.stop_reason_}), so further iterations add no "
            f"points. {fix} for a larger, more accurate coreset.", UserWarning)


_HILBERT_PARAMS_DOC = """
    projection_dim : int >= 2 or "auto", default="auto"
        Number J of parameter draws from the weighting distribution used to project each
        row's centred log-likelihood to a J-dimensional vector (Campbell & Broderick 2018,
        §4.3, use J = 500). Centring leaves J - 1 dimensions, and a target in them is
        matched exactly by at most J - 1 points (Caratheodory), so a projection much
        smaller than ``M`` lets the solver stop well below the budget (a ``UserWarning``
        says so when the coreset ends below ``M / 2`` for that reason). ``"auto"`` uses
        ``max(500, M)`` draws. At large N it drops the draws beyond ``max(M, 100)`` to
        keep the N x J float32 matrix within 0.5 GiB (J = 134 at N = 1e6 for M <= 134,
        J = M for larger M), and where ``max_memory`` is smaller still it takes as many
        as fit in it, but at least 500 or the number above if that is smaller (fewer
        raise ``MemoryError``). The projection costs N x J float32 values and every solver
        iteration reads them once, so time and memory grow with J.
    weighting : {"laplace", "laplace-subsample", "prior"}, default="laplace"
        Weighting distribution pi-hat of the projection. ``"laplace"``: Laplace posterior of
        the full (weighted) data, a few Newton passes (the papers' "optimal" choice);
        ``"laplace-subsample"``: Laplace posterior of a uniform subsample of ``n_subsample``
        rows, not reweighted (the papers' "realistic" choice, for data too large for a full
        pass); ``"prior"``: the prior.
        Under the Poisson model the Laplace fits use the sample weights as they enter the
        log-likelihood, so counts given with ``exposure=`` and the rates ``y / exposure``
        with ``sample_weight=exposure`` get the same weighting distribution and coreset
        (weights totalling more than 2^32 are scaled down to that total, so that the draws
        stay apart in float32). Under the other models they use the sample weights divided
        by their mean: the projection depends on the relative weights only, multiplying all
        sample weights by ``c`` multiplies the coreset weights by ``c`` and keeps the same
        rows, and a few rows of large weights (binomial cells of many trials) are projected
        under a distribution as informed as one observation per row, which suits the
        projection better than their narrow posterior.
    n_subsample : int, default=None
        Subsample size for ``weighting="laplace-subsample"``; ``None`` means ``sqrt(N)``.
    max_memory : float or None, default=4.0
        Largest size in GiB of the N x J float32 matrix of projected vectors (a hard
        limit; ``projection_dim="auto"`` itself stays within 0.5 GiB where ``max(M, 100)``
        draws fit in it, see above). A larger problem raises ``MemoryError`` before
        allocating it, pointing to :class:`StreamingCoreset` (memory bounded by
        ``block_size * projection_dim``). ``None`` means no limit.
"""

_HILBERT_ATTRS_DOC = """
    error_ : float
        Relative error ``||L - L(w)|| / ||L||`` of the coreset in the projected space.
    history_ : ndarray of shape (n_iter, 2)
        Per solver iteration: number of points in the coreset and relative error.
    stop_reason_ : str
        Why the solver stopped (iteration budget, numerical precision, ...).
    projection_dim_ : int
        The number J of projection draws used (``projection_dim`` with ``"auto"`` resolved).
    weighting_posterior_ : GaussianPosterior
        The weighting distribution the projection drew from.
"""

_fill_hilbert_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC,
                             hilbert_params=_HILBERT_PARAMS_DOC, hilbert_attrs=_HILBERT_ATTRS_DOC)


@_fill_hilbert_doc
class GIGACoreset(_HilbertCoreset):
    """Hilbert coreset by greedy iterative geodesic ascent (Campbell & Broderick 2018, Alg. 1).

    Projects each row's centred log-likelihood onto J draws from a weighting distribution,
    then runs M iterations of GIGA on the resulting vectors (each adds or reweights one point
    along the geodesic towards the full-data direction) and rescales the weights optimally
    (eq. 27). The coreset has at most M rows.

    Parameters
    ----------
    M : int, default=100
        Number of GIGA iterations (coreset size budget; at most ``10 N`` are run). The
        coreset has at most ``M`` rows, often fewer: an iteration may reweight a row already
        in the coreset (e.g. about 330 rows at ``M=1000`` on 1e4 logistic rows with the
        Laplace weighting, whatever ``projection_dim``).
    {hilbert_params}
    {common_params}
    Attributes
    ----------
    {hilbert_attrs}
    {common_attrs}
    See Also
    --------
    FrankWolfeCoreset : The Frank-Wolfe baseline on the same projection.
    skcoreset.solvers.giga : The solver on raw vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import GIGACoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=2000) > 0).astype(int)
    >>> coreset = GIGACoreset(M=50, random_state=0).fit(X, y)
    >>> len(coreset.sample_indices_) <= 50
    True
    """

    def _solve(self, vectors, target=None):
        return giga(vectors, target=target, n_iter=min(self.M, _ITER_PER_ROW * len(vectors)),
                    verbose=self.verbose)


@_fill_hilbert_doc
class FrankWolfeCoreset(_HilbertCoreset):
    """Hilbert coreset by Frank-Wolfe on the simplex constraint (Campbell & Broderick 2018,
    eq. 5 baseline).

    Same projection as :class:`GIGACoreset`; the weights are found by M Frank-Wolfe
    iterations with exact line search over the scaled simplex
    ``sum_n ||L_n|| w_n = sum_n ||L_n||``.

    Parameters
    ----------
    M : int, default=100
        Number of Frank-Wolfe iterations (coreset size budget; at most ``10 N`` are run).
    {hilbert_params}
    {common_params}
    Attributes
    ----------
    {hilbert_attrs}
    {common_attrs}
    See Also
    --------
    GIGACoreset : Greedy geodesic ascent, usually sparser and more accurate.
    skcoreset.solvers.frank_wolfe : The solver on raw vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import FrankWolfeCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=2000) > 0).astype(int)
    >>> coreset = FrankWolfeCoreset(M=50, random_state=0).fit(X, y)
    >>> len(coreset.sample_indices_) <= 50
    True
    """

    def _solve(self, vectors, target=None):
        return frank_wolfe(vectors, target=target,
                           n_iter=min(self.M, _ITER_PER_ROW * len(vectors)),
                           verbose=self.verbose)
