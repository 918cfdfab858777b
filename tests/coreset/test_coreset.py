"""Coreset constructors: the shared contract, each method's defining property, and the
posterior quality on the papers' data sets against the reference implementation's numbers."""

import warnings

import numpy as np
import pytest
from scipy.special import expit
from sklearn.base import clone

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression,
                       FrankWolfeCoreset, GIGACoreset, QuasiNewtonCoreset, SensitivityCoreset,
                       SparseVICoreset, StreamingCoreset, UniformCoreset, WeightedSubset)
from skcoreset.families import LogisticFamily, NegativeBinomialFamily, PoissonFamily, make_family
from skcoreset._inference import laplace, prior_precision
from skcoreset.datasets import make_binary, make_logistic_regression
from skcoreset.metrics import coreset_quality

from ..conftest import LOGISTIC_SETS, POISSON_SETS, load_paper_dataset, logistic_data

CONSTRUCTORS = [
    UniformCoreset(M=30, random_state=0),
    SensitivityCoreset(M=30, random_state=0),
    GIGACoreset(M=30, projection_dim=100, random_state=0),
    FrankWolfeCoreset(M=30, projection_dim=100, random_state=0),
]
IDS = [type(c).__name__ for c in CONSTRUCTORS]


def _logistic_data(n=400, seed=0):
    return logistic_data(n, [1.5, -1.0, 0.5], 0.2, seed=seed)


def _full_weights(coreset, n):
    w = np.zeros(n)
    np.add.at(w, coreset.sample_indices_, coreset.sample_weight_)
    return w


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_contract_size_weights_determinism(coreset):
    X, y = _logistic_data()
    fitted = clone(coreset).fit(X, y)
    idx, w = fitted.sample_indices_, fitted.sample_weight_
    assert 0 < len(idx) <= coreset.M and len(np.unique(idx)) == len(idx)
    assert np.all(w > 0) and np.all(np.diff(idx) > 0)
    assert fitted.model_ == "logistic" and list(fitted.classes_) == [0, 1]
    again = clone(coreset).fit(X, y)
    np.testing.assert_array_equal(again.sample_indices_, idx)
    np.testing.assert_array_equal(again.sample_weight_, w)
    X_core, y_core, w_core = clone(coreset).fit_coreset(X, y)
    np.testing.assert_array_equal(X_core, X[idx])
    np.testing.assert_array_equal(y_core, y[idx])
    np.testing.assert_array_equal(w_core, w)


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_fit_transform_hands_on_the_weighted_subset_and_transform_every_row(coreset):
    X, y = _logistic_data()
    fitted = clone(coreset)
    subset = fitted.fit_transform(X, y)
    assert isinstance(subset, WeightedSubset)
    np.testing.assert_array_equal(np.asarray(subset), X[fitted.sample_indices_])
    np.testing.assert_array_equal(subset.sample_weight, fitted.sample_weight_)
    np.testing.assert_array_equal(subset.sample_indices, fitted.sample_indices_)
    assert subset[:2].sample_weight is None  # derived arrays are not the coreset
    np.testing.assert_array_equal(clone(coreset).fit(X, y).sample_weight_,
                                  fitted.sample_weight_)
    # after fit, prediction and scoring see every row: the training data included
    assert fitted.transform(X) is X
    X_new = X + 1.0
    assert fitted.transform(X_new) is X_new
    with pytest.raises(ValueError, match="features"):
        fitted.transform(X[:, :2])


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_incoming_sample_weight_means_repeated_rows(coreset):
    X, y = _logistic_data()
    w = np.ones(len(y))
    w[:100] = 0.0
    w[100:150] = 3.0
    fitted = clone(coreset).fit(X, y, sample_weight=w)
    assert np.all(fitted.sample_indices_ >= 100)  # zero-weight rows stand for nothing
    if isinstance(coreset, UniformCoreset):
        np.testing.assert_allclose(fitted.sample_weight_.sum(), w.sum())


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_dataframes_and_pandas_output(coreset):
    pd = pytest.importorskip("pandas")
    X, y = _logistic_data()
    frame = pd.DataFrame(X, columns=["a", "b", "c"], index=np.arange(len(y)) + 1000)
    fitted = clone(coreset)
    out = fitted.fit_transform(frame, pd.Series(y))
    assert list(fitted.feature_names_in_) == ["a", "b", "c"]
    X_core, y_core, w_core = clone(coreset).fit_coreset(frame, pd.Series(y, index=frame.index))
    assert isinstance(X_core, pd.DataFrame) and list(X_core.index) == list(y_core.index)
    assert isinstance(out, pd.DataFrame)
    np.testing.assert_array_equal(out.attrs["coreset_sample_weight"], fitted.sample_weight_)
    pandas_out = clone(coreset).set_output(transform="pandas")
    out = pandas_out.fit_transform(X, y)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["x0", "x1", "x2"]
    assert len(out) == len(pandas_out.sample_indices_)
    np.testing.assert_array_equal(out.attrs["coreset_sample_weight"], pandas_out.sample_weight_)
    # our estimators read the weights from the DataFrame too
    clf = BayesianLogisticRegression().fit(out, y)
    ref = BayesianLogisticRegression().fit(X[pandas_out.sample_indices_],
                                           y[pandas_out.sample_indices_],
                                           sample_weight=pandas_out.sample_weight_)
    np.testing.assert_allclose(clf.coef_, ref.coef_)


