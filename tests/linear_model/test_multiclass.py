"""BayesianOneVsRestClassifier: one-vs-rest with posterior uncertainty."""

import numpy as np
import pytest
from scipy.special import expit
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import scale
from sklearn.utils.estimator_checks import parametrize_with_checks

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression, UniformCoreset
from skcoreset.multiclass import BayesianOneVsRestClassifier
from skcoreset.pipeline import make_pipeline


@parametrize_with_checks([
    BayesianOneVsRestClassifier(n_draws=200, random_state=0),
    BayesianOneVsRestClassifier(BayesianLogisticRegression(method="kl_proximal"), n_draws=200),
    BayesianOneVsRestClassifier(BayesianLogisticRegression(
        method="mcmc", n_draws=20, n_burnin=20, n_chains=2, random_state=0), n_draws=200),
])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _three_classes(n=600, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 2.0], [-1.7, -1.0], [1.7, -1.0]])
    y = rng.integers(0, 3, n)
    return centres[y] + rng.normal(size=(n, 2)), np.array(["a", "b", "c"])[y]


def _normalised_draws(clf, X, n_draws, seed):
    """Per-draw normalised one-vs-rest probabilities, written out independently."""
    rng = np.random.default_rng(seed)
    p = []
    for est in clf.estimators_:
        theta = est.posterior_.sample(n_draws, random_state=rng)
        p.append(expit(X @ theta[:, :-1].T + theta[:, -1]))  # (n, n_draws)
    p = np.stack(p, axis=-1)
    return p / p.sum(axis=-1, keepdims=True)


def test_proba_and_std_are_the_moments_of_the_normalised_draws():
    X, y = _three_classes(n=60)  # few rows: wide posteriors, large sd
    clf = BayesianOneVsRestClassifier(n_draws=20_000, random_state=0).fit(X, y)
    X_new = np.array([[0.0, 0.0], [0.0, 3.0], [4.0, -4.0], [-1.0, -1.0]])
    proba, std = clf.predict_proba(X_new, return_std=True)
    assert proba.shape == std.shape == (4, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(proba, clf.predict_proba(X_new))
    # an independent computation with 200,000 other draws: agreement within Monte Carlo error
    q = _normalised_draws(clf, X_new, 200_000, seed=1)
    ref_mean, ref_std = q.mean(axis=1), q.std(axis=1)
    assert np.all(np.abs(proba - ref_mean) < 5 * ref_std / np.sqrt(20_000) + 1e-12)
    np.testing.assert_allclose(std, ref_std, rtol=0.05, atol=2e-3)
    assert std.max() > 0.05  # the uncertainty is really there
    # labels and the classes' binary models
    np.testing.assert_array_equal(clf.classes_, ["a", "b", "c"])
    assert len(clf.estimators_) == 3
    np.testing.assert_array_equal(clf.predict(X_new), clf.classes_[proba.argmax(axis=1)])
    # draws are fixed at fit: a subset of rows gets the same values
    np.testing.assert_array_equal(clf.predict_proba(X_new[2:]), proba[2:])


def test_sd_shrinks_with_data_and_proba_meets_sklearn_one_vs_rest():
    X, y = _three_classes(n=20_000)
    X_new = np.array([[0.0, 0.0], [0.5, 1.0], [-1.0, -1.0]])
    clf = BayesianOneVsRestClassifier(n_draws=2000, random_state=0).fit(X, y)
    proba, std = clf.predict_proba(X_new, return_std=True)
    small = BayesianOneVsRestClassifier(n_draws=2000, random_state=0).fit(X[:100], y[:100])
    assert np.all(std < small.predict_proba(X_new, return_std=True)[1])
    # with a concentrated posterior the normalised mean is sklearn's normalised probability
    ovr = OneVsRestClassifier(BayesianLogisticRegression()).fit(X, y)
    np.testing.assert_allclose(proba, ovr.predict_proba(X_new), atol=5e-3)
    assert std.max() < 0.02


def test_two_classes_are_the_binary_model_exactly():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] + rng.normal(size=200) > 0, "pos", "neg")
    clf = BayesianOneVsRestClassifier().fit(X, y)
    binary = BayesianLogisticRegression().fit(X, y)
    proba, std = clf.predict_proba(X[:5], return_std=True)
    ref_proba, ref_std = binary.predict_proba(X[:5], return_std=True)
    np.testing.assert_allclose(proba, ref_proba)
    np.testing.assert_allclose(std, np.column_stack([ref_std, ref_std]))
    assert len(clf.estimators_) == 1


