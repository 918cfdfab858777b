"""The work and time budget of the MCMC samplers, and their refusal of flat posteriors.

A NUTS tree at the maximum depth costs 2**depth - 1 gradients, so a posterior that the data
do not bound (separated classes, all-zero counts under a very wide prior) used to keep a
fit running for hours. Here: such posteriors are refused up front by NUTS (warned about by
the ensemble), and every run stops at its gradient or time budget with the draws it has and
a warning that names the ESS, the R-hat, the cause and the fixes. Budgets are small so that
every test takes a few seconds.
"""

import time
import warnings

import numpy as np
import pytest
from scipy.special import expit

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression)
from skcoreset._inference import prior_precision
from skcoreset._inference.mcmc import mcmc
from skcoreset._inference.nuts import nuts
from skcoreset.exceptions import MCMCDiagnosticWarning
from skcoreset.families import LogisticFamily


def _separable(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3))
    return X, (X[:, 0] > 0).astype(int)


def _logistic(n=200, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < expit(X @ np.linspace(-1, 1, d)), 1.0, -1.0)
    return X, y, prior_precision(d, prior_scale=1.0, intercept_prior_scale=5.0,
                                 fit_intercept=True)


@pytest.mark.parametrize("cls", [BayesianLogisticRegression, BayesianProbitRegression])
def test_nuts_refuses_separated_classes_under_a_very_wide_prior(cls):
    X, y = _separable()
    est = cls(method="mcmc", n_draws=200, n_chains=2, prior_scale=1e8,
              intercept_prior_scale=1e8, random_state=0)
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"flat or nearly improper.*separated by a hyperplane"
                       r".*smaller prior_scale.*sampler='ensemble'.*more data") as error:
        est.fit(X, y)
    assert time.perf_counter() - started < 20
    # the posterior sd of the linear predictor is of the prior's scale (1e8 here)
    sd = float(str(error.value).split("posterior sd of ")[1].split(" ")[0])
    assert sd > 1e6
    assert not hasattr(est, "coef_")