@pytest.mark.parametrize("coreset", CONSTRUCTORS, ids=IDS)
def test_bad_input_gets_clear_errors(coreset):
    X, y = _logistic_data(n=60)
    for params, match in [({"M": 0}, "M"), ({"M": 2.5}, "M"), ({"M": "ten"}, "M"),
                          ({"prior_scale": -1.0}, "prior_scale"), ({"model": "cauchit"}, "model")]:
        with pytest.raises(ValueError, match=match):
            clone(coreset).set_params(**params).fit(X, y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        clone(coreset).fit(bad, y)
    with pytest.raises(ValueError, match="two classes"):
        clone(coreset).set_params(model="logistic").fit(X, np.arange(60) % 3)
    with pytest.raises(ValueError, match="cannot infer"):
        clone(coreset).fit(X, np.array(["a", "b", "c"] * 20))
    with pytest.raises(ValueError, match="negative"):
        clone(coreset).fit(X, y, sample_weight=-np.ones(60))


def test_model_auto_resolution():
    X, _ = _logistic_data(n=200)
    rng = np.random.default_rng(0)
    counts = rng.poisson(np.exp(0.3 * X[:, 0] + 1.0))
    assert UniformCoreset(M=10).fit(X, counts).model_ == "poisson"
    assert UniformCoreset(M=10).fit(X, X[:, 0] + 0.1 * rng.normal(size=200)).model_ == "gaussian"
    assert UniformCoreset(M=10).fit(X, X[:, 0] > 0).model_ == "logistic"
    with pytest.raises(ValueError, match="logistic model"):
        SensitivityCoreset(M=10).fit(X, counts)


def test_uniform_weights_sum_to_the_data_weight():
    X, y = _logistic_data()
    coreset = UniformCoreset(M=40, stratify=False, random_state=1).fit(X, y)
    np.testing.assert_allclose(coreset.sample_weight_, len(y) / 40)
    assert UniformCoreset(M=10_000).fit(X, y).sample_indices_.size == len(y)


def test_sensitivity_coreset_loglik_is_unbiased():
    X, y = make_binary(4000, n_features=5, random_state=0)
    theta = np.array([-2.0, 0.5, -0.5, 1.0, 0.0])
    y_pm = np.where(y == 1, 1.0, -1.0)
    loglik = LogisticFamily().loglik(y_pm, X @ theta)
    estimates = []
    for seed in range(100):
        cs = SensitivityCoreset(M=200, fit_intercept=False, random_state=seed).fit(X, y)
        estimates.append(cs.sample_weight_ @ loglik[cs.sample_indices_])
    estimates = np.array(estimates)
    standard_error = estimates.std(ddof=1) / np.sqrt(len(estimates))
    assert abs(estimates.mean() - loglik.sum()) < 4 * standard_error
    assert standard_error < 0.05 * abs(loglik.sum())  # the check has power


def test_mean_sensitivity_is_flat_in_n():
    # Huggins, Campbell & Broderick 2016, Fig. 1: the mean sensitivity bound does not grow with N
    means = []
    for n in (10_000, 100_000):
        X, y = make_binary(n, n_features=10, random_state=1)
        cs = SensitivityCoreset(M=10, n_clusters=4, radius=3.0, fit_intercept=False,
                                random_state=0).fit(X, y)
        means.append(cs.sensitivities_.mean())
    assert 0.7 < means[1] / means[0] < 1.3


def test_hilbert_history_and_error_fall_with_m():
    X, y = _logistic_data(n=1000)
    for cls in (GIGACoreset, FrankWolfeCoreset):
        errors = [cls(M=m, projection_dim=200, random_state=0).fit(X, y).error_
                  for m in (5, 20, 80)]
        assert errors[0] > errors[1] > errors[2]
        fitted = cls(M=20, projection_dim=200, random_state=0).fit(X, y)
        assert fitted.history_.shape[1] == 2 and fitted.history_[-1, 0] == len(
            fitted.sample_indices_)
        np.testing.assert_allclose(fitted.history_[-1, 1], fitted.error_, rtol=1e-6)


@pytest.mark.parametrize("weighting", ["laplace", "laplace-subsample", "prior"])
def test_hilbert_weightings_and_models(weighting):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 2))
    targets = {
        "logistic": (rng.random(600) < expit(X @ [1.0, -1.0])).astype(int),
        "poisson": rng.poisson(np.log1p(np.exp(X @ [0.7, 0.3] + 1.0))),
        "gaussian": X @ [1.0, 2.0] + rng.normal(size=600),
    }
    for model, y in targets.items():
        cs = GIGACoreset(M=40, projection_dim=100, weighting=weighting, model=model,
                         link="softplus", random_state=0).fit(X, y)
        assert cs.model_ == model and len(cs.sample_indices_) <= 40
        assert cs.error_ < min(1.0, cs.history_[0, 1])  # GIGA improves on its first point


