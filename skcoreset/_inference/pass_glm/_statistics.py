"""PASS-GLM sufficient statistics (Algorithm 1, lines 3-7) and the surrogate log-likelihood."""

from dataclasses import dataclass, field, replace

import numpy as np
from scipy.sparse import issparse
from scipy.special import gammaln

from ..._backend import dense_rows, float_rows
from ..._design import n_params, weighted_gram
from ._monomials import _merge_table, _monomial_chain, _monomials, n_monomials
from ._surrogate import (_check_bounded, _model_name, _surrogate_coefficients,
                         check_pass_degree, linear_scale, mapping)

# Default cap on the number of distinct monomials C(p + M, M) for degrees above 2. Statistics,
# per-row work and each Newton step grow with it (and the Hessian tables with it times p^2).
MAX_MONOMIALS = 100_000
_BLOCK_ENTRIES = 2**21  # rows x monomials held at once when forming moments (16 MB)


@dataclass(eq=False)
class PassGLMStatistics:
    """Approximate sufficient statistics of a weighted GLM data set (Algorithm 1, lines 3-7).

    With design rows ``a_n = [x_n, 1]`` (or ``x_n``), the surrogate log-likelihood is

    ``L(theta) = constant + kappa linear . theta + sum_{m=0}^{M} beta_m <T_m, theta^(x m)>``

    with the moment tensors ``T_m = sum_n w_n a_n^(x m)``: ``T_0 = sum_weight``,
    ``T_1 = moment1``, ``T_2 = gram`` (dense) and, for ``m >= 3``, ``higher[m]`` holding one
    entry ``sum_n w_n c_n^k`` per monomial ``|k| = m`` (sorted index tuples, lexicographic).
    Only the degrees with ``beta_m != 0`` are kept (odd ``m >= 3`` vanish for the Chebyshev
    approximation of the softplus on ``[-R, R]``). ``kappa`` is :attr:`linear_scale`: 1,
    except for a mapping approximated at the margins (probit), see
    :func:`~skcoreset._inference.pass_glm._surrogate.linear_scale`.

    Statistics of disjoint chunks add up (:meth:`merge`), so a stream is summarised chunk by
    chunk (:meth:`add`) and a distributed data set by a map-reduce over its chunks.

    The moment tensors do not depend on the polynomial: statistics created without one
    (:meth:`empty` with ``radius=None``) keep every degree up to ``degree`` and take their
    polynomial afterwards (:meth:`with_polynomial`, also again with another one), e.g. when
    the last block of a stream has been added.

    Create empty statistics with :meth:`empty`, or from data with :func:`pass_glm_statistics`
    and :func:`pass_glm_statistics_dask`.

    Attributes
    ----------
    model : {"logistic", "poisson", "probit"}
        The family's ``pass_glm_mapping``.
    n_features : int
    degree : int
    radius : float or None
        Half-width of the Chebyshev interval ``[-radius, radius]``; None when ``coef`` was
        given (fitted on a pilot, :func:`fitted_coefficients`) or is still to be chosen.
    fit_intercept : bool
    coef : ndarray of shape (degree + 1,) or None
        Surrogate coefficients ``beta_m = -b_m`` of the polynomial ``f_M`` standing in for
        the softplus (logistic) or ``e^s`` (Poisson), ``(c_0, -c_1, c_2)`` of the polynomial
        standing in for ``log Phi`` at the margins (probit); None until chosen.
    n_samples : int
        Rows accumulated.
    sum_weight : float
        ``sum_n w_n``.
    moment1 : ndarray of shape (p,)
        ``sum_n w_n a_n``.
    gram : ndarray of shape (p, p)
        ``sum_n w_n a_n a_n^T``.
    higher : dict of int to ndarray
        Monomial moments of degree ``m >= 3``.
    linear : ndarray of shape (p,)
        Exact linear term ``sum_n w_n y_n a_n`` (labels as 0/1 for the binary models).
    constant : float
        Exact constant: ``-sum_n w_n log(y_n!)`` for Poisson, 0 for the binary models.
    """

    model: str
    n_features: int
    degree: int
    radius: float
    fit_intercept: bool
    coef: np.ndarray
    n_samples: int = 0
    sum_weight: float = 0.0
    moment1: np.ndarray | None = None
    gram: np.ndarray | None = None
    higher: dict = field(default_factory=dict)
    linear: np.ndarray | None = None
    constant: float = 0.0

    @classmethod
    def empty(cls, family, n_features, *, degree=2, radius=4.0, fit_intercept=True,
              max_monomials=MAX_MONOMIALS, coef=None):
        """Zero statistics ready for :meth:`add`.

        Parameters
        ----------
        family : Family or {"logistic", "poisson", "probit"}
            A family with a ``pass_glm_mapping`` (logistic, probit, Poisson with log link),
            or the mapping's name.
        n_features : int
        degree : int, default=2
            Polynomial degree ``M``; see :func:`check_pass_degree`.
        radius : float or None, default=4.0
            The approximation interval is ``[-radius, radius]``. None (without ``coef``):
            the polynomial is chosen later (:meth:`with_polynomial`), so the moments of
            every degree up to ``degree`` are kept.
        fit_intercept : bool, default=True
        max_monomials : int, default=MAX_MONOMIALS
            For ``degree > 2``, refuse when the number of monomials ``C(p + M, M)`` exceeds
            this (the statistics, the per-row work and each Newton step grow with it).
        coef : ndarray of shape (degree + 1,), default=None
            Surrogate coefficients ``beta`` to use instead of the Chebyshev ones on
            ``[-radius, radius]`` (e.g. from :func:`fitted_coefficients`); ``radius`` is then
            recorded as None.
        """
        model = _model_name(family)
        if coef is not None:
            coef = _check_bounded(np.array(coef, dtype=float))
            degree, radius = len(coef) - 1, None
        degree = check_pass_degree(model, degree) if coef is None else degree
        if coef is None and radius is not None:
            radius = _check_radius(radius)
        p = n_params(n_features, fit_intercept)
        if degree > 2 and n_monomials(p, degree) > max_monomials:
            raise ValueError(
                f"pass_degree={degree} with {p} parameters needs C({p} + {degree}, {degree}) "
                f"= {n_monomials(p, degree)} monomial statistics, more than max_monomials="
                f"{max_monomials}. Use pass_degree=2 (O(p^2) statistics) or fewer features.")
        if coef is None and radius is not None:
            coef = _surrogate_coefficients(model, degree, radius)
        higher = {m: np.zeros(len(_monomials(p, m)[0]))
                  for m in range(3, degree + 1) if coef is None or coef[m] != 0.0}
        return cls(model=model, n_features=int(n_features), degree=degree, radius=radius,
                   fit_intercept=bool(fit_intercept), coef=coef, moment1=np.zeros(p),
                   gram=np.zeros((p, p)), higher=higher, linear=np.zeros(p))

    def with_polynomial(self, *, coef=None, radius=None):
        """The same statistics with the polynomial ``coef`` (e.g. from
        :func:`fitted_coefficients`) or the Chebyshev one on ``[-radius, radius]``, of at
        most this degree (a new object sharing the moments)."""
        if coef is None:
            coef = _surrogate_coefficients(self.model, self.degree, _check_radius(radius))
        else:
            coef, radius = _check_bounded(np.array(coef, dtype=float)), None
        coef = np.pad(coef, (0, self.degree + 1 - len(coef)))
        missing = [m for m in range(3, len(coef)) if coef[m] != 0.0 and m not in self.higher]
        if len(coef) != self.degree + 1 or missing:
            raise ValueError(f"These statistics have no moments of degree "
                             f"{missing or len(coef) - 1} for this polynomial.")
        return replace(self, radius=radius, coef=coef)

    @property
    def linear_scale(self):
        """The factor ``kappa`` of the exact linear term in the surrogate."""
        return linear_scale(self.model, self.coef)

    @property
    def n_params(self):
        """Length ``p`` of theta."""
        return n_params(self.n_features, self.fit_intercept)

    # --- accumulation -------------------------------------------------------------------
    def add(self, X, y, sample_weight=None):
        """Accumulate a chunk of data in place; returns ``self``.

        Parameters
        ----------
        X : ndarray of shape (n, n_features)
        y : ndarray of shape (n,)
            Labels in ``{-1, +1}`` (logistic, probit) or counts (Poisson).
        sample_weight : ndarray of shape (n,), default=None
            Non-negative multipliers of each point's log-likelihood; ones by default.
        """
        X, y, w = self._check_chunk(X, y, sample_weight)  # w is None for unit weights
        n, p = X.shape[0], self.n_params
        # One pass over X: the w-weighted Gram of [A, r] (and of a ones column without an
        # intercept) holds gram, linear = A.T @ (w r) (labels r as 0/1 for logistic) and
        # moment1 = A.T @ w (the intercept column of gram).
        r = (y > 0).astype(np.float64) if mapping(self.model).binary else y
        extra = (r,) if self.fit_intercept else (r, np.ones(n))
        # a non-finite entry of X makes its column's diagonal entry non-finite (inf or NaN,
        # also where w = 0); checked before anything is added
        with np.errstate(invalid="ignore"):  # inf * 0 and inf - inf from such entries
            full = (weighted_gram(X, w, self.fit_intercept, extra=extra) if n
                    else np.zeros((p + len(extra), p + len(extra))))
        if not np.all(np.isfinite(np.diagonal(full)[:self.n_features])):
            if not np.all(np.isfinite(X.data if issparse(X) else X)):
                raise ValueError("Input X contains NaN or infinity; X must hold finite "
                                 "numbers: drop or impute those rows.")
        if self.model == "poisson":
            log_factorial = gammaln(y + 1.0)
            self.constant -= float(log_factorial.sum() if w is None else w @ log_factorial)
        self.n_samples += n
        self.sum_weight += float(n if w is None else w.sum())
        self.gram += full[:p, :p]
        self.linear += full[:p, p]
        self.moment1 += full[:p, p - 1] if self.fit_intercept else full[:p, p + 1]
        if self.higher:
            self._add_higher(X, y, w)
        return self

    def _check_chunk(self, X, y, sample_weight):
        X = float_rows(X)
        y = np.asarray(y, dtype=np.float64).ravel()
        if X.ndim != 2 or X.shape[1] != self.n_features:
            raise ValueError(f"X must have shape (n, {self.n_features}), got {X.shape}.")
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"y has {y.shape[0]} entries but X has {X.shape[0]} rows.")
        # checked here so that dask chunks are checked on their workers, in the same pass (X's
        # entries from the statistics, in add); valid ±1 labels in one pass over y
        binary = mapping(self.model).binary
        valid = binary and np.all(np.abs(y) == 1.0)  # false for NaN, inf
        if not valid and not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        w = None  # unit weights
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            if w.ndim == 0:
                w = np.full(X.shape[0], float(w))
            if w.shape != y.shape:
                raise ValueError(f"sample_weight has shape {w.shape}, expected {y.shape}.")
            if not np.all(np.isfinite(w) & (w >= 0)):
                raise ValueError("sample_weight must be finite and non-negative.")
        if binary and not valid:
            raise ValueError(f"{self.model.capitalize()} PASS-GLM statistics need labels "
                             "encoded as -1/+1.")
        if self.model == "poisson" and np.any(y < 0):
            raise ValueError("Poisson PASS-GLM statistics need non-negative counts.")
        return X, y, w

    def _add_higher(self, X, y, w):
        """Monomial moments of degree >= 3, in row blocks to bound memory."""
        p = self.n_params
        rows = max(1, _BLOCK_ENTRIES // len(_monomials(p, self.degree)[0]))
        for start in range(0, X.shape[0], rows):
            block = dense_rows(X[start:start + rows])  # a few rows: products of columns
            c = np.column_stack([block, np.ones(len(block))]) if self.fit_intercept else block
            for m, products in _monomial_chain(c, self.degree):
                if m in self.higher:
                    self.higher[m] += (products.sum(axis=0) if w is None
                                       else w[start:start + rows] @ products)

    def merge(self, other):
        """Statistics of the union of the two data sets (a new object)."""
        keys = ("model", "n_features", "degree", "radius", "fit_intercept")
        mismatch = [k for k in keys if getattr(self, k) != getattr(other, k)]
        if not mismatch and (self.higher.keys() != other.higher.keys() or not (
                self.coef is other.coef or np.array_equal(self.coef, other.coef))):
            mismatch = ["coef"]
        if mismatch:
            raise ValueError(f"Cannot merge PASS-GLM statistics that differ in {mismatch}.")
        return replace(
            self, n_samples=self.n_samples + other.n_samples,
            sum_weight=self.sum_weight + other.sum_weight,
            moment1=self.moment1 + other.moment1, gram=self.gram + other.gram,
            higher={m: v + other.higher[m] for m, v in self.higher.items()},
            linear=self.linear + other.linear, constant=self.constant + other.constant)

    __add__ = merge

    # --- the surrogate log-likelihood ---------------------------------------------------
    def loglik(self, theta):
        """Surrogate log-likelihood ``L(theta)`` (Algorithm 1, line 8)."""
        return self.derivatives(np.asarray(theta, dtype=float), order=0)[0]

    def derivatives(self, theta, order=2):
        """Value, gradient and Hessian of the surrogate log-likelihood at ``theta``.

        Uses ``d/dtheta <T, theta^m> = m T(theta^(m-1), .)`` and ``d^2 = m (m - 1)
        T(theta^(m-2), ., .)`` for the symmetric moment tensors, contracted in their packed
        monomial form: cost independent of the number of data points.

        Returns
        -------
        value : float
        grad : ndarray of shape (p,) (when ``order >= 1``)
        hessian : ndarray of shape (p, p) (when ``order == 2``)
        """
        if self.coef is None:
            raise ValueError("No polynomial was chosen for these statistics yet: call "
                             "with_polynomial first.")
        b = self.coef
        G_theta = self.gram @ theta
        linear = self.linear_scale * self.linear + b[1] * self.moment1
        value = (self.constant + b[0] * self.sum_weight + linear @ theta
                 + b[2] * theta @ G_theta)
        grad = linear + 2.0 * b[2] * G_theta
        hessian = 2.0 * b[2] * self.gram
        if self.higher:
            p = self.n_params
            # theta^u times the multinomial count of u, for every degree up to M
            powers = {0: np.ones(1)}
            for m, products in _monomial_chain(theta, self.degree):
                powers[m] = products * _monomials(p, m)[2]
            rows, cols = np.triu_indices(p)
            for m, moments in self.higher.items():
                if b[m] == 0.0:  # kept for another polynomial (with_polynomial)
                    continue
                value += b[m] * powers[m] @ moments
                if order >= 1:
                    grad += m * b[m] * (powers[m - 1] @ moments[_merge_table(p, m, 1)])
                if order >= 2:
                    upper = m * (m - 1) * b[m] * (powers[m - 2] @ moments[_merge_table(p, m, 2)])
                    hessian[rows, cols] += upper
                    hessian[cols[rows != cols], rows[rows != cols]] += upper[rows != cols]
        return (value, grad, hessian)[:order + 1]


def _check_radius(radius):
    radius = float(radius)
    if not radius > 0:
        raise ValueError(f"pass_radius must be positive, got {radius!r}.")
    return radius


def pass_glm_statistics(X, y, family, *, sample_weight=None, degree=2, radius=4.0,
                        fit_intercept=True, max_monomials=MAX_MONOMIALS, coef=None):
    """PASS-GLM statistics of one in-memory chunk of data.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in ``{-1, +1}`` (logistic, probit) or counts (Poisson).
    family : Family or {"logistic", "poisson", "probit"}
    sample_weight : ndarray of shape (n,), default=None
    degree, radius, fit_intercept, max_monomials, coef
        See :meth:`PassGLMStatistics.empty`.

    Returns
    -------
    PassGLMStatistics
    """
    stats = PassGLMStatistics.empty(family, np.shape(X)[1], degree=degree, radius=radius,
                                    fit_intercept=fit_intercept, max_monomials=max_monomials,
                                    coef=coef)
    return stats.add(X, y, sample_weight)
