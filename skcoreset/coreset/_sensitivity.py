"""Sensitivity-based importance sampling for logistic regression (Huggins, Campbell & Broderick
2016)."""

from numbers import Integral, Real

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.metrics import pairwise_distances_argmin_min
from sklearn.metrics.pairwise import euclidean_distances

from .._backend import InMemoryRows, row_chunks, row_width
from ..families import LogitLink
from .._sklearn_compat import Interval
from ._projection import relative_weights
from ._base import BaseCoreset
from ._checks import check_both_classes
from ._docs import fill_sampling_doc
from .._typing import RandomStateLike

# R = a / sqrt(I) with a = 3 (Huggins, Campbell & Broderick 2016, §4 "Experimental setup")
_RADIUS_CONSTANT = 3.0
# |x| beyond which squared distances of the (n_features + 1)-vectors may overflow float64
_MAX_ABS_X = 1e150
# The M multinomial draws are made one by one (a few float64 values each): at most 2**26
# (about 0.5 GiB of working memory).
_MAX_DRAWS = 2**26
# float64 values (4 MiB) of working memory per row chunk, at least 1024 rows: wide data gets
# fewer rows per chunk
_CHUNKS = dict(max_elements=2**19, min_rows=1024)


def _signed_design(X, y, rows, fit_intercept, offset=None):
    """``Z_n = y_n a_n`` for the given rows, with ``a_n = [x_n, 1]`` when there is an intercept
    and ``[..., o_n]`` when the rows have offsets ``o_n``: the margin ``y_n (a_n theta + o_n)``
    is then ``Z_n . (theta, 1)`` (a CSR matrix for sparse X: k-means and the distances take
    it as it is)."""
    extra = [y[rows]] if fit_intercept else []
    if offset is not None:
        extra.append(y[rows] * offset[rows])
    if sparse.issparse(X):
        Z = sparse.diags(y[rows]) @ X[rows]
        columns = [Z] + [sparse.csr_matrix(column[:, None]) for column in extra]
        return sparse.hstack(columns, format="csr") if extra else Z.tocsr()
    Z = X[rows] * y[rows, None]
    return np.column_stack([Z, *extra]) if extra else Z


def _n_distinct_rows(Z):
    """Number of distinct rows of Z; of a sparse Z, of its rows' projections on two fixed
    random directions (distinct rows project apart almost surely), without densifying it."""
    if sparse.issparse(Z):
        Z = Z @ np.random.RandomState(0).standard_normal((Z.shape[1], 2))
    return len(np.unique(Z, axis=0))


def assign_clusters(X, y, centres, fit_intercept, offset=None):
    """Nearest centre of every signed design vector and the squared distance to it."""
    n = X.shape[0]
    labels = np.empty(n, dtype=np.intp)
    sq_dist = np.empty(n)
    for rows in row_chunks(n, row_width(X) + 1, **_CHUNKS):
        labels[rows], dist = pairwise_distances_argmin_min(
            _signed_design(X, y, rows, fit_intercept, offset), centres)
        sq_dist[rows] = dist**2
    return labels, sq_dist


def sensitivity_upper_bounds(X, y, sample_weight, centres, labels, radius, fit_intercept, *,
                             cluster_weight=None, total_weight=None, offset=None):
    """Sensitivity upper bounds m_n of Lemma 3.1 (Huggins, Campbell & Broderick 2016, eq. 3.1).

    ``m_n = W / (1 + sum_i W_i^(-n) exp(-R ||Q_i - Z_n||))`` with the cluster centres ``Q_i``
    in place of the leave-one-out cluster means (as the paper's appendix does), ``W`` the
    total weight and ``W_i^(-n)`` the weight of cluster ``i`` without point ``n``. With unit
    weights ``W = N`` and ``W_i^(-n) = |G_i^(-n)|``. Rows are processed in chunks so memory
    stays bounded for large N. When X is one chunk of a larger data set, pass the data set's
    ``cluster_weight`` (shape ``(n_centres,)``) and ``total_weight``; by default both are
    those of X.

    Rows with offsets ``o_n`` in their linear predictors have the margins
    ``Z_n . (theta, 1)`` of the signed design with ``y_n o_n`` appended: the lemma holds
    for those vectors (``offset``, and centres of them) with ``R`` the radius of
    ``(theta, 1)``, ``sqrt(R_theta^2 + 1)`` for a ball of radius ``R_theta`` of the
    coefficients.
    """
    n = X.shape[0]
    if cluster_weight is None:
        cluster_weight = np.bincount(labels, weights=sample_weight, minlength=len(centres))
    if total_weight is None:
        total_weight = sample_weight.sum()
    bounds = np.empty(n)
    for rows in row_chunks(n, row_width(X) + 1, **_CHUNKS):
        dist = euclidean_distances(_signed_design(X, y, rows, fit_intercept, offset),
                                   centres)
        others = np.tile(cluster_weight, (dist.shape[0], 1))
        others[np.arange(dist.shape[0]), labels[rows]] -= sample_weight[rows]
        others = np.maximum(others, 0.0)
        bounds[rows] = total_weight / (1.0 + np.sum(others * np.exp(-radius * dist), 1))
    return bounds


