"""Hilbert coresets (paper 001): random projections of the log-likelihoods, then a sparse
non-negative vector-sum solver (GIGA or Frank-Wolfe)."""

from numbers import Integral

import numpy as np

from .._design import linear_predictor
from .._inference.laplace import laplace
from .._posterior import GaussianPosterior
from .._sklearn_compat import Interval, StrOptions
from ..solvers import frank_wolfe, giga
from .._docstrings import fill_doc
from ._base import COMMON_ATTRS_DOC, COMMON_PARAMS_DOC, BaseCoreset

_ROWS_PER_CHUNK = 16_384


def project_loglik(X, y, sample_weight, family, thetas, fit_intercept):
    """Random projection of each row's weighted, centred log-likelihood (paper 001, eq. 39).

    Row n of the result is ``w_n (f_n(theta_j) - mean_j f_n(theta_j))_j / sqrt(J)`` for the J
    draws ``theta_j`` of the weighting distribution, so inner products of rows estimate the
    weighted Fisher-type inner product of the log-likelihood functions. Rows are processed in
    chunks: each chunk is one BLAS product and elementwise family calls, and the temporaries
    stay bounded for large N.

    Returns
    -------
    vectors : ndarray of shape (n, J)
    """
    n, n_proj = X.shape[0], len(thetas)
    vectors = np.empty((n, n_proj))
    scale = sample_weight / np.sqrt(n_proj)
    for start in range(0, n, _ROWS_PER_CHUNK):
        rows = slice(start, min(start + _ROWS_PER_CHUNK, n))
        loglik = family.loglik(y[rows], linear_predictor(X[rows], thetas, fit_intercept))
        loglik -= loglik.mean(axis=1, keepdims=True)
        vectors[rows] = loglik * scale[rows, None]
    return vectors


class _HilbertCoreset(BaseCoreset):
    """Shared fit of the Hilbert coresets; subclasses choose the solver."""

    _parameter_constraints = {
        **BaseCoreset._parameter_constraints,
        "projection_dim": [Interval(Integral, 1, None, closed="left")],
        "weighting": [StrOptions({"laplace", "laplace-subsample", "prior"})],
        "n_subsample": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, M=100, *, projection_dim=500, weighting="laplace", n_subsample=None,
                 model="auto", link="log", noise_scale=1.0, prior_scale=1.0,
                 intercept_prior_scale=10.0, fit_intercept=True, random_state=None,
                 verbose=0):
        super().__init__(M, model=model, link=link, noise_scale=noise_scale,
                         prior_scale=prior_scale, intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.projection_dim = projection_dim
        self.weighting = weighting
        self.n_subsample = n_subsample

    def _weighting_distribution(self, X, y, sample_weight, family, prior_prec, rng):
        """The distribution pi-hat the projection draws parameters from."""
        if self.weighting == "prior":
            return GaussianPosterior(np.zeros(len(prior_prec)), np.diag(1.0 / prior_prec))
        rows = np.flatnonzero(sample_weight > 0)
        if self.weighting == "laplace-subsample":
            size = self.n_subsample or int(np.sqrt(X.shape[0]))
            rows = rng.choice(rows, size=min(max(size, 1), len(rows)), replace=False)
        result = laplace(X[rows], y[rows], family, sample_weight=sample_weight[rows],
                         prior_prec=prior_prec, fit_intercept=self.fit_intercept)
        return result.posterior

    def _build(self, X, y, sample_weight, family, prior_prec, rng):
        thetas = self._draw_projection(X, y, sample_weight, family, prior_prec, rng)
        return self._build_projected(X, y, sample_weight, family, thetas)

    def _draw_projection(self, X, y, sample_weight, family, prior_prec, rng):
        """Fit the weighting distribution and draw the J parameters of the projection.

        Split from :meth:`_build_projected` so that merge-reduce and the dask path can draw
        them once and project every block under the same pi-hat.
        """
        self.weighting_posterior_ = self._weighting_distribution(
            X, y, sample_weight, family, prior_prec, rng)
        return self.weighting_posterior_.sample(self.projection_dim, random_state=rng)

    def _build_projected(self, X, y, sample_weight, family, thetas, target=None):
        """Project on the given draws, run the solver; deterministic given ``thetas``.

        ``target`` is the projected vector to approximate, by default the sum of the rows'
        vectors; merge-reduce passes the exact sum of all the data the rows stand in for.
        """
        vectors = project_loglik(X, y, sample_weight, family, thetas, self.fit_intercept)
        result = self._solve(vectors, target)
        self.error_ = result.error
        self.history_ = result.history
        self.stop_reason_ = result.stop_reason
        if self.verbose:
            print(f"[{type(self).__name__}] {np.count_nonzero(result.weights)} points, "
                  f"relative error {result.error:.3e} ({result.stop_reason})")
        indices = np.flatnonzero(result.weights)
        return indices, result.weights[indices] * sample_weight[indices]


_HILBERT_PARAMS_DOC = """
    projection_dim : int, default=500
        Number J of parameter draws from the weighting distribution used to project each
        row's log-likelihood to a finite-dimensional vector (paper 001, eq. 39).
    weighting : {"laplace", "laplace-subsample", "prior"}, default="laplace"
        Weighting distribution pi-hat of the projection. ``"laplace"``: Laplace posterior of
        the full (weighted) data, a few Newton passes (the papers' "optimal" choice);
        ``"laplace-subsample"``: Laplace posterior of a uniform subsample of ``n_subsample``
        rows, not reweighted (the papers' "realistic" choice, for data too large for a full
        pass); ``"prior"``: the prior.
    n_subsample : int, default=None
        Subsample size for ``weighting="laplace-subsample"``; ``None`` means ``sqrt(N)``.
"""

_HILBERT_ATTRS_DOC = """
    error_ : float
        Relative error ``||L - L(w)|| / ||L||`` of the coreset in the projected space.
    history_ : ndarray of shape (n_iter, 2)
        Per solver iteration: number of points in the coreset and relative error.
    stop_reason_ : str
        Why the solver stopped (iteration budget, numerical precision, ...).
    weighting_posterior_ : GaussianPosterior
        The weighting distribution the projection drew from.
"""

_fill_hilbert_doc = fill_doc(common_params=COMMON_PARAMS_DOC, common_attrs=COMMON_ATTRS_DOC,
                             hilbert_params=_HILBERT_PARAMS_DOC, hilbert_attrs=_HILBERT_ATTRS_DOC)


@_fill_hilbert_doc
class GIGACoreset(_HilbertCoreset):
    """Hilbert coreset by greedy iterative geodesic ascent (paper 001, Algorithm 1).

    Projects each row's centred log-likelihood onto J draws from a weighting distribution,
    then runs M iterations of GIGA on the resulting vectors (each adds or reweights one point
    along the geodesic towards the full-data direction) and rescales the weights optimally
    (eq. 27). The coreset has at most M rows.

    Parameters
    ----------
    M : int, default=100
        Number of GIGA iterations (coreset size budget).
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
        return giga(vectors, target=target, n_iter=self.M)


@_fill_hilbert_doc
class FrankWolfeCoreset(_HilbertCoreset):
    """Hilbert coreset by Frank-Wolfe on the simplex constraint (paper 001, eq. 5 baseline).

    Same projection as :class:`GIGACoreset`; the weights are found by M Frank-Wolfe
    iterations with exact line search over the scaled simplex
    ``sum_n ||L_n|| w_n = sum_n ||L_n||``.

    Parameters
    ----------
    M : int, default=100
        Number of Frank-Wolfe iterations (coreset size budget).
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
        return frank_wolfe(vectors, target=target, n_iter=self.M)
