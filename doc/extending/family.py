"""A new family: the Gamma likelihood with a log link and a known shape, its regressor, and a
coreset of it (the worked example of "Adding a family" in doc/extending.rst)."""

from numbers import Real
from typing import Literal

import numpy as np
import statsmodels.api as sm
from scipy.special import gammaln
from sklearn.utils import check_random_state

from skcoreset import QuasiNewtonCoreset, UniformCoreset
from skcoreset._sklearn_compat import Interval
from skcoreset._typing import FitMethod, RandomStateLike
from skcoreset.families import FAMILIES, Family, LogLink
from skcoreset.families._base import check_real_targets
from skcoreset.linear_model._docs import COMMON_ATTRS_DOC
from skcoreset.linear_model._methods import Param, glm_estimator
from skcoreset.linear_model._regression import _BaseRegression


# --- 1. the family: the log-likelihood in eta and its first two derivatives ----------------
class GammaFamily(Family):
    """Gamma targets of mean ``mu = exp(eta)`` and known shape ``k``:
    ``log p(y | eta) = -k eta - k y exp(-eta) + k log k - log Gamma(k) + (k - 1) log y``."""

    name = "gamma"

    def __init__(self, shape=1.0, n_quadrature=32):
        super().__init__(LogLink(), n_quadrature=n_quadrature)
        self.shape = shape

    def _scaled(self, y, eta):
        # k y exp(-eta), finite for |eta| up to 1e4 (the contract of every family)
        return self.shape * np.asarray(y) * np.exp(np.minimum(-np.asarray(eta), 500.0))

    def loglik(self, y, eta):
        y = np.asarray(y, dtype=float)
        if np.ndim(eta) == 2 and y.ndim == 1:
            y = y[:, None]
        return -self.shape * eta - self._scaled(y, eta) + self.loglik_constant(y)

    def loglik_constant(self, y):
        k = self.shape
        return k * np.log(k) - gammaln(k) + (k - 1.0) * np.log(y)

    def d1(self, y, eta):
        y = y[:, None] if np.ndim(eta) == 2 and np.ndim(y) == 1 else y
        return -self.shape + self._scaled(y, eta)

    def d2(self, y, eta):
        y = y[:, None] if np.ndim(eta) == 2 and np.ndim(y) == 1 else y
        return -self._scaled(y, eta)

    def predictive_variance(self, mean, var):
        # the Gamma noise E[mu^2] / k plus the posterior variance of mu
        return var + (mean**2 + var) / self.shape

    def sample(self, eta, random_state=None):
        mean = self.mean(eta)
        return check_random_state(random_state).gamma(self.shape, mean / self.shape)

    def encode_target(self, y, classes=None):
        y = check_real_targets(y)
        if np.any(y <= 0):
            raise ValueError("Gamma targets are positive: y contains values <= 0.")
        return y


# one registry line makes it nameable: model="gamma" in the constructors (default shape)
FAMILIES[GammaFamily.name] = GammaFamily


# --- 2. its regressor: a regressor base without counts or exposures ------------------------
@glm_estimator(GammaFamily(), COMMON_ATTRS_DOC, shape=Param(
    1.0, [Interval(Real, 0, None, closed="neither")], "", ""))
class BayesianGammaRegression(_BaseRegression):
    """Bayesian Gamma regression with a log link and a known shape.

    Parameters
    ----------
    shape : float, default=1.0
        The Gamma shape ``k``: the variance of y is ``mu^2 / k``.
    {common_params}
    Attributes
    ----------
    {common_attrs}
    """

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, shape: float = 1.0, method: FitMethod = "laplace",
                 prior_scale: float = 1.0, intercept_prior_scale: float = 10.0,
                 fit_intercept: bool = True, tol: float = 1e-10, max_iter: int = 500,
                 kl_beta: float | None = None, sampler: Literal["ensemble", "nuts"] = "nuts",
                 n_draws: int = 4000, n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 verbose: int = 0) -> None:
        self.shape = shape
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.kl_beta = kl_beta
        self.sampler = sampler
        self.n_draws = n_draws
        self.n_burnin = n_burnin
        self.thin = thin
        self.n_walkers = n_walkers
        self.n_chains = n_chains
        self.n_jobs = n_jobs
        self.max_tree_depth = max_tree_depth
        self.max_gradients = max_gradients
        self.max_time = max_time
        self.random_state = random_state
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        return GammaFamily(shape=self.shape)


# --- 3. use: every method the table says supports it, and every coreset constructor --------
def main():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 3))
    mean = np.exp(X @ [0.4, -0.3, 0.2] + 1.0)
    y = rng.gamma(2.0, mean / 2.0)

    # the MAP under a weak prior is the maximum-likelihood GLM fit (the shape does not move it)
    reg = BayesianGammaRegression(shape=2.0, prior_scale=1e4, intercept_prior_scale=1e4)
    reg.fit(X, y)
    glm = sm.GLM(y, sm.add_constant(X),
                 family=sm.families.Gamma(sm.families.links.Log())).fit(tol=1e-12)
    np.testing.assert_allclose(reg.intercept_, glm.params[0], atol=1e-6)
    np.testing.assert_allclose(reg.coef_, glm.params[1:], atol=1e-6)

    # kl_proximal and mcmc come with the table; pass_glm needs a polynomial mapping, so the
    # estimator does not even have its options
    assert "pass_degree" not in reg.get_params()
    vi = BayesianGammaRegression(shape=2.0, method="kl_proximal").fit(X, y)
    assert np.max(np.abs(vi.coef_ - reg.coef_)) < 0.01

    # the constructors take it by its registered name, or as an instance with a shape: a
    # coreset of 300 rows of 5,000
    assert isinstance(UniformCoreset(M=50, model="gamma").fit(X, y).family_, GammaFamily)
    coreset = QuasiNewtonCoreset(M=300, model=GammaFamily(shape=2.0), random_state=0)
    X_core, y_core, w_core = coreset.fit_coreset(X, y)
    small = BayesianGammaRegression(shape=2.0).fit(X_core, y_core, sample_weight=w_core)
    full = BayesianGammaRegression(shape=2.0).fit(X, y)
    sd = np.sqrt(np.diag(full.posterior_.cov))
    assert np.max(np.abs(small.posterior_.mean - full.posterior_.mean) / sd) < 0.5
    return reg


if __name__ == "__main__":
    print(main())
