"""QuasiNewtonCoreset sized by the distance between exact posteriors (distance="exact")."""

import warnings

import numpy as np
import pytest

from skcoreset import BayesianLogisticRegression, QuasiNewtonCoreset
from skcoreset._backend import InMemoryRows
from skcoreset._inference import prior_precision
from skcoreset.coreset._exact_distance import ExactDistance, ExactReading
from skcoreset.datasets import make_logistic_regression, make_rare_events
from skcoreset.exceptions import ImportanceSamplingWarning
from skcoreset.families import make_family
from skcoreset.metrics import exact_kl
from skcoreset.pipeline import Pipeline

from ..conftest import conjugate_linear_regression, gaussian_kl_closed_form


@pytest.fixture(scope="module")
def rare():
    return make_rare_events(20_000, 5, positive_rate=0.01, random_state=0)


@pytest.fixture(scope="module")
def rarer():
    # 20 features, 100 positives: the Laplace-level rule stops at 500 rows, 0.07 nats from
    # the exact posterior
    return make_rare_events(20_000, 20, positive_rate=0.005, random_state=0)


def test_estimate_matches_closed_form_of_gaussian_posteriors():
    # a linear model with known noise: both exact posteriors are Gaussian, their KL known
    rng = np.random.RandomState(0)
    X = rng.standard_normal((5000, 4))
    y = X @ [1.0, -0.5, 0.3, 0.0] + 0.5 + rng.standard_normal(5000)
    family = make_family("gaussian")
    prior = prior_precision(4, prior_scale=1.0, intercept_prior_scale=10.0,
                            fit_intercept=True)
    mean, cov = conjugate_linear_regression(X, y, np.ones(len(y)), 1.0, prior)[:2]
    distance = ExactDistance(InMemoryRows(X, y, np.ones(len(y))), family, mean,
                             np.linalg.inv(cov), prior, True, np.random.RandomState(1))
    for spread in (0.15, 0.3):  # every row, with weights off by about this fraction
        w = np.exp(spread * rng.standard_normal(len(y)))
        expected = gaussian_kl_closed_form(
            *conjugate_linear_regression(X, y, w, 1.0, prior)[:2], mean, cov)
        reading = distance(X, y, w)
        assert 0.02 < expected < 1.0
        assert reading.kl == pytest.approx(expected, rel=0.15)
        assert reading.pareto_k < 0.7
    # the Laplace approximation of a Gaussian posterior is the posterior
    assert distance.laplace().kl < 1e-8


def test_grows_until_the_exact_estimate_meets_the_target(rarer):
    X, y = rarer
    laplace_only = QuasiNewtonCoreset(random_state=0).fit(X, y)
    assert laplace_only.distance_ == "laplace" and laplace_only.exact_kl_estimate_ is None
    assert laplace_only.exact_kl_path_.shape == (0, 3)
    target = 0.01
    exact = QuasiNewtonCoreset(distance="exact", random_state=0).fit(X, y)
    assert exact.target_exact_kl == target
    path = exact.exact_kl_path_
    # measured from where the Laplace-level rule stopped, grown until below the target
    assert path[0, 0] == laplace_only.kl_path_[-1, 0]
    assert len(path) >= 2 and np.all(np.diff(path[:, 0]) > 0)
    assert np.all(path[:-1, 1] > target) and path[-1, 1] <= target
    assert exact.laplace_exact_kl_ > target  # so the target is target_exact_kl itself
    assert exact.exact_kl_estimate_ == pytest.approx(path[-1, 1])
    assert len(exact.sample_indices_) > len(laplace_only.sample_indices_)
    # the Laplace-level sizes are the same up to where the exact rule takes over
    np.testing.assert_array_equal(exact.kl_path_[:len(laplace_only.kl_path_)],
                                  laplace_only.kl_path_)
    assert exact.laplace_exact_kl_ > 0