def test_a_moderate_prior_on_separated_classes_is_sampled():
    """A prior scale of 3 bounds the separated direction at a few units: no refusal."""
    X, y = _separable(n=60)
    est = BayesianLogisticRegression(method="mcmc", n_draws=100, n_chains=2, n_burnin=50,
                                     prior_scale=3.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        est.fit(X, y)
    assert est.posterior_samples_.shape[0] >= 100


def test_ensemble_warns_about_a_flat_posterior_and_returns():
    X, y = _separable()
    est = BayesianLogisticRegression(method="mcmc", sampler="ensemble", n_draws=160,
                                     n_burnin=20, thin=1, prior_scale=1e8,
                                     intercept_prior_scale=1e8, random_state=0)
    with pytest.warns(MCMCDiagnosticWarning, match="flat or nearly improper"):
        est.fit(X, y)
    assert est.posterior_samples_.shape == (160, 4)


def test_all_zero_counts_under_a_very_wide_prior_give_a_clear_refusal():
    """Both prior scales at 1e8: the intercept's direction is unbounded (mici's step-size
    search used to fail there with an internal ``zip()`` error)."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((50, 3)), np.zeros(50)
    for cls in (BayesianPoissonRegression, BayesianNegativeBinomialRegression):
        est = cls(method="mcmc", prior_scale=1e8, intercept_prior_scale=1e8, n_draws=20,
                  n_burnin=5, n_chains=2, random_state=0)
        with pytest.raises(ValueError, match="flat or nearly improper.*all-zero counts"):
            est.fit(X, y)


def test_all_zero_counts_with_the_default_intercept_prior_stop_within_the_budget():
    """prior_scale=1e8 alone: a funnel (the coefficients free as the intercept falls), which
    NUTS samples slowly; the run stops at its gradient budget with what it has."""
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((200, 2)), np.zeros(200)
    est = BayesianPoissonRegression(method="mcmc", prior_scale=1e8, n_draws=400, n_burnin=50,
                                    max_gradients=6000, random_state=0)
    with pytest.warns(MCMCDiagnosticWarning) as record:
        est.fit(X, y)
    assert est.n_gradients_ <= 6000
    stop = [str(w.message) for w in record if "stopped at its budget of max_gradients=6000"
            in str(w.message)]
    assert len(stop) == 1
    for words in ("bulk effective sample size of", "R-hat of", "Likely cause:",
                  "a proper prior", "sampler='ensemble'", "more data"):
        assert words in stop[0]
    assert np.all(np.isfinite(est.posterior_samples_))
    assert est.posterior_samples_.shape[0] % 4 == 0  # as many draws from every chain


def test_nuts_stops_at_max_gradients_mid_round_with_even_chains():
    X, y, prior = _logistic()
    with pytest.warns(MCMCDiagnosticWarning, match=r"max_gradients=3000 gradient evaluations "
                      r"after \d+ draws per chain"):
        result = mcmc(X, y, LogisticFamily(), sample_weight=np.ones(len(y)), prior_prec=prior,
                      fit_intercept=True, n_draws=4000, n_burnin=20, max_gradients=3000,
                      random_state=0)
    extra = result.extra
    assert extra["stopped_by"] == "max_gradients" and not result.converged
    assert extra["n_gradients"] <= 3000
    n_chains, per_chain = extra["sample_stats"]["lp"].shape
    assert n_chains == 4 and result.posterior.n_samples == 4 * per_chain
    # the draws are the chains' own: the same seed and budget give the same draws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCMCDiagnosticWarning)
        again = mcmc(X, y, LogisticFamily(), sample_weight=np.ones(len(y)), prior_prec=prior,
                     fit_intercept=True, n_draws=4000, n_burnin=20, max_gradients=3000,
                     random_state=0)
    np.testing.assert_array_equal(again.posterior.samples, result.posterior.samples)


def test_nuts_budget_spent_in_the_warm_up_returns_the_warm_up_draws():
    X, y, prior = _logistic()
    with pytest.warns(MCMCDiagnosticWarning, match="during the warm-up"):
        result = mcmc(X, y, LogisticFamily(), sample_weight=np.ones(len(y)), prior_prec=prior,
                      fit_intercept=True, n_draws=100, n_burnin=500, n_chains=2,
                      max_gradients=400, random_state=0)
    assert 0 < result.posterior.n_samples <= 400
    with pytest.raises(ValueError, match=r"before any chain completed an iteration.*Raise "
                       "max_gradients"):
        mcmc(X, y, LogisticFamily(), sample_weight=np.ones(len(y)), prior_prec=prior,
             fit_intercept=True, n_draws=100, n_chains=2, max_gradients=1, random_state=0)


@pytest.mark.parametrize("sampler", ["nuts", "ensemble"])
def test_max_time_bounds_the_run(sampler):
    X, y, prior = _logistic(n=2000, d=5)
    started = time.perf_counter()
    with pytest.warns(MCMCDiagnosticWarning, match=r"max_time=0\.5 seconds"):
        result = mcmc(X, y, LogisticFamily(), sample_weight=np.ones(len(y)), prior_prec=prior,
                      fit_intercept=True, sampler=sampler, n_draws=100_000, thin=1,
                      n_burnin=10, max_time=0.5, random_state=0)
    # a step of either sampler here takes milliseconds; the Laplace start counts too
    assert time.perf_counter() - started < 5
    assert not result.converged and result.posterior.n_samples > 0
    assert np.all(np.isfinite(result.posterior.samples))


def test_max_tree_depth_is_reported():
    X, y, prior = _logistic()
    with pytest.warns(MCMCDiagnosticWarning, match=r"reached the maximum tree depth 1 \(1 "
                      r"leapfrog steps\).*raise max_tree_depth"):
        est = BayesianLogisticRegression(method="mcmc", n_draws=100, n_burnin=20, n_chains=2,
                                         max_tree_depth=1, random_state=0).fit(X, y > 0)
    assert est.n_max_tree_depth_ == np.sum(est.sample_stats_["tree_depth"] >= 1) > 0
    assert np.all(est.sample_stats_["n_steps"] == 1)  # one leapfrog step per iteration
    assert est.n_gradients_ > 0


def test_no_step_size_at_the_start_is_a_clear_error():
    """A target flat everywhere (infinite): mici's step-size search fails; the fit says
    why instead of leaking mici's internal error."""

    class Flat:
        def value_and_grad(self, theta):
            return -np.inf, None, np.zeros_like(theta)

    with pytest.raises(ValueError, match="no usable step size.*a proper prior"):
        nuts(None, None, None, sample_weight=None, prior_prec=np.ones(2), fit_intercept=False,
             n_draws=10, n_chains=1, target=(Flat(), np.zeros(2), np.eye(2)),
             random_state=0)


@pytest.mark.parametrize("params,name", [({"max_gradients": 0}, "max_gradients"),
                                         ({"max_time": -1.0}, "max_time"),
                                         ({"max_tree_depth": 0}, "max_tree_depth")])
def test_estimator_validates_the_budget(params, name):
    X, y = _separable(n=30)
    with pytest.raises(ValueError, match=name):
        BayesianLogisticRegression(method="mcmc", **params).fit(X, y)