# ---------------------------------------------------------------------------------------
# Posterior quality on the papers' N = 500 data sets (prior N(0, I) including the intercept,
# softplus Poisson link). Reference: the public implementation of Campbell & Broderick 2018,
# median of 3 seeds of KL(coreset Laplace || full Laplace) / KL(prior || full Laplace) at
# M = 100. The ratio is pinned to compare with it; messages give the KL in nats and the mean
# error in sd.
REFERENCE_M100 = {
    "uniform": dict(synth_lr=0.12, phishing=0.15, ds1=0.19, synth_poiss=0.016,
                    biketrips=0.038, airportdelays=0.054),
    "giga": dict(synth_lr=2.9e-3, phishing=5.0e-3, ds1=3.0e-3, synth_poiss=2.5e-4,
                 biketrips=2.0e-5, airportdelays=1.9e-4),
}
PAPER_KWARGS = dict(prior_scale=1.0, intercept_prior_scale=1.0)


def _paper_estimator(model):
    if model == "logistic":
        return BayesianLogisticRegression(**PAPER_KWARGS)
    return BayesianPoissonRegression(link="softplus", **PAPER_KWARGS)


def _coreset_posterior(X, y, model, weights):
    """Laplace posterior of the weighted data (rows with weight 0 drop out)."""
    family = make_family(model, link="softplus")
    y_enc = np.where(y == 1, 1.0, -1.0) if model == "logistic" else y.astype(float)
    prior = prior_precision(X.shape[1], prior_scale=1.0, intercept_prior_scale=1.0,
                            fit_intercept=True)
    return laplace(X, y_enc, family, sample_weight=weights, prior_prec=prior,
                   fit_intercept=True).posterior