def test_pipeline_sizes_by_the_exact_distance_only_when_the_final_step_samples(rare):
    X, y = rare
    coreset = QuasiNewtonCoreset(random_state=0)
    gaussian = Pipeline([("coreset", coreset), ("clf", BayesianLogisticRegression())])
    gaussian.fit(X, y)
    standalone = QuasiNewtonCoreset(random_state=0).fit(X, y)
    assert gaussian[0].distance_ == "laplace" and gaussian[0].exact_kl_estimate_ is None
    np.testing.assert_array_equal(gaussian[0].sample_indices_, standalone.sample_indices_)
    np.testing.assert_array_equal(gaussian[0].sample_weight_, standalone.sample_weight_)
    # what Pipeline.fit hands on for a sampling final step (without running the sampler)
    sampled = QuasiNewtonCoreset(random_state=0)
    sampled.fit_coreset(X, y, estimator=BayesianLogisticRegression(method="mcmc"))
    assert sampled.distance_ == "exact"
    assert sampled.exact_kl_estimate_ <= sampled.target_exact_kl
    # distance="laplace" keeps the old rule whatever follows
    kept = QuasiNewtonCoreset(distance="laplace", random_state=0)
    kept.fit_coreset(X, y, estimator=BayesianLogisticRegression(method="mcmc"))
    assert kept.distance_ == "laplace"
    np.testing.assert_array_equal(kept.sample_indices_, standalone.sample_indices_)
    # an integer M is not grown: distance="auto" stays Laplace-level
    fixed = QuasiNewtonCoreset(M=300, random_state=0)
    fixed.fit_coreset(X, y, estimator=BayesianLogisticRegression(method="mcmc"))
    assert fixed.distance_ == "laplace"


def test_estimate_matches_exact_kl_of_nuts_draws_of_the_coreset_posterior(rare):
    # the independent reference: NUTS draws of the coreset posterior, weighted to the exact
    # posterior of all rows (a coreset 0.07 nats off, 14 rows)
    X, y = rare
    pipe = Pipeline([
        ("coreset", QuasiNewtonCoreset(M=50, distance="exact", random_state=0)),
        ("clf", BayesianLogisticRegression(method="mcmc", n_draws=1000, random_state=0))],
        exact_correction=False)  # exact_kl measures the coreset posterior's own draws
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a small coreset is far: by design
        pipe.fit(X, y)
    estimate = pipe[0].exact_kl_estimate_
    reference = exact_kl(pipe, X, y, n_draws=1000)
    assert reference.kl > 0.03  # a coreset far enough off for the comparison to mean much
    assert reference.reliable and pipe[0].exact_pareto_k_ < 0.7
    assert estimate == pytest.approx(reference.kl, rel=0.2)


def test_warns_when_the_weights_cannot_be_trusted(rare):
    X, y = rare
    with pytest.warns(ImportanceSamplingWarning, match="k-hat"):
        coreset = QuasiNewtonCoreset(M=12, distance="exact", random_state=0).fit(X, y)
    assert coreset.exact_pareto_k_ > 0.7


def test_whole_data_is_exact():
    X, y = make_logistic_regression(300, coef=[1.0, -1.0], random_state=0)
    coreset = QuasiNewtonCoreset(M=1000, distance="exact", random_state=0).fit(X, y)
    assert coreset.stop_reason_ == "whole data" and coreset.exact_kl_estimate_ == 0.0


def test_bad_distance_is_rejected():
    X, y = make_logistic_regression(300, coef=[1.0, -1.0], random_state=0)
    with pytest.raises(ValueError, match="distance"):
        QuasiNewtonCoreset(distance="nats").fit(X, y)
    with pytest.raises(ValueError, match="target_exact_kl"):
        QuasiNewtonCoreset(target_exact_kl=0.0).fit(X, y)


def test_rows_on_a_cluster_give_the_same_reading(rarer):
    da = pytest.importorskip("dask.array")
    X, y = rarer
    in_memory = QuasiNewtonCoreset(M=600, distance="exact", random_state=0).fit(X, y)
    chunked = QuasiNewtonCoreset(M=600, distance="exact", random_state=0).fit(
        da.from_array(X, chunks=5000), da.from_array(y, chunks=5000))
    np.testing.assert_array_equal(chunked.sample_indices_, in_memory.sample_indices_)
    # the pass is summed in float32 chunks, in another order on a cluster
    assert chunked.exact_kl_estimate_ == pytest.approx(in_memory.exact_kl_estimate_,
                                                       rel=1e-5)


def test_no_further_than_the_laplace_approximation_of_all_rows():
    # the stop: target_exact_kl, or the Laplace approximation's own distance when smaller,
    # down to a tenth of the target
    class Reading:
        def __init__(self, kl):
            self.kl = kl

        def laplace(self):
            return ExactReading(self.kl, 0.0)

    coreset = QuasiNewtonCoreset(target_exact_kl=0.01)
    assert coreset._exact_target(Reading(0.5)) == 0.01
    assert coreset._exact_target(Reading(0.004)) == 0.004
    assert coreset._exact_target(Reading(1e-6)) == pytest.approx(0.001)
