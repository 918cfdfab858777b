"""gaussian_check: is a Gaussian posterior enough? Checked against a grid of the exact
posterior of two parameters."""

import numpy as np
import pytest
from scipy.special import log_expit
from scipy.stats import multivariate_normal

from skcoreset import BayesianLogisticRegression
from skcoreset.metrics import exact_kl, gaussian_check


def _data(n, intercept, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 1))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(X[:, 0] + intercept)))).astype(int)
    return X, y


def _grid_kl(clf, X, y, half_width=8.0, n=101):
    """KL(Laplace || exact posterior) of (coef, intercept) on a grid of +-8 Laplace sd,
    the exact posterior normalised on the grid (its mass beyond is negligible)."""
    q = clf.posterior_
    axes = [np.linspace(m - half_width * s, m + half_width * s, n)
            for m, s in zip(q.mean, np.sqrt(np.diag(q.cov)))]
    a, b = np.meshgrid(*axes, indexing="ij")
    theta = np.column_stack([a.ravel(), b.ravel()])
    eta = np.outer(X[:, 0], theta[:, 0]) + theta[:, 1]
    log_p = (log_expit((2 * y - 1)[:, None] * eta).sum(axis=0)
             - 0.5 * theta[:, 0] ** 2 / clf.prior_scale ** 2
             - 0.5 * theta[:, 1] ** 2 / clf.intercept_prior_scale ** 2)
    cell = (axes[0][1] - axes[0][0]) * (axes[1][1] - axes[1][0])
    top = log_p.max()
    log_p -= top + np.log(np.sum(np.exp(log_p - top)) * cell)
    log_q = multivariate_normal(q.mean, q.cov).logpdf(theta)
    return float(np.sum(np.exp(log_q) * (log_q - log_p)) * cell)


def test_a_near_gaussian_posterior_is_enough():
    X, y = _data(5000, 0.0)
    clf = BayesianLogisticRegression().fit(X, y)
    check = gaussian_check(clf, X, y, n_draws=2000, random_state=0)
    reference = _grid_kl(clf, X, y)
    assert reference < 1e-3
    assert check.enough is True
    assert check.kl == pytest.approx(reference, rel=0.2)
    line = repr(check)
    assert "\n" not in line and line == str(check) == check.advice
    assert line.startswith("Laplace is ") and "enough" in line


def test_rare_events_are_not_enough_and_the_advice_says_how_to_sample():
    X, y = _data(2000, -6.0)  # 10 positives: a skewed posterior
    clf = BayesianLogisticRegression().fit(X, y)
    check = gaussian_check(clf, X, y, n_draws=2000, random_state=0)
    reference = _grid_kl(clf, X, y)
    assert reference > 0.05
    assert check.enough is False
    assert check.kl == pytest.approx(reference, rel=0.25)
    # the same measure as exact_kl, draw for draw
    assert check.kl == exact_kl(clf, X, y, n_draws=2000, random_state=0).kl
    assert "above 0.02 nats" in check.advice and "method='mcmc'" in check.advice


def test_the_route_advised_follows_the_number_of_rows():
    X, y = _data(600, -4.0)  # too few rows for a coreset to pay
    clf = BayesianLogisticRegression().fit(X, y)
    check = gaussian_check(clf, X, y, n_draws=500, random_state=0)
    assert check.enough is False
    assert "on all rows" in check.advice and "QuasiNewtonCoreset" not in check.advice


def test_draws_are_refused():
    X, y = _data(300, 0.0)
    clf = BayesianLogisticRegression(method="mcmc", n_draws=100, random_state=0).fit(X, y)
    with pytest.raises(TypeError, match="exact_kl"):
        gaussian_check(clf, X, y)
