"""KL proximal-gradient variational inference for GLMs (Khan, Baqué, Fleuret & Fua, NeurIPS 2015).

The posterior is approximated by ``q(theta) = N(m, V)`` maximising the weighted evidence lower
bound (paper eq. 10, with sample weights)

    L(m, V) = sum_n w_n f_n(m~_n, v~_n) - KL(N(m, V) || N(0, P^-1)),

where ``f_n(m~, v~) = E[log p(y_n | eta)]`` over ``eta ~ N(m~, v~)``, ``m~_n = a_n . m`` and
``v~_n = a_n^T V a_n`` for the design row ``a_n = [x_n, 1]`` (or ``x_n``), and
``P = diag(prior_prec)``.

Each iteration linearises the non-conjugate term ``sum_n w_n f_n`` at the current ``q`` (eqs.
11-14) and solves the KL-proximal subproblem (eq. 15) in closed form (eqs. 16-17). With the
family's ``expected_loglik(y, m~, v~) -> (f, df/dm~, df/dv~)`` the linearisation coefficients of
eq. (12), multiplied by the weights, are

    alpha_n = -w_n df_n/dm~_n,        gamma_n = -2 w_n df_n/dv~_n = -w_n E[d^2 log p / d eta^2],

the last equality by Price's theorem, so ``gamma >= 0`` for the log-concave families here and
every update keeps ``V`` positive definite. With ``r = 1 / (1 + beta)``:

* primal path (eqs. 16-17), ``O(n p^2 + p^3)`` per iteration::

      V_{k+1}^-1 = r V_k^-1 + (1 - r) (P + A^T diag(gamma_k) A)
      m_{k+1}    = m_k + (1 - r) [(1 - r) P + r V_k^-1]^-1 grad_m L(m_k, V_k),

  the second line being eq. (17) rearranged around the ELBO gradient
  ``grad_m L = -A^T alpha_k - P m_k``, which is what the subproblem's stationarity says;

* dual path (eq. 19), ``O(n^2 p + n^3)`` per iteration and no ``p x p`` matrix until the end:
  ``V_k^-1 = P + A^T diag(gamma~_k) A`` with ``gamma~_{k+1} = r gamma~_k + (1 - r) gamma_k``
  (eq. 18) and ``m_k = -P^-1 A^T a_k`` for a dual vector ``a_k`` of length n updated by

      a_{k+1} = a_k + (1 - r) (I + r diag(gamma~_k) Sigma~)^-1 (alpha_k - a_k),

  with ``Sigma~ = A P^-1 A^T``; multiplying by ``-Sigma~`` gives the paper's update of
  ``m~ = A m`` in eq. (19) (prior mean ``mu = 0``). Inverses are applied through the symmetric
  matrix ``K = I + S Sigma~ S``, ``S = diag(gamma~)^(1/2)``, which stays well conditioned when
  some ``gamma~_n`` vanish (zero weights), so the paper's ``gamma~_0 = delta_1`` is not needed.

The paper's optimality condition (text after eq. 19) is the vanishing of the ELBO gradient at
the new iterate, i.e. ``m~ = mu~ - Sigma~ alpha`` and ``gamma~ = gamma``. Its printed formula is
not a norm (the trace term can be negative), so the gradient is measured in the Fisher metric
of ``q``: half the squared natural-gradient norm

    delta = (g_m^T V g_m + tr(V G V G) / 2) / 2,   G = V^-1 - P - A^T diag(gamma) A = 2 grad_V L,

in nats and invariant to the scaling of the features, like the Newton decrement of
:func:`~skcoreset._inference.laplace.newton_map`.

For large n (at least 50,000 rows, primal path, Laplace start, default ``beta``) the steps are
fixed-point steps instead: ``V_{k+1}^-1 = P + A^T diag(gamma_k) A`` (the paper's ``r = 0``) and
``m_{k+1} = m_k + V_{k+1} grad_m L(m_k, V_k)``, a Newton step on the mean, since
``V_{k+1}^-1`` is minus the ELBO's Hessian in ``m`` at ``V_k``. Their fixed point is the
paper's (``grad_m L = 0`` and ``V^-1`` equal to its target); the target depends on ``V`` only
through the latent variances, which are small at large n, so the error shrinks by orders of
magnitude per step instead of by ``r`` (N = 1e6, d = 100: two steps from the Laplace start
instead of six). A step that would lower the ELBO falls back to the proximal steps. The
latent variances are then computed in single precision
(:func:`~skcoreset._design.latent_variances`), and the ELBO comparisons allow for the
resulting error.

The paper uses a fixed step ``beta_k = beta`` (0.25 for logistic regression, §6); convergence
needs ``beta`` below a problem-dependent bound (§4). Near the optimum, where ``f`` is close to
quadratic, the mean error contracts by a factor between ``r`` and ``1 - (1 - r) / r`` per step,
so ``beta < 2`` is required and ``beta = 1`` is fastest. As a safeguard against a poor start, a
step that would lower the ELBO is retried with ``beta`` halved, which makes the bound increase
monotonically; the retries are counted in ``extra["n_backtracks"]`` (none were needed with the
default steps from the Laplace start on the test problems). When Gauss-Hermite values of
``f_n`` and their gradients disagree at the level of the remaining gradient (large latent
variances), shortened steps stop gaining; from then on (``extra["unguarded_from"]``) the
paper's plain iteration is run, which converges to the stationary point while the bound may
move by amounts of the order of that quadrature error.
"""

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.sparse import issparse
from sklearn.exceptions import ConvergenceWarning

