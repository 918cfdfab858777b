"""Property-based hostile inputs: random hostile arrays and parameters for every public
estimator and coreset constructor.

Each example builds a small data set, makes it hostile (NaN or infinity somewhere, extreme
scales, duplicated rows, one class, tiny or huge or partly zero weights, a boolean or a
string where a number is meant) and fits one estimator. The outcome must be either a
``ValueError``/``TypeError`` whose message names the problem (never numpy's or
scikit-learn's internals), or finite output: finite posterior means and predictions, or a
non-empty coreset of finite positive weights whose total is within a factor of 10 of the
data's (or a warning saying it is not). Derandomized with a bounded number of examples, so
CI runs the same examples every time, in a few seconds.
"""

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, FrankWolfeCoreset, GIGACoreset,
                       QuasiNewtonCoreset, SensitivityCoreset, SparseVICoreset,
                       StreamingCoreset, UniformCoreset)
from skcoreset._testing import INTERNAL_MESSAGE as INTERNAL
from skcoreset.multiclass import BayesianOneVsRestClassifier

_MCMC = dict(n_draws=20, n_burnin=4, thin=1, random_state=0)
ESTIMATORS = {
    "uniform": UniformCoreset(M=6, random_state=0),
    "sensitivity": SensitivityCoreset(M=6, n_clusters=2, random_state=0),
    "giga": GIGACoreset(M=6, projection_dim=20, random_state=0),
    "frank_wolfe": FrankWolfeCoreset(M=6, projection_dim=20, random_state=0),
    "sparsevi": SparseVICoreset(M=3, n_draws=10, n_iter_opt=3, random_state=0),
    "quasi_newton": QuasiNewtonCoreset(M=6, n_draws=20, max_iter=3, random_state=0),
    "streaming": StreamingCoreset(GIGACoreset(M=6, projection_dim=20), block_size=10,
                                  random_state=0),
    "logistic": BayesianLogisticRegression(),
    "logistic_kl_proximal": BayesianLogisticRegression(method="kl_proximal"),
    "logistic_pass_glm": BayesianLogisticRegression(method="pass_glm"),
    "logistic_mcmc": BayesianLogisticRegression(method="mcmc", **_MCMC),
    "poisson": BayesianPoissonRegression(),
    "poisson_mcmc": BayesianPoissonRegression(method="mcmc", **_MCMC),
    "negative_binomial": BayesianNegativeBinomialRegression(),
    "one_vs_rest": BayesianOneVsRestClassifier(),
}
COUNT_MODELS = {"poisson", "poisson_mcmc", "negative_binomial"}


@st.composite
def hostile_fits(draw):
    name = draw(st.sampled_from(sorted(ESTIMATORS)))
    n = draw(st.integers(2, 30))
    d = draw(st.integers(1, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    X = rng.normal(size=(n, d))
    scale = draw(st.sampled_from([1.0, 1.0, 1e-150, 1e-8, 1e8, 1e150]))
    X = X * scale
    if draw(st.booleans()):  # duplicated rows
        X[n // 2:] = X[: n - n // 2]
    eta = X[:, 0] / scale
    counts = name in COUNT_MODELS
    y = rng.poisson(np.exp(np.clip(eta, -5, 3))) if counts else (eta > 0).astype(int)
    problems = []  # what a refusal may name: the problems made here, or others it found
    if draw(st.integers(0, 4)) == 0:  # one class (all counts equal)
        y = np.zeros(n, dtype=int)
        problems.append("class")
    bad = draw(st.sampled_from([None, None, None, "X", "y", "weights"]))
    value = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    if bad is not None:
        problems.append("NaN|infinit|finite")
        position = draw(st.integers(0, n - 1))
        if bad == "X":
            X[position, draw(st.integers(0, d - 1))] = value
        elif bad == "y":
            y = y.astype(float)
            y[position] = value
    weights = draw(st.sampled_from([None, "ones", "tiny", "huge", "zeros", "random"]))
    w = {None: None, "ones": np.ones(n), "tiny": np.full(n, 1e-200), "huge": np.full(n, 1e100),
         "zeros": (np.arange(n) % 2) * 2.0, "random": rng.exponential(size=n)}[weights]
    if bad == "weights":
        w = np.ones(n) if w is None else w.copy()
        w[draw(st.integers(0, n - 1))] = value
    estimator = clone(ESTIMATORS[name])
    numeric = sorted(key for key, default in estimator.get_params(deep=False).items()
                     if isinstance(default, (int, float)) and not isinstance(default, bool)
                     and key not in ("verbose", "random_state", "n_jobs"))
    if numeric and draw(st.integers(0, 3)) == 0:  # a boolean or a string for a number
        param = draw(st.sampled_from(numeric))
        estimator.set_params(**{param: draw(st.sampled_from([True, False, "1"]))})
        problems.append(f"'{param}'")
    return name, estimator, X, y, w, problems


# Problems of the data a refusal may name besides those made on purpose (extreme scales,
# extreme weights, tiny data).
FOUND = r"scale|Standardise|overflow|sample|weight|class|feature|rows"


def _check_error(error, problems):
    message = str(error)
    assert message and not INTERNAL.search(message), message
    if problems:
        assert re.search("|".join(problems + [FOUND]), message, re.IGNORECASE), (
            problems, message)


def _check_output(fitted, X, y, w, caught):
    if hasattr(fitted, "sample_weight_"):
        weights = fitted.sample_weight_
        assert len(weights) > 0 and np.all(np.isfinite(weights)) and np.all(weights > 0)
        total = len(y) if w is None else np.sum(w)
        ratio = weights.sum() / total
        told = any("of the data's total weight" in str(c.message) for c in caught)
        assert 0.1 <= ratio <= 10.0 or (ratio < 0.5 and told), ratio
        return
    rows = np.asarray(X, dtype=float)[:3]
    if hasattr(fitted, "coef_"):
        assert np.all(np.isfinite(fitted.coef_)) and np.all(np.isfinite(fitted.intercept_))
    if hasattr(fitted, "predict_proba"):
        proba, std = fitted.predict_proba(rows, return_std=True)
        assert np.all(np.isfinite(proba)) and np.all(np.isfinite(std))
    else:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            mean, std = fitted.predict(rows, return_std=True)
        # absurd predictors: a rate or std beyond float64 is inf, and said so
        told = any("beyond float64" in str(c.message) for c in caught)
        assert told or (np.all(np.isfinite(mean)) and np.all(np.isfinite(std)))
        assert not np.any(np.isnan(mean)) and not np.any(np.isnan(std))


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(hostile_fits())
def test_hostile_data_is_refused_clearly_or_fitted_finitely(case):
    name, estimator, X, y, w, problems = case
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fitted = estimator.fit(X, y, sample_weight=w)
        except (ValueError, TypeError) as error:
            _check_error(error, problems)
            return
    refusals = [p for p in problems if p != "class"]  # one class can be fine (counts)
    assert not refusals, f"{name} accepted {refusals}"
    _check_output(fitted, X, y, w, caught)


def test_the_property_test_sees_every_estimator():
    assert len(ESTIMATORS) >= 15
    with pytest.raises(ValueError, match="'M' parameter"):
        clone(ESTIMATORS["uniform"]).set_params(M=True).fit(np.ones((4, 1)), [0, 1, 0, 1])
