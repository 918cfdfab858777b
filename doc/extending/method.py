"""A new inference method with an option: a tempered Laplace fit (the worked example of
"Adding an inference method or option" in doc/extending.rst)."""

from numbers import Real
from typing import Literal

import numpy as np

from skcoreset import BayesianLogisticRegression
from skcoreset._inference import laplace
from skcoreset._sklearn_compat import Interval
from skcoreset._typing import FitMethod, RandomStateLike
from skcoreset.families import LogisticFamily
from skcoreset.linear_model._binary import _CLASSIFIER_ATTRS_DOC, _BaseBinaryClassifier
from skcoreset.linear_model._methods import METHODS, Method, Param, glm_estimator


# --- 1. the inference function: (X, y, family, **common, **options) -> InferenceResult -----
def tempered_laplace(X, y, family, *, temperature, sample_weight, **common):
    """Laplace's approximation of the power posterior, the likelihood raised to
    ``temperature`` (Grunwald, 2012): every row's weight times the temperature."""
    return laplace(X, y, family, sample_weight=temperature * sample_weight, **common)


# --- 2. one entry in the method table: the function, its doc item and its option ----------
METHODS["tempered"] = Method(tempered_laplace, doc="""
- ``"tempered"``: Laplace's approximation of the power posterior, the likelihood raised to
  ``temperature``.""", options={"temperature": Param(
    1.0, [Interval(Real, 0, None, closed="neither")], "float", """
Power of the likelihood in ``method="tempered"`` (below 1 widens the posterior, the safe
side under a misspecified model).""")})
# In the package this is all: python -m skcoreset.linear_model._codegen writes the option
# into the __init__ of every estimator (a test names each class whose __init__ is stale),
# and the constraints and parameter docs follow at import. Here the entry is added at run
# time, so the estimator below is declared after it, with the __init__ the table renders.


@glm_estimator(LogisticFamily(), _CLASSIFIER_ATTRS_DOC)
class TemperedLogisticRegression(_BaseBinaryClassifier):
    """Bayesian logistic regression with the tempered method.

    Parameters
    ----------
    {common_params}
    Attributes
    ----------
    {common_attrs}
    """

    # __init__ generated from the method table (python -m skcoreset.linear_model._codegen)
    def __init__(self, *, method: FitMethod = "laplace", prior_scale: float = 1.0,
                 intercept_prior_scale: float = 10.0, fit_intercept: bool = True,
                 tol: float = 1e-10, max_iter: int = 500, kl_beta: float | None = None,
                 pass_degree: int = 2, pass_radius: float | Literal["auto"] = "auto",
                 sampler: Literal["ensemble", "nuts"] = "nuts", n_draws: int = 4000,
                 n_burnin: int | None = None, thin: int | None = None,
                 n_walkers: int | None = None, n_chains: int = 4, n_jobs: int | None = None,
                 max_tree_depth: int = 10, max_gradients: int | Literal["auto"] | None = "auto",
                 max_time: float | None = None, random_state: RandomStateLike = None,
                 temperature: float = 1.0, verbose: int = 0) -> None:
        self.method = method
        self.prior_scale = prior_scale
        self.intercept_prior_scale = intercept_prior_scale
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.kl_beta = kl_beta
        self.pass_degree = pass_degree
        self.pass_radius = pass_radius
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
        self.temperature = temperature
        self.verbose = verbose
    # end of the generated __init__

    def _family(self):
        return LogisticFamily()


# --- 3. use -------------------------------------------------------------------------------
def main():
    cls = TemperedLogisticRegression
    assert "temperature : float, default=1.0" in cls.__doc__
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 2))
    y = (rng.random(1000) < 1 / (1 + np.exp(-(X @ [1.0, -0.5])))).astype(int)
    tempered = cls(method="tempered", temperature=0.5).fit(X, y)
    # the power posterior at 1/2 is the posterior of the rows each weighted 1/2
    half = BayesianLogisticRegression().fit(X, y, sample_weight=np.full(1000, 0.5))
    np.testing.assert_allclose(tempered.posterior_.mean, half.posterior_.mean, rtol=1e-10)
    np.testing.assert_allclose(tempered.posterior_.cov, half.posterior_.cov, rtol=1e-10)
    return tempered


if __name__ == "__main__":
    print(main())