from .._warnings import warn
from .._backend import InMemoryRows, dense_rows, is_chunked, row_chunks, row_slice
from .._design import (add_sparse_gram, latent_variances, linear_predictor, rmatvec,
                       row_quadratic_forms, sparse_block_rows, weighted_gram)
from .._linalg import (cholesky_in_place, cholesky_logdet, inverse_from_cholesky,
                       stable_cholesky)
from .._posterior import GaussianPosterior
from ._newton import NewtonObjective, newton_maximise, rounding_slack
from ._common import InferenceResult, log_posterior_of
from .laplace import LARGE_N, find_mode

# Step size beta per family: the paper's 0.25 for logistic (§6); beta = 1 (r = 1/2) contracts the
# error fastest near the optimum, taken for the linear Gaussian case; Poisson sits in between.
_DEFAULT_BETA = {"logistic": 0.25, "poisson": 0.5, "gaussian": 1.0}
# From the Laplace start the iterate is already near the optimum, where beta = 1 is fastest
# (the mean step is then a Newton step and the precision error halves each step).
_LAPLACE_START_BETA = 1.0
_MIN_BETA_FACTOR = 1e-10  # give up halving beta below this fraction of the base step
# Bound on the relative error of latent variances from float32 products of length p <= 1e3
# (observed: 3e-7 at p = 100).
_SINGLE_VARIANCE_ERROR = 1e-5
# Rows x quadrature nodes per chunk of the expected log-likelihood (8 MB per temporary).
_QUADRATURE_ELEMENTS = 2**18


def _linearised_terms(family, y, sample_weight, m_lat, v_lat):
    """Weighted expected log-likelihood and the coefficients alpha, gamma of eq. (12).

    Returns
    -------
    value : float
        ``sum_n w_n f_n(m~_n, v~_n)``.
    alpha, gamma : ndarray of shape (n,)
        ``-w_n df_n/dm~_n`` and ``-2 w_n df_n/dv~_n`` (clipped at 0 against rounding).
    """
    n = len(m_lat)
    value, alpha, gamma = 0.0, np.empty(n), np.empty(n)
    # quadrature holds rows x nodes temporaries: in row chunks, bounded whatever n
    nodes = getattr(family, "n_quadrature", 1)
    for rows in row_chunks(n, nodes, max_elements=_QUADRATURE_ELEMENTS):
        f, grad_m, grad_v = family.expected_loglik(y[rows], m_lat[rows], v_lat[rows])
        weight = sample_weight[rows]
        value += weight @ f
        alpha[rows] = -weight * grad_m
        gamma[rows] = np.maximum(-2.0 * weight * grad_v, 0.0)
    return value, alpha, gamma


@dataclass
class _State:
    """One iterate ``q = N(m, V)`` with what the next step and the stopping test need."""

    elbo: float
    params: dict  # path-specific: the parametrisation of (m, V) and the linearisation
    elbo_error: float = 0.0  # bound on the ELBO's error from single-precision variances


def _slack(new, old):
    """How much lower than ``old``'s ELBO ``new``'s may be and still count as no decrease:
    the rounding of the sums plus both values' error bounds."""
    return rounding_slack(old.elbo) + new.elbo_error + old.elbo_error


def _elbo_sums(family, mean, chol_inv, fit_intercept, variance_dtype, X, y, sample_weight,
               offset=None):
    """What a primal step needs of some rows (with their offsets) at ``N(mean, V)``,
    ``V = L^-T L^-1`` for ``chol_inv = L^-1``: their expected log-likelihood, the bound on
    its error from single-precision variances, ``A^T alpha`` and ``A^T diag(gamma) A``
    (of each chunk on a cluster)."""
    m_lat, v_lat = latent_variances(X, chol_inv, fit_intercept, variance_dtype, mean=mean)
    if offset is not None:
        m_lat += offset
    value, alpha, gamma = _linearised_terms(family, y, sample_weight, m_lat, v_lat)
    # a relative error e of v~_n moves sum_n w_n f_n by about -sum_n gamma_n v~_n e / 2
    error = (0.0 if variance_dtype == np.float64
             else 0.5 * _SINGLE_VARIANCE_ERROR * (gamma @ v_lat))
    return (value, error, rmatvec(X, alpha, fit_intercept),
            weighted_gram(X, gamma, fit_intercept))