def _median_quality(make, X, y, model, full):
    """Medians over 3 seeds of KL(coreset || full) / KL(prior || full), of the KL in nats and
    of the largest mean error in full-posterior sd."""
    values = []
    for seed in range(3):
        coreset = make(seed).set_params(model=make_family(model, link="softplus"),
                                        **PAPER_KWARGS).fit(X, y)
        quality = coreset_quality(coreset, X, y, full_posterior=full)
        values.append((quality.relative_kl, quality.kl, quality.max_mean_error_sd))
    return np.median(values, axis=0)


def _describe(key, quality, sizes=(10, 50, 100)):
    """``key: M=10: 0.12 (35 nats, 4.1 sd), ...`` for assertion messages."""
    return f"{key}: " + ", ".join(f"M={m}: {r:.3g} ({kl:.3g} nats, {sd:.2g} sd)"
                                  for m, (r, kl, sd) in zip(sizes, quality))


@pytest.mark.parametrize("name", LOGISTIC_SETS + POISSON_SETS)
def test_paper_data_kl_falls_with_m_and_matches_reference(name):
    X, y, model = load_paper_dataset(name)
    full = _coreset_posterior(X, y, model, np.ones(len(y)))
    # the estimators configured alike agree with the posterior used here
    np.testing.assert_allclose(_paper_estimator(model).fit(X, y).posterior_.mean, full.mean,
                               rtol=1e-6)
    makers = {
        "uniform": lambda M: lambda s: UniformCoreset(M, random_state=s),
        "giga": lambda M: lambda s: GIGACoreset(M, random_state=s),
        "frank-wolfe": lambda M: lambda s: FrankWolfeCoreset(M, random_state=s),
        "giga-subsample": lambda M: lambda s: GIGACoreset(M, weighting="laplace-subsample",
                                                          random_state=s),
    }
    if model == "logistic":
        makers["sensitivity"] = lambda M: lambda s: SensitivityCoreset(M, random_state=s)
    quality = {key: [_median_quality(make(M), X, y, model, full) for M in (10, 50, 100)]
               for key, make in makers.items()}
    kl = {key: [q[0] for q in values] for key, values in quality.items()}
    for key, values in kl.items():
        if key != "giga-subsample":  # its weighting may be far off; it need not improve
            assert values[0] > values[2], _describe(key, quality[key])
    # the default GIGA beats uniform at M = 50 and 100
    assert kl["giga"][1] < kl["uniform"][1] and kl["giga"][2] < kl["uniform"][2], (
        _describe("giga", quality["giga"]) + "; " + _describe("uniform", quality["uniform"]))
    # GIGA with the full-data Laplace weighting matches the reference implementation
    assert kl["giga"][2] <= 1.5 * REFERENCE_M100["giga"][name], _describe("giga",
                                                                          quality["giga"])
    # uniform subsampling is implementation-independent: same order as the reference
    assert kl["uniform"][2] <= 3 * REFERENCE_M100["uniform"][name], _describe(
        "uniform", quality["uniform"])


# ---------------------------------------------------------------------------------------
# Quality in nats at N = 1e5, where the ratio to KL(prior || full) (about 1e6 nats here)
# makes any coreset look good: the bounds are on KL(coreset || full) in nats.
@pytest.fixture(scope="module")
def large_logistic():
    X, y = make_logistic_regression(100_000, n_features=10, random_state=0)
    return X, y, coreset_quality(UniformCoreset(M=len(y)).fit(X, y), X, y).full_posterior


