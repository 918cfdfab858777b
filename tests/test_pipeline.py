"""The coreset Pipeline and the headline use: cross-validating the coreset size."""

import pickle

import numpy as np
import pytest
import sklearn
from scipy.special import expit
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, PoissonRegressor
from sklearn.metrics import get_scorer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline as SkPipeline
from sklearn.preprocessing import StandardScaler

from skcoreset import (BayesianLogisticRegression, BayesianPoissonRegression, GIGACoreset,
                       UniformCoreset)
from skcoreset.exceptions import CoresetAccuracyWarning
from skcoreset.pipeline import Pipeline, make_pipeline


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4)) * [1.0, 2.0, 0.5, 1.0] + 3.0
    y = (rng.random(n) < expit((X - 3.0) @ [1.0, -0.5, 2.0, 0.0])).astype(int)
    return X, y


@pytest.mark.parametrize("pipeline_class", [Pipeline, SkPipeline])
def test_headline_grid_search_over_coreset_size(pipeline_class):
    X, y = _data()
    pipe = pipeline_class([("coreset", GIGACoreset(M=50, projection_dim=100, random_state=0)),
                           ("clf", BayesianLogisticRegression())])
    search = GridSearchCV(pipe, {"coreset__M": [10, 40, 160]}, scoring="neg_log_loss", cv=3)
    search.fit(X, y)
    assert search.best_params_["coreset__M"] in (40, 160)
    X_test, _ = _data(n=50, seed=1)
    proba, std = search.best_estimator_.predict_proba(X_test, return_std=True)
    assert proba.shape == (50, 2) and std.shape == (50,) and np.all(std > 0)
    scores = search.cv_results_["mean_test_score"]
    assert scores[0] < scores[2]  # a larger coreset gives a better held-out log-loss


def test_coreset_pipeline_equals_fitting_on_the_weighted_subset():
    X, y = _data()
    coreset = UniformCoreset(M=80, random_state=3)
    pipe = Pipeline([("coreset", coreset), ("clf", BayesianLogisticRegression())]).fit(X, y)
    fitted_coreset = pipe.named_steps["coreset"]
    idx, w = fitted_coreset.sample_indices_, fitted_coreset.sample_weight_
    ref = BayesianLogisticRegression().fit(X[idx], y[idx], sample_weight=w)
    np.testing.assert_allclose(pipe[-1].coef_, ref.coef_)
    # prediction skips the coreset step: one prediction per row, training data included
    assert pipe.predict(X).shape == (len(y),)
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(X))
    assert pipe.score(X, y) == pytest.approx(ref.score(X, y))
    np.testing.assert_array_equal(pipe.fit_predict(X, y), ref.predict(X))


def test_later_steps_and_foreign_final_estimators_receive_the_weights():
    X, y = _data()
    pipe = Pipeline([("coreset", UniformCoreset(M=80, random_state=0)),
                     ("scale", StandardScaler()),
                     ("clf", LogisticRegression(C=1.0))]).fit(X, y)
    idx, w = pipe["coreset"].sample_indices_, pipe["coreset"].sample_weight_
    scaler = StandardScaler().fit(X[idx], sample_weight=w)
    np.testing.assert_allclose(pipe["scale"].mean_, scaler.mean_)
    ref = LogisticRegression(C=1.0).fit(scaler.transform(X[idx]), y[idx], sample_weight=w)
    np.testing.assert_allclose(pipe["clf"].coef_, ref.coef_, rtol=1e-6)
    np.testing.assert_allclose(pipe.predict_proba(X), ref.predict_proba(scaler.transform(X)))

    rng = np.random.default_rng(0)
    counts = rng.poisson(np.exp(0.3 * (X[:, 0] - 3.0)))
    pois = Pipeline([("coreset", UniformCoreset(M=100, random_state=0)),
                     ("reg", PoissonRegressor())]).fit(X, counts)
    assert pois["coreset"].model_ == "poisson" and pois.predict(X).shape == (len(y),)