def _sparse_elbo_sums(family, mean, cov, fit_intercept, variance_dtype, X, y, sample_weight,
                      offset=None):
    """:func:`_elbo_sums` of a sparse (CSR) X from the covariance ``V`` itself, by blocks of
    rows sharing X's arrays: a block's latent variances are the quadratic forms
    ``a_n^T V a_n`` over its nonzeros (:func:`row_quadratic_forms`, the way
    :func:`latent_variances` takes for sparse rows, without forming ``V`` from a factor), and
    its terms go into ``A^T alpha`` and the Gram while it is in memory: no vector of every
    row. ``variance_dtype`` keeps the error bound of :func:`_elbo_sums` (these variances are
    float64)."""
    n = X.shape[0]
    p = len(mean)
    value = error = 0.0
    alpha_sum, target = np.zeros(p), np.zeros((p, p))
    size = sparse_block_rows(X)
    for start in range(0, n, size):
        rows = slice(start, min(start + size, n))
        block = row_slice(X, rows)
        m_lat = linear_predictor(block, mean, fit_intercept)
        if offset is not None:
            m_lat += offset[rows]
        v_lat = row_quadratic_forms(block, cov, fit_intercept)
        block_value, alpha, gamma = _linearised_terms(family, y[rows], sample_weight[rows],
                                                      m_lat, v_lat)
        value += block_value
        if variance_dtype != np.float64:
            error += 0.5 * _SINGLE_VARIANCE_ERROR * (gamma @ v_lat)
        alpha_sum += rmatvec(block, alpha, fit_intercept)
        add_sparse_gram(target, block, gamma, fit_intercept)
    return value, error, alpha_sum, target