def test_uniform_coreset_nats_at_large_n(large_logistic):
    """Uniform subsampling with weights N/M moves the posterior mean by about sqrt(N / M)
    full-posterior sd per coordinate, so KL(coreset || full) is about p N / (2 M) nats
    (p = 11 parameters): 550 nats at M = 1000, though its ratio to KL(prior || full) is below
    1e-3."""
    X, y, full = large_logistic
    n, p, M = len(y), X.shape[1] + 1, 1000
    expected = p * n / (2 * M)
    for seed in range(2):
        quality = coreset_quality(UniformCoreset(M=M, random_state=seed).fit(X, y), X, y,
                                  full_posterior=full)
        message = (f"seed {seed}: {quality.kl:.4g} nats, {quality.max_mean_error_sd:.3g} sd, "
                   f"relative {quality.relative_kl:.3g}; expected about {expected:.0f} nats")
        assert 0.2 * expected < quality.kl < 3 * expected, message
        assert quality.max_mean_error_sd < 5 * np.sqrt(n / M), message
        assert quality.relative_kl < 1e-2, message  # what the ratio would have let through


def test_giga_coreset_nats_at_large_n(large_logistic):
    """GIGA (full-data Laplace weighting) with under a hundred points stays within 200 nats
    and 6 sd of the full posterior (measured: 44 nats, 2.9 sd with 79 points), where uniform
    subsampling with 1000 points is 700-800 nats and 20-25 sd off."""
    X, y, full = large_logistic
    coreset = GIGACoreset(M=100, projection_dim=50, random_state=0).fit(X, y)
    quality = coreset_quality(coreset, X, y, full_posterior=full)
    message = (f"{quality.size} points: {quality.kl:.4g} nats, "
               f"{quality.max_mean_error_sd:.3g} sd, relative {quality.relative_kl:.3g}")
    assert quality.size <= 100
    assert quality.kl < 200, message
    assert quality.max_mean_error_sd < 6, message


# --- any family: by name or as an instance --------------------------------------------------

NB_CONSTRUCTORS = [
    UniformCoreset(M=40, random_state=0),
    GIGACoreset(M=40, projection_dim=100, random_state=0),
    FrankWolfeCoreset(M=40, projection_dim=100, random_state=0),
    SparseVICoreset(M=20, n_draws=20, n_iter_opt=5, random_state=0),
    QuasiNewtonCoreset(M=40, n_draws=20, max_iter=5, random_state=0),
]


@pytest.mark.parametrize("model", ["negative_binomial", NegativeBinomialFamily(alpha=0.5)],
                         ids=["name", "instance"])
@pytest.mark.parametrize("make", NB_CONSTRUCTORS + [None],
                         ids=[type(c).__name__ for c in NB_CONSTRUCTORS] + ["Streaming"])
def test_every_constructor_builds_negative_binomial_coresets(make, model):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    mu = np.exp(X @ [0.5, -0.3] + 1.5)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))  # alpha = 0.5
    if make is None:
        coreset = StreamingCoreset(GIGACoreset(M=40, projection_dim=100, model=model),
                                   block_size=200, random_state=0)
    else:
        coreset = clone(make).set_params(model=model)
    coreset.fit(X, y)
    assert coreset.model_ == "negative_binomial"
    assert 0.3 < coreset.family_.alpha < 0.8  # estimated for the name, as given otherwise
    assert 0 < len(coreset.sample_indices_) <= 40
    quality = coreset_quality(coreset, X, y)  # under the coreset's own family
    assert np.isfinite(quality.kl) and quality.kl >= 0


def test_sensitivity_coreset_names_its_only_model():
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match="only the logistic model"):
        SensitivityCoreset(M=10, model="negative_binomial").fit(X, np.arange(50) % 7)