def test_final_estimator_without_sample_weight_is_a_clear_error():
    X, y = _data()
    pipe = Pipeline([("coreset", UniformCoreset(M=50)), ("knn", KNeighborsClassifier())])
    with pytest.raises(TypeError, match="does not accept sample_weight"):
        pipe.fit(X, y)
    # without a coreset step the pipeline is an ordinary one
    Pipeline([("scale", StandardScaler()), ("knn", KNeighborsClassifier())]).fit(X, y)


def test_plain_sklearn_pipeline_never_goes_silently_unweighted():
    X, y = _data()
    # the weighted subset (50 rows) never matches y (600): a step that cannot read its
    # weights fails on the sample count, whatever follows the coreset
    foreign = SkPipeline([("coreset", UniformCoreset(M=50)), ("clf", LogisticRegression())])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[50, 600\]"):
        foreign.fit(X, y)
    scaled = SkPipeline([("coreset", UniformCoreset(M=50)), ("scale", StandardScaler()),
                         ("clf", BayesianLogisticRegression())])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[50, 600\]"):
        scaled.fit(X, y)
    ours = SkPipeline([("coreset", UniformCoreset(M=50, random_state=0)),
                       ("clf", BayesianLogisticRegression())]).fit(X, y)
    idx, w = ours["coreset"].sample_indices_, ours["coreset"].sample_weight_
    ref = BayesianLogisticRegression().fit(X[idx], y[idx], sample_weight=w)
    np.testing.assert_allclose(ours["clf"].coef_, ref.coef_)
    X_new, _ = _data(n=30, seed=5)
    np.testing.assert_allclose(ours.predict_proba(X_new), ref.predict_proba(X_new))
    # the training data pass through the fitted coreset step: one prediction per row
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X))
    subset = clone(ours["coreset"]).fit_transform(X, y)
    with pytest.raises(ValueError, match="weighted subset"):
        ours["clf"].predict(subset)
    with pytest.raises(ValueError, match="already carries"):
        BayesianLogisticRegression().fit(subset, y, sample_weight=np.ones(len(y)))


def test_a_coreset_of_every_row_still_fails_loudly_for_a_foreign_estimator():
    X, y = _data(n=80)
    w = np.linspace(0.5, 3.0, len(y))
    foreign = SkPipeline([("coreset", UniformCoreset(M=1000)), ("clf", LogisticRegression())])
    with pytest.raises(ValueError, match=r"inconsistent numbers of samples: \[81, 80\]"):
        foreign.fit(X, y, coreset__sample_weight=w)
    # outside a pipeline: the subset of all N rows has N + 1 rows (one split in two halves)
    subset = UniformCoreset(M=1000).fit_transform(X, y, sample_weight=w)
    assert subset.shape[0] == len(y) + 1 and subset.sample_weight.sum() == pytest.approx(w.sum())
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        LogisticRegression().fit(subset, y)
    ours = BayesianLogisticRegression().fit(subset, y)
    ref = BayesianLogisticRegression().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-8)


def test_weighted_subset_with_a_target_of_another_length_is_an_error():
    X, y = _data()
    subset = UniformCoreset(M=40, random_state=0).fit_transform(X, y)
    with pytest.raises(ValueError, match="y has 7 entries.*40 rows drawn from the 600"):
        BayesianLogisticRegression().fit(subset, y[:7])
    BayesianLogisticRegression().fit(subset, y[subset.sample_indices])  # one per row: fine