def _cluster_stats(centres, fit_intercept, X, y, sample_weight, offset=None):
    """Weight of every cluster, weighted sum of squared distances and total weight."""
    labels, sq_dist = assign_clusters(X, y, centres, fit_intercept, offset)
    return (np.bincount(labels, weights=sample_weight, minlength=len(centres)),
            np.multiply(sq_dist, sample_weight).sum(), sample_weight.sum())


def _bounds(centres, radius, cluster_weight, total_weight, fit_intercept, X, y,
            sample_weight, offset=None):
    """The bounds of Lemma 3.1 for some rows (with their offsets), with the clusters of all
    rows."""
    labels, _ = assign_clusters(X, y, centres, fit_intercept, offset)
    return sensitivity_upper_bounds(X, y, sample_weight, centres, labels, radius,
                                    fit_intercept, cluster_weight=cluster_weight,
                                    total_weight=total_weight, offset=offset)


@fill_sampling_doc
class SensitivityCoreset(BaseCoreset):
    """Sensitivity-sampling coreset for Bayesian logistic regression (Huggins et al. 2016, Alg. 1).

    Clusters the signed design vectors ``Z_n = y_n [x_n, 1]`` with k-means++ (scikit-learn's
    :class:`~sklearn.cluster.KMeans`) fitted on a uniform subsample of
    ``min(1000 k, 0.025 N)`` rows (at least k), bounds every row's sensitivity by Lemma 3.1
    using the cluster centres, draws M rows from the multinomial with probabilities
    ``p_n`` proportional to ``w_n m_n`` and weights each drawn row ``K_n w_n / (p_n M)``
    (``K_n`` its number of draws), so the weighted log-likelihood is unbiased.

    By default (``stratify=True``) the draws are stratified by class: each class gets at
    least one of the M draws and the rest in proportion to its total ``w_n m_n``, and
    ``p_n`` and M are those of the row's class. The estimate stays unbiased and a rare
    class is never missed (a one-class coreset cannot fit a classifier).

    Parameters
    ----------
    M : int, default=100
        Number of multinomial draws; the coreset has at most M distinct rows.
    n_clusters : int, default=6
        Number of k-means clusters k (the paper uses 4 for low-dimensional and 6 for
        high-dimensional data).
    radius : float, default=None
        Radius R of the parameter ball on which the bounds hold. ``None`` uses the paper's
        heuristic ``R = 3 / sqrt(I)`` with ``I`` the normalised k-means score of the data.
    stratify : bool, default=True
        Draw within each class. ``False`` is the single multinomial of Huggins, Campbell &
        Broderick 2016; it raises a ``ValueError`` when the draws miss a class.
    {common_params}
    Attributes
    ----------
    sensitivities_ : ndarray or dask array of shape (n_samples,)
        Sensitivity upper bounds m_n of every training row.
    radius_ : float
        The radius R used (of the coefficients; with offsets in the linear predictors the
        bounds use ``sqrt(R^2 + 1)``, the radius of ``(theta, 1)``).
    cluster_centers_ : ndarray of shape (n_centres, n_params) or (n_centres, n_params + 1)
        k-means centres of the signed design vectors (fewer than ``n_clusters`` only when the
        k-means subsample has fewer distinct points), with ``y_n o_n`` appended when the rows
        have offsets ``o_n``.
    {common_attrs}
    Notes
    -----
    Only the logistic model is supported: the bounds of Lemma 3.1 are specific to it.

    On a dask array the algorithm is the same, pass by pass where the chunks live: k-means
    on a uniform subsample (a distributed reservoir) on the client, one pass for the cluster
    weights and the k-means score, and one in which every chunk draws M rows from its share
    of the multinomial, mixed by a tree of tasks into M draws over all rows (per class when
    stratified). ``sensitivities_`` is then a lazy dask array.

    Examples
    --------
    >>> import numpy as np
    >>> from skcoreset import SensitivityCoreset
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> y = (X @ [1.0, -1.0, 0.5] + rng.logistic(size=2000) > 0).astype(int)
    >>> coreset = SensitivityCoreset(M=100, random_state=0).fit(X, y)
    >>> len(coreset.sample_indices_) <= 100
    True
    """

    _parameter_constraints = {
        **BaseCoreset._parameter_constraints,
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "radius": [Interval(Real, 0, None, closed="neither"), None],
        "stratify": ["boolean"],
    }

    def __init__(self, M: int = 100, *, n_clusters: int = 6, radius: float | None = None,
                 stratify: bool = True, model: str = "auto", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 random_state: RandomStateLike = None, verbose: int = 0) -> None:
        super().__init__(M, model=model, prior_scale=prior_scale,
                         intercept_prior_scale=intercept_prior_scale,
                         fit_intercept=fit_intercept, random_state=random_state,
                         verbose=verbose)
        self.n_clusters = n_clusters
        self.radius = radius
        self.stratify = stratify

    def _check_model(self, family):
        if not (family.binary and isinstance(family.link, LogitLink)):
            raise ValueError(
                "SensitivityCoreset supports only the logistic model: the sensitivity bounds "
                "of Huggins, Campbell & Broderick (2016, Lemma 3.1) rest on the logistic "
                "loss log(1 + e^-s) changing by at most a factor e^|s - s'| between margins "
                "s and s', which other likelihoods do not satisfy (the probit loss "
                f"-log Phi(s) decays like e^(-s^2 / 2)); got model {family.name!r}. Use "
                "UniformCoreset or QuasiNewtonCoreset, which support every model.")

    def _kmeans_sample_size(self, n):
        """``min(1000 k, 0.025 N)`` rows, at least k."""
        return max(self.n_clusters, min(1000 * self.n_clusters, int(0.025 * n)))

    def _fit_centres(self, Z_sub, weight_sub, rng):
        """k-means++ on the subsample of signed design vectors; sets ``cluster_centers_``."""
        # k-means cannot place more centres than there are distinct points
        k = min(self.n_clusters, _n_distinct_rows(Z_sub))
        kmeans = KMeans(n_clusters=k, init="k-means++", n_init=1,
                        random_state=rng.randint(np.iinfo(np.int32).max))
        kmeans.fit(Z_sub, sample_weight=weight_sub)
        self.cluster_centers_ = kmeans.cluster_centers_

    def _set_radius(self, score):
        """``radius_``: the parameter, or ``3 / sqrt(I)`` from the normalised k-means score I."""
        radius = self.radius
        if radius is None:
            radius = _RADIUS_CONSTANT / np.sqrt(max(score, np.finfo(float).tiny))
        self.radius_ = float(radius)

    def _report(self, mean_sensitivity):
        if self.verbose:
            print(f"[SensitivityCoreset] R = {self.radius_:.4g}, mean sensitivity "
                  f"{mean_sensitivity:.4g}")

    @staticmethod
    def _check_scale(largest):
        """Squared distances between the design vectors must be finite in float64."""
        if largest > _MAX_ABS_X:
            raise ValueError(
                f"X has values up to |x| = {largest:.3g}, whose squared distances overflow "
                "float64 in the k-means sensitivity bounds. Standardise X first, e.g. with "
                "sklearn.preprocessing.StandardScaler.")

    def _check_draws(self, n_samples):
        """M draws are made one by one: refuse a budget whose draws do not fit in memory."""
        if self.M > _MAX_DRAWS:
            raise ValueError(
                f"M={self.M} multinomial draws would need at least {self.M * 8 / 2**30:.0f} "
                f"GiB of working memory (at most {_MAX_DRAWS} draws are supported). The "
                f"coreset has at most {n_samples} distinct rows, and far fewer draws than "
                f"M={self.M} already give them their own weights: use M <= {_MAX_DRAWS}.")

    def _fit_rows(self, data, family, prior_prec, rng):
        self._check_model(family)
        self._check_draws(data.n)
        self._check_scale(data.max_abs())
        fit_intercept = self.fit_intercept
        sub = data.subsample(self._kmeans_sample_size(data.n), rng, stream=1)
        # k-means centres do not depend on the scale of the weights; weights of 1e-300
        # would underflow in its computations
        self._fit_centres(_signed_design(sub.X, sub.y, slice(None), fit_intercept,
                                         sub.offset),
                          relative_weights(sub.weights), rng)
        cluster_weight, score, total = data.sum(_cluster_stats, self.cluster_centers_,
                                                fit_intercept)
        self._set_radius(score / total)  # normalised k-means score I
        # with offsets the margins are Z_n . (theta, 1): the radius of (theta, 1)
        radius = np.hypot(self.radius_, 1.0) if data.has_offset else self.radius_
        self.sensitivities_ = data.map_rows(_bounds, self.cluster_centers_, radius,
                                            cluster_weight, total, fit_intercept)
        part, importance = data.importance_sample(self.M, rng, self.sensitivities_,
                                                  stratify=self.stratify)
        self._report(importance / total)
        if part is None:  # a safety net behind _check_scale
            raise ValueError("SensitivityCoreset computed non-finite sensitivities; "
                             "standardise X, e.g. with sklearn.preprocessing.StandardScaler.")
        check_both_classes(data, part, "use M >= 2 and keep stratify=True.")
        return part

    def _build(self, X, y, sample_weight, family, prior_prec, rng, offset=None):
        part = self._fit_rows(InMemoryRows(X, y, sample_weight, offset), family, prior_prec,
                              rng)
        return part.indices, part.weights