class _PrimalPath:
    """Eqs. (16)-(17) on ``p x p`` precision matrices; for ``n >= p``.

    The rows enter only through sums over them (:func:`_elbo_sums`), one pass per evaluated
    ``q``: in memory, or a map-reduce over the chunks of rows on a cluster.
    """

    def __init__(self, rows, family, prior_prec, fit_intercept, large=False):
        self.rows, self.family = rows, family
        self.prior_prec, self.fit_intercept = prior_prec, fit_intercept
        # large n: latent variances from single-precision products (see latent_variances)
        self.variance_dtype = np.float32 if large else np.float64
        # sparse rows in memory: the latent variances are quadratic forms with V itself,
        # formed in place of the precision's factor (no factor and V at once)
        self.by_covariance = not is_chunked(rows) and issparse(rows.X)
        # whether the fixed-point steps keep no precision (set by kl_proximal)
        self.newton = False

    @property
    def drops_precision(self):
        """Whether the fixed-point steps on sparse rows keep the covariance's factor instead
        of the precision: the target is factored in its own memory, the covariance formed
        and factored there, and a precision is rebuilt only for a rejected step (so an
        iterate holds two ``p x p`` arrays and a step three, not four)."""
        return self.newton and self.by_covariance

    def evaluate(self, mean, precision, chol=None):
        """ELBO and linearisation at ``N(mean, precision^-1)`` (``chol``: the precision's
        lower Cholesky factor when known, which this overwrites; ``precision`` may then be
        None, and the state keeps the covariance's factor, ``params["root"]``)."""
        p = len(mean)
        if chol is None:
            chol = stable_cholesky(precision)
        logdet_prec = cholesky_logdet(chol)
        root_kept = None
        if self.by_covariance:
            # V in place of L (LAPACK potri); after the pass over the rows its Cholesky
            # factor C in place of V: C^T is a square root F of V (F^T F = V)
            cov = inverse_from_cholesky(chol)
            value, error, alpha_sum, target = self.rows.sum(
                _sparse_elbo_sums, self.family, mean, cov, self.fit_intercept,
                self.variance_dtype)
            cov_diag = np.diag(cov).copy()
            # in V's memory, with jitter when V is singular to rounding (the factor that
            # GaussianPosterior.from_precision_cholesky computes from chol, bit for bit)
            root = cholesky_in_place(cov, symmetric=True)
            transposed = True
            if precision is None:
                root_kept = root
        else:
            # V = L^-T L^-1, so F = L^-1 is a square root of V and v~_n = ||L^-1 a_n||^2;
            # L^-1 in place of L (LAPACK trtri)
            root, info = linalg.lapack.dtrtri(chol, lower=1, overwrite_c=1)
            if info != 0:
                raise linalg.LinAlgError(f"LAPACK dtrtri failed (info={info}).")
            transposed = False
            value, error, alpha_sum, target = self.rows.sum(
                _elbo_sums, self.family, mean, root, self.fit_intercept, self.variance_dtype)
            cov_diag = np.einsum("ij,ij->j", root, root)
        target[np.diag_indices_from(target)] += self.prior_prec  # P + A^T Gamma A
        kl = 0.5 * (self.prior_prec @ cov_diag + self.prior_prec @ mean**2 - p
                    - np.sum(np.log(self.prior_prec)) + logdet_prec)
        grad_m = -alpha_sum - self.prior_prec * mean
        # the stopping criterion now, so that the square root need not be kept with the state
        params = dict(mean=mean, precision=precision, target=target, grad_m=grad_m,
                      criterion=self._criterion(root, transposed, grad_m, target),
                      root=root_kept)
        return _State(value - kl, params, error)

    @staticmethod
    def _criterion(root, transposed, grad_m, target):
        """Half the squared natural-gradient norm of the ELBO (see module docstring), from a
        square root ``F`` of ``V`` (``F^T F = V``): ``root`` (lower triangular,
        Fortran-ordered), or its transpose when ``transposed``.

        ``F G F^T = I - F (P + A^T Gamma A) F^T`` is the whitened precision mismatch; its
        Frobenius norm depends on ``V`` only, whichever root. It is summed by blocks of 256
        columns ``J``: ``F (T F[J]^T)``, a general product with the nonzero part of ``F[J]``
        and a triangular one (BLAS trmm) in place, so no copy of the target is made."""
        g = (root.T if transposed else root) @ grad_m
        trmm = linalg.get_blas_funcs("trmm", dtype=np.float64)
        p = len(target)
        total = 0.0
        for start in range(0, p, 256):
            stop = min(start + 256, p)
            # F[J]'s nonzero columns: up to J's end for a lower F, from J's start for upper
            nonzero = slice(start, p) if transposed else slice(0, stop)
            rows_f = root[nonzero, start:stop].T if transposed else root[start:stop, nonzero]
            # (F[J] T)^T = T F[J]^T (T is symmetric): Fortran-ordered, for trmm in place
            block = (rows_f @ target[nonzero]).T
            block = trmm(1.0, root, block, side=0, lower=1, trans_a=int(transposed),
                         overwrite_b=1)
            block[start + np.arange(stop - start), np.arange(stop - start)] -= 1.0
            total += np.einsum("ij,ij->", block, block)
        return 0.5 * (g @ g + 0.5 * total)

    def criterion(self, state):
        return state.params["criterion"]

    def step(self, state, r):
        """The proximal update of eqs. (16)-(17) with ``r = 1 / (1 + beta)``."""
        params = state.params
        prec = self._precision(state)
        target = self._target(state)
        scaling = r * prec
        scaling[np.diag_indices_from(scaling)] += (1.0 - r) * self.prior_prec
        # factored in place: the transpose of the symmetric matrix is Fortran-ordered
        mean = params["mean"] + (1.0 - r) * linalg.cho_solve(
            linalg.cho_factor(scaling.T, lower=False, overwrite_a=True, check_finite=False),
            params["grad_m"])
        del scaling
        precision = target * (1.0 - r)
        for rows in row_chunks(len(prec), len(prec)):  # r * prec added without a copy
            precision[rows] += r * prec[rows]
        return self.evaluate(mean, precision)

    def newton_step(self, state):
        """The fixed-point step: the precision set to its target ``P + A^T diag(gamma) A``
        (the paper's ``r = 0``) and a Newton step on the mean with it (it is minus the ELBO's
        Hessian in ``m`` at fixed ``V``, by Price's theorem). Near the optimum the target
        depends on ``V`` only through the small latent variances, so the precision error
        shrinks by far more than ``r`` per step, and the mean converges quadratically."""
        params = state.params
        rebuild = params.get("rebuild")
        if rebuild is not None and self.drops_precision:
            return self._dropping_newton_step(state)
        precision = params["target"]  # never changed in place: shared with the new state
        chol = stable_cholesky(precision)
        mean = params["mean"] + linalg.cho_solve((chol, True), params["grad_m"])
        if rebuild is not None:
            # this iterate's own precision is needed again only if the step is rejected:
            # dropped, one p x p array fewer while the new target is summed, and rebuilt then
            params["precision"] = None
        new_state = self.evaluate(mean, precision, chol)
        if rebuild is not None:
            # the new precision is this iterate's target: the same pass over the rows again
            mean_before = params["mean"]  # not params: its target is the new precision
            new_state.params["rebuild"] = (
                lambda: self.evaluate(mean_before, rebuild()).params["target"])
        return new_state

    def _dropping_newton_step(self, state):
        """:meth:`newton_step` with :attr:`drops_precision`: this iterate's target (the new
        precision) is factored in its own memory and its covariance's factor let go; both
        are rebuilt, by passes over the rows, only if the step is rejected."""
        params = state.params
        mean_before = params["mean"]
        # the factor stable_cholesky gives, bit for bit, in the target's memory
        chol = cholesky_in_place(params["target"])
        params["target"] = params["precision"] = params["root"] = None
        params["target_again"] = lambda: self.evaluate(
            mean_before, self._precision(state)).params["target"]
        mean = mean_before + linalg.cho_solve((chol, True), params["grad_m"])
        new_state = self.evaluate(mean, None, chol)
        # the new precision is this iterate's target: the same pass over the rows again
        new_state.params["rebuild"] = lambda: self._target(state)
        return new_state

    def _precision(self, state):
        """The iterate's precision, rebuilt if :meth:`newton_step` dropped it."""
        params = state.params
        if params["precision"] is None:
            params["precision"] = params["rebuild"]()
        return params["precision"]

    def _target(self, state):
        """The iterate's target, rebuilt if :meth:`_dropping_newton_step` consumed it."""
        params = state.params
        if params["target"] is None:
            params["target"] = params.pop("target_again")()
        return params["target"]

    def posterior(self, state):
        if state.params.get("root") is not None:
            # the covariance's factor computed with the iterate (that of its precision's,
            # from_precision_cholesky's, bit for bit)
            return GaussianPosterior.from_cov_cholesky(state.params["mean"],
                                                       state.params["root"])
        # the last iterate's precision factored in place, the covariance's factor in the
        # same array (GaussianPosterior.from_precision_cholesky): one p x p array kept
        return GaussianPosterior.from_precision_cholesky(
            state.params["mean"], cholesky_in_place(self._precision(state)))

    def initial(self, init, theta0, tol, max_iter):
        if init == "prior":
            p = len(self.prior_prec)
            return self.evaluate(np.zeros(p), np.diag(self.prior_prec))
        log_post = log_posterior_of(self.rows, self.family, self.prior_prec,
                                    self.fit_intercept)
        if self.drops_precision:
            # the Laplace precision factored in its own memory, rebuilt if needed
            mode = find_mode(log_post, theta0, tol=tol, max_iter=max_iter,
                             keep_neg_hessian=False)
            mode_x, chol = mode.x, mode.neg_hessian_factor
            del mode  # its linear predictors, a vector of every row
            state = self.evaluate(mode_x, None, chol)
            state.params["rebuild"] = lambda: log_post.neg_hessian(log_post.eta(mode_x))
            return state
        mode = find_mode(log_post, theta0, tol=tol, max_iter=max_iter)
        mode_x = mode.x
        state = self.evaluate(mode_x, mode.neg_hessian)
        # the Laplace precision again, should a fixed-point step from here be rejected
        state.params["rebuild"] = lambda: log_post.neg_hessian(log_post.eta(mode_x))
        return state