def test_sample_weight_reaches_every_binary_fit():
    X, y = _three_classes(n=90)
    weights = np.r_[np.full(45, 2), np.ones(45)].astype(int)
    weighted = BayesianOneVsRestClassifier(random_state=0).fit(X, y, sample_weight=weights)
    repeated = BayesianOneVsRestClassifier(random_state=0).fit(np.repeat(X, weights, axis=0),
                                                               np.repeat(y, weights))
    for a, b in zip(weighted.estimators_, repeated.estimators_):
        np.testing.assert_allclose(a.posterior_.mean, b.posterior_.mean, atol=1e-8)
    np.testing.assert_allclose(weighted.predict_proba(X[:5], return_std=True),
                               repeated.predict_proba(X[:5], return_std=True), atol=1e-7)
    unweighted = BayesianOneVsRestClassifier(random_state=0).fit(X, y)
    assert np.abs(unweighted.predict_proba(X[:5]) - weighted.predict_proba(X[:5])).max() > 1e-3


def test_every_method_of_the_binary_model_and_coreset_weights():
    X, y = load_iris(return_X_y=True)
    X = scale(X)
    for method in ("laplace", "kl_proximal", "pass_glm"):
        clf = BayesianOneVsRestClassifier(BayesianLogisticRegression(method=method),
                                          random_state=0).fit(X, y)
        assert clf.score(X, y) > 0.85
        assert all(est.method == method for est in clf.estimators_)
    # a coreset's weighted rows, directly or through skcoreset's Pipeline
    coreset = UniformCoreset(M=60, model="poisson", random_state=0)
    pipe = make_pipeline(coreset, BayesianOneVsRestClassifier(random_state=0)).fit(X, y)
    rows = pipe[0].sample_indices_
    direct = BayesianOneVsRestClassifier(random_state=0).fit(
        X[rows], y[rows], sample_weight=pipe[0].sample_weight_)
    np.testing.assert_allclose(pipe.predict_proba(X), direct.predict_proba(X))


@pytest.mark.parametrize("estimator,y,error,match", [
    (None, np.zeros(30), ValueError, "only one class"),
    (None, np.linspace(0, 1, 30), ValueError, "Unknown label type"),
    (LogisticRegression(), np.arange(30) % 3, TypeError, "needs a BayesianLogisticRegression"),
    (BayesianPoissonRegression(), np.arange(30) % 3, ValueError, "must be an object"),
])
def test_errors(estimator, y, error, match):
    X = np.random.default_rng(0).normal(size=(30, 2))
    with pytest.raises(error, match=match):
        BayesianOneVsRestClassifier(estimator).fit(X, y)


def test_logistic_regression_points_multiclass_users_to_the_wrapper():
    X, y = _three_classes(n=60)
    with pytest.raises(ValueError, match="skcoreset.multiclass.BayesianOneVsRestClassifier"):
        BayesianLogisticRegression().fit(X, y)


def test_exported_at_top_level():
    import skcoreset

    assert skcoreset.BayesianOneVsRestClassifier is BayesianOneVsRestClassifier
    assert "BayesianOneVsRestClassifier" in skcoreset.__all__


def test_summary_is_each_class_models_table():
    pytest.importorskip("pandas")
    X, y = _three_classes()
    clf = BayesianOneVsRestClassifier().fit(X, y)
    summary = clf.summary(level=0.9)
    assert summary.header["Classes"] == "3" and "class" in str(summary)
    table = summary.to_frame()
    assert list(table.index.get_level_values("class").unique()) == list(clf.classes_)
    for label, est in zip(clf.classes_, clf.estimators_):
        np.testing.assert_array_equal(table.loc[label, "mean"].values, est.posterior_.mean)
        np.testing.assert_array_equal(table.loc[label, "lower"].values,
                                      est.credible_interval(0.9)[0])


def test_sample_y_frequencies_are_predict_proba():
    """Labels drawn per posterior draw from the normalised probabilities: their frequencies
    estimate predict_proba's mean, up to the Monte Carlo error of both."""
    X, y = _three_classes()
    clf = BayesianOneVsRestClassifier(n_draws=4000, random_state=0).fit(X, y)
    draws = clf.sample_y(X[:5], n_draws=20_000, random_state=1)
    assert draws.shape == (20_000, 5) and set(np.unique(draws)) <= set(clf.classes_)
    frequency = np.stack([(draws == label).mean(axis=0) for label in clf.classes_], axis=1)
    np.testing.assert_allclose(frequency, clf.predict_proba(X[:5]), atol=0.02)
    two = BayesianOneVsRestClassifier().fit(X, np.where(y == y[0], "a", "b"))
    assert set(np.unique(two.sample_y(X[:5], n_draws=50, random_state=0))) <= {"a", "b"}
    with pytest.raises(ValueError, match="n_draws must be a positive integer"):
        clf.sample_y(X, n_draws=0)


