"""The measured rule of which route to the exact posterior is faster, and the Pipeline's
warning when a coreset does not pay."""

import warnings

import numpy as np
import pytest

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression, UniformCoreset
from skcoreset._advice import coreset_break_even, coreset_pays, default_coreset_rows
from skcoreset.exceptions import CoresetEfficiencyWarning
from skcoreset.pipeline import Pipeline

# 100 uniform rows are far from the posterior: that warning is tested elsewhere
pytestmark = pytest.mark.filterwarnings("ignore::skcoreset.exceptions.CoresetAccuracyWarning")


@pytest.mark.parametrize("n_samples, n_features, pays", [
    (1_000, 5, False),       # the default coreset would be half of the rows
    (1_999, 10, False),
    (2_000, 10, True),
    (300_000, 10, True),
    (2_000, 30, False),      # 527 second-order moments at 31 parameters
    (2_108, 30, True),
    (20_000, 100, False),    # 5,253 rows for 101 parameters
    (21_012, 100, True),
])
def test_the_rule(n_samples, n_features, pays):
    assert coreset_pays(n_samples, n_features) is pays


def test_the_break_even_grows_with_the_coreset_it_needs():
    assert default_coreset_rows(5) == default_coreset_rows(29) == 500
    assert default_coreset_rows(30) == 31 * 34 // 2
    sizes = [coreset_break_even(d) for d in range(1, 200)]
    assert np.all(np.diff(sizes) >= 0)


def _pipeline(method="mcmc"):
    est = (BayesianPoissonRegression(method=method, n_draws=100, n_chains=2, random_state=0)
           if method == "mcmc" else BayesianPoissonRegression(method=method))
    return Pipeline([("coreset", UniformCoreset(M=100, random_state=0)), ("est", est)])


def _counts(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    return X, rng.poisson(np.exp(0.3 * X[:, 0] + 0.5))


def test_the_pipeline_warns_when_nuts_follows_a_coreset_of_too_few_rows():
    X, y = _counts(800)
    with pytest.warns(CoresetEfficiencyWarning,
                      match=r"800 rows and 2 features.*2,000 rows.*"
                            r"BayesianPoissonRegression\(method='mcmc'\) on all rows"):
        _pipeline().fit(X, y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CoresetEfficiencyWarning)
        _pipeline().fit(X, y)
    assert [w.filename for w in caught
            if w.category is CoresetEfficiencyWarning] == [__file__]  # the caller's line


@pytest.mark.parametrize("n, method", [(800, "laplace"), (2500, "mcmc")])
def test_no_warning_for_a_gaussian_method_or_enough_rows(n, method):
    X, y = _counts(n)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetEfficiencyWarning)
        _pipeline(method).fit(X, y)


def test_no_warning_without_a_coreset_step():
    X, y = _counts(500)
    clf = BayesianLogisticRegression(method="mcmc", n_draws=100, n_chains=2, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CoresetEfficiencyWarning)
        Pipeline([("est", clf)]).fit(X, (y > 1).astype(int))