class _DualPath:
    """Eqs. (18)-(19) on ``n x n`` matrices; for ``p > n``.

    The iterate is ``(a, gamma~)`` with ``m = -P^-1 A^T a`` and
    ``V = (P + A^T diag(gamma~) A)^-1``.
    """

    def __init__(self, X, y, family, sample_weight, prior_prec, fit_intercept, offset=None):
        self.y, self.family, self.w, self.prior_prec = y, family, sample_weight, prior_prec
        self.offset = 0.0 if offset is None else offset  # added to every latent mean
        # for p > n the n x p design with its intercept column is no larger than X itself,
        # and smaller than the p x p covariance this path returns (a sparse X too)
        X = dense_rows(X)
        self.A = np.column_stack([X, np.ones(len(X))]) if fit_intercept else X
        self.A_prior = self.A / prior_prec  # A P^-1
        self.sigma = self.A_prior @ self.A.T  # Sigma~ = A P^-1 A^T, the prior latent covariance
        self.n = len(self.A)

    def _factor(self, gamma_t):
        """Lower Cholesky factor of ``K = I + S Sigma~ S`` and ``S = sqrt(gamma_t)``."""
        s = np.sqrt(gamma_t)
        K = s[:, None] * self.sigma * s[None, :]
        K[np.diag_indices_from(K)] += 1.0
        return linalg.cholesky(K, lower=True), s

    def evaluate(self, a, gamma_t):
        """ELBO and linearisation at the iterate ``(a, gamma~)``."""
        chol, s = self._factor(gamma_t)
        # A V A^T = Sigma~ - Sigma~ S K^-1 S Sigma~ (Woodbury), so v~ = diag(Sigma~) - ||R||^2
        R = linalg.solve_triangular(chol, s[:, None] * self.sigma, lower=True)
        m_lat = -self.sigma @ a + self.offset
        v_lat = np.diag(self.sigma) - np.sum(R**2, axis=0)
        value, alpha, gamma = _linearised_terms(self.family, self.y, self.w, m_lat, v_lat)
        # KL(q || prior) = (tr K^-1 - n + a^T Sigma~ a + log det K) / 2, all n x n
        chol_inv = linalg.solve_triangular(chol, np.eye(self.n), lower=True)
        kl = 0.5 * (np.sum(chol_inv**2) - self.n + a @ (self.sigma @ a)
                    + cholesky_logdet(chol))
        return _State(value - kl, dict(a=a, gamma_t=gamma_t, chol=chol, s=s, R=R,
                                       alpha=alpha, gamma=gamma))

    def criterion(self, state):
        """Half the squared natural-gradient norm, with ``g_m = A^T (a - alpha)``."""
        params = state.params
        latent_cov = self.sigma - params["R"].T @ params["R"]  # A V A^T
        diff = params["a"] - params["alpha"]
        DC = (params["gamma_t"] - params["gamma"])[:, None] * latent_cov
        return 0.5 * (diff @ latent_cov @ diff + 0.5 * np.sum(DC * DC.T))

    def _solve_shifted(self, d, x):
        """``(I + diag(d) Sigma~)^-1 x`` for ``d >= 0`` through a symmetric positive system."""
        chol, s = self._factor(d)
        inner = linalg.cho_solve((chol, True), s * (self.sigma @ x))
        return x - s * inner

    def step(self, state, r):
        """Eqs. (18)-(19): the same iterate as eqs. (16)-(17), in n-dimensional form."""
        params = state.params
        a, gamma_t = params["a"], params["gamma_t"]
        a_new = a + (1.0 - r) * self._solve_shifted(r * gamma_t, params["alpha"] - a)
        gamma_t_new = r * gamma_t + (1.0 - r) * params["gamma"]
        return self.evaluate(a_new, gamma_t_new)

    def posterior(self, state):
        """``N(m, V)`` with ``V = P^-1 - Q^T Q``, ``Q = L^-1 S A P^-1``: the only p x p matrix."""
        params = state.params
        mean = -(self.A_prior.T @ params["a"])
        Q = linalg.solve_triangular(params["chol"], params["s"][:, None] * self.A_prior,
                                    lower=True)
        cov = -(Q.T @ Q)
        cov[np.diag_indices_from(cov)] += 1.0 / self.prior_prec
        return GaussianPosterior(mean, cov)

    def initial(self, init, theta0, tol, max_iter):
        if init == "prior":
            return self.evaluate(np.zeros(self.n), np.zeros(self.n))
        u, eta = self._mode(tol, max_iter)
        # Laplace approximation: m = P^-1 A^T u and V^-1 = P + A^T diag(-w d2) A
        gamma_t = np.maximum(-self.w * self.family.d2(self.y, eta), 0.0)
        return self.evaluate(-u, gamma_t)

    def _mode(self, tol, max_iter):
        """Posterior mode ``theta = P^-1 A^T u`` by Newton's method in the n-vector ``u``
        (:class:`_DualModeObjective`)."""
        result = newton_maximise(_DualModeObjective(self), np.zeros(self.n), tol=tol,
                                 max_iter=max_iter)
        return result.x, result.state