def test_to_arviz_per_class_has_each_models_log_likelihood():
    pytest.importorskip("arviz")
    X, y = _three_classes(n=300)
    clf = BayesianOneVsRestClassifier().fit(X, y)
    data = clf.to_arviz(X[:40], y[:40], n_draws=50, random_state=0)
    assert list(data) == list(clf.classes_)
    for label, est in zip(clf.classes_, clf.estimators_):
        np.testing.assert_array_equal(data[label].observed_data["y"].values,
                                      (y[:40] == label).astype(int))
        assert data[label].log_likelihood["y"].shape == (4, 50, 40)
    assert set(clf.to_arviz(n_draws=20)) == set(clf.classes_)  # the training rows


def _offset_classes(n=400, seed=0):
    """Three classes whose log-odds move with a known per-row term."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    offset = rng.uniform(-1.5, 1.5, n)
    logits = np.column_stack([X[:, 0], X[:, 1], -X[:, 0]]) + np.outer(offset, [1.0, -1.0, 0.0])
    y = (logits + rng.gumbel(size=logits.shape)).argmax(axis=1)
    return X, np.array(["a", "b", "c"])[y], offset


def test_offset_reaches_every_binary_fit_and_prediction():
    from skcoreset import BayesianBinaryRegression

    X, y, offset = _offset_classes()
    base = BayesianBinaryRegression(link="cloglog")
    clf = BayesianOneVsRestClassifier(base, n_draws=20_000, random_state=0).fit(
        X, y, offset=offset)
    # the binary problems fitted by hand, with the offset
    by_hand = [BayesianBinaryRegression(link="cloglog").fit(X, (y == label).astype(int),
                                                            offset=offset)
               for label in clf.classes_]
    without = BayesianBinaryRegression(link="cloglog").fit(X, (y == "a").astype(int))
    for est, ref in zip(clf.estimators_, by_hand):
        np.testing.assert_allclose(est.posterior_.mean, ref.posterior_.mean, rtol=1e-10)
    assert np.abs(clf.estimators_[0].coef_ - without.coef_).max() > 0.05  # it mattered
    # predictions: the per-draw normalised probabilities with the offset, written out
    X_new, off_new = X[:5], np.array([-2.0, -1.0, 0.0, 1.0, 2.0])
    proba, std = clf.predict_proba(X_new, return_std=True, offset=off_new)
    rng = np.random.default_rng(1)
    p = np.stack([-np.expm1(-np.exp(X_new @ t[:, :-1].T + t[:, -1] + off_new[:, None]))
                  for t in (ref.posterior_.sample(200_000, random_state=rng) for ref in by_hand)],
                 axis=-1)
    q = p / p.sum(axis=-1, keepdims=True)
    assert np.all(np.abs(proba - q.mean(axis=1)) < 5 * q.std(axis=1) / np.sqrt(20_000) + 1e-12)
    assert np.abs(proba - clf.predict_proba(X_new)).max() > 0.05
    np.testing.assert_array_equal(clf.predict(X_new, offset=off_new),
                                  clf.classes_[proba.argmax(axis=1)])
    assert clf.score(X_new, clf.predict(X_new, offset=off_new), offset=off_new) == 1.0
    labels = clf.sample_y(X_new, n_draws=4000, random_state=0, offset=off_new)
    freq = np.stack([(labels == c).mean(axis=0) for c in clf.classes_], axis=1)
    np.testing.assert_allclose(freq, proba, atol=0.04)


def test_offset_with_two_classes_is_the_binary_model_with_it():
    X, y, offset = _offset_classes()
    y2 = np.where(y == "a", "a", "z")
    clf = BayesianOneVsRestClassifier().fit(X, y2, offset=offset)
    ref = BayesianLogisticRegression().fit(X, y2, offset=offset)
    np.testing.assert_allclose(clf.estimators_[0].posterior_.mean, ref.posterior_.mean,
                               rtol=1e-10)
    proba, std = clf.predict_proba(X[:7], return_std=True, offset=offset[:7])
    ref_proba, ref_std = ref.predict_proba(X[:7], return_std=True, offset=offset[:7])
    np.testing.assert_allclose(proba, ref_proba, rtol=1e-12)
    np.testing.assert_allclose(std[:, 0], ref_std, rtol=1e-12)
    np.testing.assert_array_equal(
        clf.sample_y(X[:7], n_draws=50, random_state=3, offset=offset[:7]),
        ref.sample_y(X[:7], n_draws=50, random_state=3, offset=offset[:7]))
    data = clf.to_arviz(X[:50], y2[:50], offset=offset[:50], n_draws=20, n_chains=2,
                        random_state=0)["z"]
    ref_data = ref.to_arviz(X[:50], y2[:50], offset=offset[:50], n_draws=20, n_chains=2,
                            random_state=0)
    np.testing.assert_allclose(data.log_likelihood["y"].values,
                               ref_data.log_likelihood["y"].values)
    with pytest.raises(ValueError, match="offset"):
        clf.predict_proba(X[:7], offset=np.full(7, np.nan))