def test_dataframe_coreset_weights_follow_reordered_rows():
    pd = pytest.importorskip("pandas")
    X, y = _data()
    frame = pd.DataFrame(X, columns=list("abcd"))
    out = UniformCoreset(M=40, random_state=0).fit_transform(frame, y)
    out.attrs["coreset_sample_weight"][:] = np.arange(1.0, 41.0)  # distinct weights
    by_label = dict(zip(out.index, np.arange(1.0, 41.0)))
    shuffled = out.sort_values("b")
    clf = BayesianLogisticRegression().fit(shuffled, y)
    ref = BayesianLogisticRegression().fit(shuffled.to_numpy(), y[shuffled.index],
                                           sample_weight=[by_label[i] for i in shuffled.index])
    np.testing.assert_allclose(clf.coef_, ref.coef_)
    both = pd.concat([out.head(20), out.tail(20)])  # used to fail inside pandas
    assert both.attrs["coreset_row_labels"] == out.attrs["coreset_row_labels"]
    coarse = frame.set_axis(np.arange(len(y)) // 100)  # row labels shared by 100 rows
    coarse_out = UniformCoreset(M=40, random_state=0).fit_transform(coarse, y)
    BayesianLogisticRegression().fit(coarse_out, y)  # as transform returned it: fine
    with pytest.raises(ValueError, match="not unique"):
        BayesianLogisticRegression().fit(coarse_out.sample(frac=1.0, random_state=0), y)


def _log_loss_scorer():
    """neg_log_loss that ignores sample_weight (routing requires saying so explicitly)."""
    return get_scorer("neg_log_loss").set_score_request(sample_weight=False)


def _routing_pipeline(request_coreset=True):
    coreset = UniformCoreset(M=60, random_state=0)
    if request_coreset:
        coreset.set_fit_request(sample_weight=True)
    return Pipeline([("scale", StandardScaler().set_fit_request(sample_weight=False)),
                     ("coreset", coreset), ("clf", BayesianLogisticRegression())])


def test_metadata_routing_sends_sample_weight_to_the_coreset():
    X, y = _data()
    w = np.where(np.arange(len(y)) < 150, 0.0, 2.0)
    grid = {"coreset__M": [30, 60]}
    legacy = GridSearchCV(Pipeline([("scale", StandardScaler()),
                                    ("coreset", UniformCoreset(M=60, random_state=0)),
                                    ("clf", BayesianLogisticRegression())]),
                          grid, cv=3, scoring="neg_log_loss").fit(X, y, coreset__sample_weight=w)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = GridSearchCV(_routing_pipeline(), grid, cv=3, scoring=_log_loss_scorer())
        routed.fit(X, y, sample_weight=w)
        # the pipeline's own spelling passes through GridSearchCV too
        spelled = GridSearchCV(_routing_pipeline(request_coreset=False), grid, cv=3,
                               scoring=_log_loss_scorer()).fit(X, y, coreset__sample_weight=w)
        with pytest.raises(ValueError, match="UniformCoreset.set_fit_request"):
            GridSearchCV(_routing_pipeline(request_coreset=False), grid, cv=3,
                         scoring=_log_loss_scorer(), error_score="raise").fit(
                             X, y, sample_weight=w)
        # a foreign final estimator gets the coreset's weights, not the routed ones
        foreign = _routing_pipeline()
        foreign.steps[-1] = ("clf", LogisticRegression())
        foreign.fit(X, y, sample_weight=w)
    for search in (routed, spelled):
        best = search.best_estimator_["coreset"]
        assert np.all(best.sample_indices_ >= 150)  # zero-weight rows stand for nothing
        assert best.sample_weight_.sum() == pytest.approx(w.sum())
        np.testing.assert_allclose(search.cv_results_["mean_test_score"],
                                   legacy.cv_results_["mean_test_score"])
    assert np.all(foreign["coreset"].sample_indices_ >= 150)


def test_incoming_weights_coreset_of_coreset_and_params():
    X, y = _data()
    w = np.where(np.arange(len(y)) < 100, 0.0, 2.0)
    pipe = Pipeline([("first", UniformCoreset(M=200, random_state=0)),
                     ("second", GIGACoreset(M=40, projection_dim=100, random_state=0)),
                     ("clf", BayesianLogisticRegression())])
    pipe.fit(X, y, first__sample_weight=w)
    assert np.all(pipe["first"].sample_indices_ >= 100)
    np.testing.assert_allclose(pipe["first"].sample_weight_.sum(), w.sum())
    assert len(pipe["second"].sample_indices_) <= 40
    with pytest.raises(ValueError, match="stepname__parameter"):
        pipe.fit(X, y, sample_weight=w)
    with pytest.raises(ValueError, match="memory"):
        clone(pipe).set_params(memory="/tmp").fit(X, y)


def test_clone_set_params_pickle_cross_val_and_make_pipeline():
    X, y = _data()
    pipe = make_pipeline(UniformCoreset(M=60, random_state=0), BayesianLogisticRegression())
    assert list(pipe.named_steps) == ["uniformcoreset", "bayesianlogisticregression"]
    pipe.set_params(uniformcoreset__M=100)
    cloned = clone(pipe)
    assert cloned.get_params()["uniformcoreset__M"] == 100
    fitted = cloned.fit(X, y)
    restored = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_allclose(restored.predict_proba(X), fitted.predict_proba(X))
    scores = cross_val_score(pipe, X, y, cv=3, scoring="neg_log_loss")
    assert np.all(np.isfinite(scores))
    twice = make_pipeline(UniformCoreset(M=60), UniformCoreset(M=30),
                          BayesianPoissonRegression())
    assert list(twice.named_steps)[:2] == ["uniformcoreset-1", "uniformcoreset-2"]


@pytest.mark.parametrize("pipeline_class", [Pipeline, SkPipeline])
def test_grid_search_train_scores_are_computed_on_every_training_row(pipeline_class):
    """return_train_score=True: the fitted coreset step passes the training rows through,
    so train scores are finite, warning-free and those of all the training rows."""
    import warnings

    from sklearn.model_selection import KFold

    X, y = _data()
    pipe = pipeline_class([("coreset", UniformCoreset(M=50, random_state=0)),
                           ("clf", BayesianLogisticRegression())])
    cv = KFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # 30-60 uniform rows are far from the posterior: that warning is tested elsewhere
        warnings.simplefilter("ignore", CoresetAccuracyWarning)
        search = GridSearchCV(pipe, {"coreset__M": [30, 60]}, cv=cv,
                              return_train_score=True).fit(X, y)
    results = search.cv_results_
    for key in ("split0_train_score", "mean_train_score", "mean_test_score"):
        assert np.all(np.isfinite(results[key])), key
    train, test = next(cv.split(X))
    fitted = clone(pipe).set_params(coreset__M=30).fit(X[train], y[train])
    assert results["split0_train_score"][0] == pytest.approx(fitted.score(X[train], y[train]))
    assert results["split0_test_score"][0] == pytest.approx(fitted.score(X[test], y[test]))
    assert fitted.predict(X[train]).shape == (len(train),)


def test_exposure_cannot_follow_a_coreset_step():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    e = rng.uniform(0.5, 2.0, 300)
    y = rng.poisson(e * np.exp(X @ [0.3, -0.2]))
    for pipe in (Pipeline([("coreset", UniformCoreset(M=50, model="poisson")),
                           ("reg", BayesianPoissonRegression())]),
                 SkPipeline([("coreset", UniformCoreset(M=50, model="poisson")),
                             ("reg", BayesianPoissonRegression())])):
        with pytest.raises(ValueError, match="exposure.*to the coreset step"):
            pipe.fit(X, y, reg__exposure=e)
        # the rates with the exposure as weights: what the message proposes
        pipe.fit(X, y / e, coreset__sample_weight=e)
        assert pipe[-1].predict(X[:3], exposure=e[:3]).shape == (3,)
    # with metadata routing: routed to a final step after a coreset it is the same error,
    # without a coreset step it reaches the estimator's fit and score
    with sklearn.config_context(enable_metadata_routing=True):
        reg = BayesianPoissonRegression().set_fit_request(exposure=True).set_score_request(
            exposure=True)
        with pytest.raises(ValueError, match="exposure cannot reach"):
            Pipeline([("coreset", UniformCoreset(M=50, model="poisson")
                       .set_fit_request(exposure=False)),
                      ("reg", reg)]).fit(X, y, exposure=e)
        search = GridSearchCV(Pipeline([("scale", StandardScaler()), ("reg", reg)]),
                              {"reg__prior_scale": [0.5, 2.0]}, cv=3).fit(X, y, exposure=e)
    assert np.isfinite(search.best_score_)