class _DualModeObjective(NewtonObjective):
    """The log posterior in the dual vector ``u`` with ``theta = P^-1 A^T u``.

    With ``eta = Sigma~ u`` (the state) it is ``sum w log p(y | eta) - u^T eta / 2``, of
    gradient ``Sigma~ r`` for the residual ``r = w d1 - u`` and negative Hessian
    ``Sigma~ (I + W Sigma~)``, ``W = diag(-w d2)``. The Newton step is therefore
    ``(I + W Sigma~)^-1 r`` (the dual form of the step of
    :func:`~skcoreset._inference.laplace.newton_map`), and the decrement ``(Sigma~ r)^T step``:
    the gradient is carried as ``r`` and the negative Hessian as the curvature ``W``, so no
    ``n x n`` system other than :meth:`_DualPath._solve_shifted`'s is formed.
    """

    def __init__(self, path):
        self.path = path

    def value(self, u):
        path = self.path
        latent = path.sigma @ u  # a . theta, without the offsets
        eta = latent + path.offset
        return path.w @ path.family.loglik(path.y, eta) - 0.5 * u @ latent, eta

    def gradient(self, u, eta):
        return self.path.w * self.path.family.d1(self.path.y, eta) - u

    def neg_hessian(self, u, eta):
        return np.maximum(-self.path.w * self.path.family.d2(self.path.y, eta), 0.0)

    def factor(self, curvature):
        return curvature

    def direction(self, curvature, resid):
        step = self.path._solve_shifted(curvature, resid)
        return step, (self.path.sigma @ resid) @ step