def test_sampling_constructors_take_no_family_parameters():
    # link and noise_scale would change nothing: uniform and sensitivity sampling do not
    # evaluate the likelihood; a Family instance sets it for coreset_quality
    for coreset in (UniformCoreset(), SensitivityCoreset()):
        assert not {"link", "noise_scale"} & set(coreset.get_params())
    X = np.random.default_rng(0).normal(size=(300, 2))
    y = np.random.default_rng(1).poisson(2.0, size=300)
    coreset = clone(UniformCoreset(M=20, model=PoissonFamily("softplus"))).fit(X, y)
    assert coreset.family_.link_name == "softplus" and coreset.model_ == "poisson"


def test_dask_negative_binomial_estimates_alpha_on_the_first_chunk():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    mu = np.exp(X @ [0.5, -0.3] + 1.5)
    y = rng.negative_binomial(2.0, 2.0 / (2.0 + mu))  # alpha = 0.5
    coreset = GIGACoreset(M=30, projection_dim=50, model="negative_binomial", random_state=0)
    coreset.fit(da.from_array(X, chunks=(1000, 2)), da.from_array(y, chunks=1000))
    assert 0.3 < coreset.family_.alpha < 0.8 and len(coreset.sample_indices_) <= 30
    with pytest.raises(ValueError, match="Negative binomial targets are non-negative"):
        coreset.fit(da.from_array(X, chunks=(1000, 2)), da.from_array(-y, chunks=1000))


def test_poisson_coresets_of_rates_weighted_by_exposure():
    """model="poisson" accepts non-negative real targets (rates y / e with weights e);
    model="auto" still reads them as gaussian, with a warning naming model="poisson"."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 2))
    e = rng.uniform(0.2, 5.0, 2000)
    y = rng.poisson(e * np.exp(X @ [0.4, -0.3] + 0.5))
    uniform = UniformCoreset(M=40, model="poisson", random_state=0).fit(
        X, y / e, sample_weight=e)
    assert uniform.model_ == "poisson"
    np.testing.assert_allclose(uniform.sample_weight_.sum(), e.sum())
    giga = GIGACoreset(M=40, model="poisson", projection_dim=200, random_state=0)
    X_core, y_core, w_core = giga.fit_coreset(X, y / e, sample_weight=e)
    assert np.any(y_core != np.round(y_core))
    full = BayesianPoissonRegression().fit(X, y, exposure=e)
    core = BayesianPoissonRegression().fit(X_core, y_core, sample_weight=w_core)
    sd = np.sqrt(np.diag(full.posterior_.cov))
    assert np.all(np.abs(core.posterior_.mean - full.posterior_.mean) < 2 * sd)
    with pytest.warns(UserWarning, match="gaussian.*set model='poisson'"):
        assert UniformCoreset(M=40).fit(X, y / e).model_ == "gaussian"
    with pytest.raises(ValueError, match="Poisson targets are non-negative"):
        UniformCoreset(M=40, model="poisson").fit(X, -y / e)


@pytest.mark.parametrize("coreset", [
    UniformCoreset(M=1000), SensitivityCoreset(M=1000), GIGACoreset(M=1000),
    FrankWolfeCoreset(M=1000), SparseVICoreset(M=1000, n_iter_opt=2, n_draws=20),
    QuasiNewtonCoreset(M=1000, max_iter=2, n_draws=20),
    StreamingCoreset(UniformCoreset(M=1000), block_size=100)],
    ids=lambda coreset: type(coreset).__name__)
def test_a_budget_of_all_rows_warns_with_the_numbers(coreset):
    X, y = logistic_data(300, [1.0, -1.0], seed=3)
    with pytest.warns(UserWarning, match="M=1000 is at least the 300 rows"):
        coreset.set_params(random_state=0).fit(X, y)


def test_a_budget_below_the_rows_does_not_warn_of_them():
    X, y = logistic_data(300, [1.0, -1.0], seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        UniformCoreset(M=299, random_state=0).fit(X, y)