def _resolve_beta(beta, family, init):
    if beta is None:
        if init == "laplace":
            return _LAPLACE_START_BETA
        return _DEFAULT_BETA.get(family.name, 0.25)
    if not beta > 0:
        raise ValueError(f"beta must be positive, got {beta!r}.")
    return float(beta)


def _ascent_step(path, state, step_beta, max_beta):
    """One proximal step, retried with ``beta`` halved while the ELBO would decrease.

    Returns
    -------
    new_state : _State or None
        None when even ``beta * _MIN_BETA_FACTOR`` does not increase the ELBO.
    step_beta : float
        The step size used.
    retries : int
        Number of halvings.
    """
    retries = 0
    while step_beta >= _MIN_BETA_FACTOR * max_beta:
        new_state = path.step(state, 1.0 / (1.0 + step_beta))
        if new_state.elbo >= state.elbo - _slack(new_state, state):
            return new_state, step_beta, retries
        retries += 1
        step_beta *= 0.5
    return None, step_beta, retries


def kl_proximal(X, y, family, *, sample_weight, prior_prec, fit_intercept, tol=1e-10,
                max_iter=500, beta=None, theta0=None, init="laplace", dual="auto",
                newton_steps="auto", offset=None, verbose=0):
    """Gaussian variational posterior by KL proximal-gradient steps (Khan et al. 2015, eqs. 16-19).

    Maximises the weighted evidence lower bound
    ``sum_n w_n E_q[log p(y_n | a_n . theta)] - KL(q || N(0, P^-1))`` over full-covariance
    Gaussians ``q = N(m, V)``. Each iteration linearises the expected log-likelihood at the
    current ``q`` through ``alpha_n = -w_n df_n/dm~_n`` and ``gamma_n = -2 w_n df_n/dv~_n``
    (eq. 12, from ``family.expected_loglik``: closed form for Poisson-log and Gaussian,
    Gauss-Hermite otherwise) and takes the closed-form KL-proximal step: eqs. (16)-(17) on the
    ``p x p`` precision (primal path) or eqs. (18)-(19) on ``n``-vectors (dual path, which
    forms no ``p x p`` matrix before the final covariance).

    Parameters
    ----------
    X : ndarray of shape (n, d) or DaskRows
        The rows; a :class:`~skcoreset._backend.DaskRows` storage holds rows on a cluster
        with their encoded targets and weights (``y`` and ``sample_weight`` are then None;
        primal path only), and every step's sums over rows are one map-reduce over their
        chunks.
    y : ndarray of shape (n,)
        Targets encoded for ``family``.
    family : Family
    sample_weight : ndarray of shape (n,)
        Non-negative multipliers of each point's log-likelihood.
    prior_prec : ndarray of shape (p,)
        Diagonal prior precision (``p = d + fit_intercept``).
    fit_intercept : bool
    tol : float, default=1e-10
        Stop when half the squared natural-gradient norm of the ELBO (the paper's optimality
        condition, measured in the Fisher metric of ``q``; in nats) is below ``tol``.
    max_iter : int, default=500
        Cap on proximal steps; a :class:`~sklearn.exceptions.ConvergenceWarning` is raised when
        it is hit.
    beta : float, default=None
        Proximal step size ``beta_k`` (``r_k = 1 / (1 + beta_k)``). ``None`` uses 1 from the
        Laplace start (``init="laplace"``, near the optimum) and from the prior a family
        default: 0.25 for logistic (the paper's §6 choice), 0.5 for Poisson, 1 for Gaussian.
        Larger steps converge faster near the optimum up to ``beta = 1``; ``beta >= 2`` can
        oscillate. A step that would lower the ELBO is retried with ``beta`` halved.
    theta0 : ndarray of shape (p,), default=None
        Starting point of the Newton search for the mode used by ``init="laplace"`` on the
        primal path (warm start). The dual path starts that search at zero, since its
        iterates must lie in the row space of the design.
    init : {"laplace", "prior"}, default="laplace"
        Initial ``q``: the Laplace approximation (mode by Newton's method, covariance the
        inverse negative Hessian there), which is exact for the Gaussian family and close to
        the optimum otherwise; or the prior, as in the paper's Algorithm 1.
    dual : {"auto", True, False}, default="auto"
        Use the dual updates of eq. (19); ``"auto"`` does so when ``p > n`` for rows in
        memory.
    newton_steps : {"auto", True, False}, default="auto"
        On the primal path from the Laplace start with the default ``beta``, take
        fixed-point steps instead of proximal ones (:meth:`_PrimalPath.newton_step`: the
        precision set to its linearised target, a Newton step on the mean), which converge
        in a few steps where the proximal step contracts by ``r`` per step; a step that
        would lower the ELBO is replaced by a proximal one, as are all later steps.
        ``"auto"``: for ``n >= 50,000``, where each step costs several passes over X (the
        latent variances are then also computed in single precision).
    offset : ndarray of shape (n,), default=None
        A known term of each row's linear predictor (a storage holds its own).
    verbose : int, default=0
        Print one line per iteration when positive.

    Returns
    -------
    InferenceResult
        ``posterior`` is the :class:`GaussianPosterior` ``N(m, V)``; ``elbo`` the final lower
        bound; ``extra`` holds ``elbo_history`` (ELBO at the initial ``q`` and after each
        step), ``criterion_history``, ``n_backtracks`` (steps retried with a smaller beta),
        ``n_newton`` (fixed-point steps taken, see ``newton_steps``),
        ``unguarded_from`` (iteration from which plain steps were taken because the bound's
        quadrature value stopped following its gradients, or None), ``beta`` and ``dual``.
    """
    if init not in ("laplace", "prior"):
        raise ValueError(f"init must be 'laplace' or 'prior', got {init!r}.")
    if dual not in ("auto", True, False):
        raise ValueError(f"dual must be 'auto', True or False, got {dual!r}.")
    if newton_steps not in ("auto", True, False):
        raise ValueError(f"newton_steps must be 'auto', True or False, got {newton_steps!r}.")
    newton = init == "laplace" and beta is None
    beta = _resolve_beta(beta, family, init)
    chunked = is_chunked(X)
    n = X.n if chunked else X.shape[0]
    use_dual = (len(prior_prec) > n and not chunked) if dual == "auto" else bool(dual)
    if use_dual and chunked:
        raise ValueError("The dual updates need the n x n kernel of the rows in memory: "
                         "use dual=False (or 'auto') for rows on a cluster.")
    large = n >= LARGE_N
    if use_dual:
        path = _DualPath(X, y, family, sample_weight, prior_prec, fit_intercept, offset)
        newton = False
    else:
        rows = X if chunked else InMemoryRows(X, y, sample_weight, offset)
        path = _PrimalPath(rows, family, prior_prec, fit_intercept, large)
        newton = newton and (large if newton_steps == "auto" else newton_steps)
        path.newton = newton

    state = path.initial(init, theta0, tol=min(tol, 1e-10), max_iter=100)
    elbo_history, criterion_history = [state.elbo], []
    step_beta, n_backtracks, n_iter, n_newton = beta, 0, 0, 0
    unguarded_from, failed = None, False
    while True:
        criterion = path.criterion(state)
        criterion_history.append(criterion)
        if verbose:
            print(f"[kl_proximal] iter {n_iter:4d}  elbo {state.elbo:.12g}  "
                  f"criterion {criterion:.3e}  beta {step_beta:.3g}")
        if criterion <= tol or n_iter == max_iter:
            break
        new_state = path.newton_step(state) if newton else None
        if new_state is not None and new_state.elbo >= state.elbo - _slack(new_state, state):
            n_newton += 1
        elif unguarded_from is None:
            newton = False  # proximal steps from here on
            new_state = None  # the rejected step's arrays, before the precision is rebuilt
            new_state, step_beta, retries = _ascent_step(path, state, step_beta, beta)
            n_backtracks += retries
            if new_state is None:
                failed = True  # no step size increases the bound: a hopeless start
                break
            if retries and new_state.elbo - state.elbo <= _slack(new_state, state):
                # Shortened steps gain nothing although the gradient is not zero: the bound's
                # quadrature value no longer follows its gradients. The paper's plain
                # iteration still converges to the stationary point from here.
                unguarded_from = n_iter
        if unguarded_from is not None:
            new_state, step_beta = path.step(state, 1.0 / (1.0 + beta)), beta
        state = new_state
        n_iter += 1
        elbo_history.append(state.elbo)
        step_beta = min(beta, 2.0 * step_beta)

    converged = criterion <= tol
    if failed:
        warn(
            f"KL proximal-gradient inference stopped at iteration {n_iter}: no step size "
            f"increases the ELBO (optimality criterion {criterion:.2e}); start from "
            "init='laplace' or rescale the features.", ConvergenceWarning)
    elif not converged:
        warn(
            f"KL proximal-gradient inference did not converge in max_iter={max_iter} "
            f"iterations (optimality criterion {criterion:.2e} > tol={tol:.2e}); increase "
            "max_iter or check the data scaling.", ConvergenceWarning)
    return InferenceResult(
        posterior=path.posterior(state), n_iter=n_iter, converged=converged, elbo=state.elbo,
        extra=dict(elbo_history=np.array(elbo_history),
                   criterion_history=np.array(criterion_history), n_backtracks=n_backtracks,
                   unguarded_from=unguarded_from, beta=beta, dual=use_dual, n_newton=n_newton))
