"""Formulas through FormulaTransformer: the design matrix equals patsy's (statsmodels' formula
engine) on statsmodels' bundled data, a formula pipeline's posterior mode equals statsmodels'
formula GLM, and the terms name the summary's rows."""

import importlib.util
import pickle
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import estimator_checks

from skcoreset import BayesianPoissonRegression, QuasiNewtonCoreset
from skcoreset.formula import FormulaTransformer, formula_Xy
from skcoreset.pipeline import Pipeline

pytest.importorskip("formulaic")
pd = pytest.importorskip("pandas")
sm = pytest.importorskip("statsmodels.api")
smf = pytest.importorskip("statsmodels.formula.api")
patsy = pytest.importorskip("patsy")

# statsmodels' RAND health insurance experiment data (bundled, 20,190 rows): doctor visits
# against the coinsurance rate (5 levels, as a categorical) and health measures
RANDHIE = "mdvis ~ C(lncoins) + idp + np.log1p(lpi) + fmde + physlm + disea + hlthg + hlthp"
# a wide prior: the posterior mode is statsmodels' maximum-likelihood estimate
_FLAT = dict(prior_scale=1e3, intercept_prior_scale=1e3)


@pytest.fixture(scope="module")
def randhie():
    return sm.datasets.randhie.load_pandas().data


@pytest.fixture(scope="module")
def fair():
    return sm.datasets.fair.load_pandas().data


@pytest.mark.parametrize("formula", [
    "affairs ~ C(rate_marriage) + age + np.log(yrs_married) + C(religious):educ",
    "affairs ~ C(occupation, Treatment(reference=3)) + children * educ",
    "affairs ~ 0 + C(occupation) + age",
])
def test_design_matrix_is_patsys(fair, formula):
    """The columns, their names and order are statsmodels' (patsy's) design matrix's."""
    _, expected = patsy.dmatrices(formula, fair, return_type="dataframe")
    keep = [c for c in expected.columns if c != "Intercept"]
    formula_step = FormulaTransformer(formula).fit(fair)
    Xt = formula_step.transform(fair)
    assert list(formula_step.get_feature_names_out()) == keep
    assert list(Xt.columns) == keep
    np.testing.assert_allclose(Xt.to_numpy(), expected[keep].to_numpy(), rtol=1e-12)
    assert (Xt.index == fair.index).all() and (Xt.dtypes == np.float64).all()
    # kept: the intercept column as the formula gives it
    kept = FormulaTransformer(formula, drop_intercept=False).fit_transform(fair)
    assert list(kept.columns) == list(expected.columns)


def test_new_rows_are_encoded_with_the_training_levels(fair):
    """Test rows with only some of the levels get the training columns, equal to patsy's
    encoding of those rows with the training design info."""
    formula = "~ C(rate_marriage) + C(occupation) + np.log(yrs_married)"
    train, test = fair.iloc[:4000], fair.iloc[4000:]
    test = test[test.rate_marriage >= 4]  # two of the five levels
    design_info = patsy.dmatrix(formula, train).design_info
    expected = patsy.dmatrix(design_info, test, return_type="dataframe").iloc[:, 1:]
    Xt = FormulaTransformer(formula).fit(train).transform(test)
    assert list(Xt.columns) == list(expected.columns)
    np.testing.assert_allclose(Xt.to_numpy(), expected.to_numpy())
    assert (Xt.index == test.index).all()


def test_stateful_transforms_keep_their_training_state(fair):
    """center() subtracts the training mean from test rows, not their own."""
    train, test = fair.iloc[:3000], fair.iloc[3000:]
    Xt = FormulaTransformer("~ center(age)").fit(train).transform(test)
    np.testing.assert_allclose(Xt["center(age)"], test.age - train.age.mean())


def _doubled(x):
    return 2.0 * x


def test_context_names_further_functions(fair):
    step = FormulaTransformer("~ doubled(age) + np.log(age)", context={"doubled": _doubled})
    Xt = step.fit(fair.iloc[:100]).transform(fair.iloc[100:200])
    np.testing.assert_allclose(Xt["doubled(age)"], 2.0 * fair.age.iloc[100:200])
    again = pickle.loads(pickle.dumps(step))
    pd.testing.assert_frame_equal(again.transform(fair.iloc[:5]), step.transform(fair.iloc[:5]))
    # the formula does not see this module's names, nor, without context, the function
    with pytest.raises(ValueError, match=r"\['doubled'\], neither a column.*context="):
        FormulaTransformer("~ doubled(age)").fit(fair)
    with pytest.raises(ValueError, match=r"\['sp'\]"):
        FormulaTransformer("~ sp.csr_matrix(age)").fit(fair)


def test_unseen_levels_warn_or_raise():
    formulaic = pytest.importorskip("formulaic")
    train = pd.DataFrame({"plan": ["a", "b", "c", "a"], "age": [1.0, 2.0, 3.0, 4.0]})
    test = pd.DataFrame({"plan": ["b", "d"], "age": [1.0, 2.0]})
    step = FormulaTransformer("~ C(plan) + age").fit(train)
    with pytest.warns(formulaic.errors.DataMismatchWarning, match="'d'"):
        Xt = step.transform(test)
    # the unseen level is coded as the reference level (all indicators 0)
    np.testing.assert_array_equal(Xt.to_numpy(), [[1.0, 0.0, 1.0], [0.0, 0.0, 2.0]])
    with pytest.raises(ValueError, match="handle_unknown='error'.*'d'"):
        step.set_params(handle_unknown="error").transform(test)
    step.set_params(handle_unknown="error").transform(train)  # no error without unseen levels


def test_bad_input_is_refused_with_the_reason():
    data = pd.DataFrame({"plan": [1, 2, 1], "age": [1.0, np.nan, 3.0]})
    with pytest.raises(ValueError, match="missing values"):
        FormulaTransformer("~ C(plan) + age").fit(data)
    with pytest.raises(ValueError, match=r"names \['income'\], neither a column"):
        FormulaTransformer("~ C(plan) + np.log(income)").fit(data)
    with pytest.raises(TypeError, match="pandas DataFrame"):
        FormulaTransformer("~ age").fit(data.to_numpy())
    with pytest.raises(ValueError, match="handle_unknown"):
        FormulaTransformer("~ age", handle_unknown="ignore").fit(data.fillna(0))
    with pytest.raises(TypeError, match="formula"):
        FormulaTransformer(["age"]).fit(data)
    fitted = FormulaTransformer("~ C(plan) + age").fit(data.fillna(0))
    with pytest.raises(ValueError, match="missing values"):
        fitted.transform(data)
    with pytest.raises(ValueError, match="0 rows"):
        FormulaTransformer("~ C(plan) + age").fit(data.iloc[:0])
    zero = pd.DataFrame({"income": [1.0, 0.0, 2.0], "age": [1.0, 2.0, np.inf]})
    with pytest.raises(ValueError, match=r"undefined values in \['np.log\(income\)'\]"), \
            np.errstate(divide="ignore"):
        FormulaTransformer("~ np.log(income)").fit(zero)
    for sparse_output in (False, True):
        step = FormulaTransformer("~ age", sparse_output=sparse_output).fit(zero.iloc[:2])
        with pytest.raises(ValueError, match=r"transform: .* in \['age'\]"):
            step.transform(zero)
    # a failed fit leaves a fitted transformer as it was
    with pytest.raises(ValueError):
        fitted.set_params(formula="~ income").fit(data)
    assert list(fitted.get_feature_names_out()) == ["C(plan)[T.2]", "age"]
    dd = pytest.importorskip("dask.dataframe")
    with pytest.raises(TypeError, match="dask"):
        FormulaTransformer("~ age").fit(dd.from_pandas(data, npartitions=2))


def test_dot_is_every_other_column():
    data = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0], "a": [1.0, 2.0, 3.0, 5.0],
                         "c": ["u", "v", "u", "w"]})
    step = FormulaTransformer("y ~ .").fit(data)
    assert list(step.get_feature_names_out()) == ["a", "c[T.v]", "c[T.w]"]
    X, _ = formula_Xy("y ~ .", data)
    assert list(FormulaTransformer("~ .").fit(X).get_feature_names_out()) == [
        "a", "c[T.v]", "c[T.w]"]
    # the columns are fixed in fit: a new column later is not taken up
    wider = data.assign(d=1.0)
    assert list(step.transform(wider).columns) == ["a", "c[T.v]", "c[T.w]"]
    with pytest.raises(ValueError, match="no column besides the intercept"):
        FormulaTransformer("y ~ 1").fit(data)


def test_formula_Xy(randhie):
    X, y = formula_Xy(RANDHIE, randhie)
    assert "mdvis" not in X.columns and len(X.columns) == randhie.shape[1] - 1
    np.testing.assert_array_equal(y, randhie.mdvis)
    assert y.name == "mdvis" and y.dtype == np.float64
    _, y_log = formula_Xy("np.log1p(mdvis) ~ idp", randhie)
    np.testing.assert_allclose(y_log, np.log1p(randhie.mdvis))
    with pytest.raises(ValueError, match="no left-hand side"):
        formula_Xy("~ idp", randhie)


def test_pipeline_is_statsmodels_formula_glm(randhie):
    """The MAP of a formula pipeline under a wide prior is smf.glm's MLE on the same formula,
    and the summary's rows are the terms."""
    glm = smf.glm(RANDHIE, randhie, family=sm.families.Poisson()).fit()
    X, y = formula_Xy(RANDHIE, randhie)
    pipe = Pipeline([("formula", FormulaTransformer(RANDHIE)),
                     ("clf", BayesianPoissonRegression(**_FLAT))]).fit(X, y)
    names = [n for n in glm.params.index if n != "Intercept"]
    reg = pipe[-1]
    np.testing.assert_allclose(reg.coef_, glm.params[names], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(reg.intercept_, glm.params["Intercept"], rtol=1e-4)
    sd = np.sqrt(np.diag(glm.cov_params()))
    np.testing.assert_allclose(reg.posterior_.std, np.r_[sd[1:], sd[0]], rtol=1e-3)
    assert list(pipe[:-1].get_feature_names_out()) == names
    table = reg.summary().to_frame()
    assert list(table.index) == names + ["intercept"]
    np.testing.assert_allclose(table.loc[names, "mean"], glm.params[names], rtol=1e-4,
                               atol=1e-6)
    # predictions on new rows are statsmodels' at the mode (plus the posterior spread)
    new = randhie.iloc[:50]
    np.testing.assert_allclose(pipe.predict(new), glm.predict(new), rtol=2e-3)


def _mixed_frame(n, seed=0):
    """3 categorical and 5 numeric columns, Poisson counts."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"plan": rng.choice(["basic", "plus", "premium"], n),
                          "region": rng.choice(["n", "s", "e", "w"], n),
                          "smoker": rng.choice([0, 1], n)})
    for j in range(5):
        frame[f"x{j}"] = rng.normal(size=n)
    frame["income"] = rng.lognormal(10, 0.5, n)
    eta = 0.3 * (frame.plan == "plus") - 0.2 * (frame.region == "w") + 0.1 * frame.x0
    frame["visits"] = rng.poisson(np.exp(eta + 0.05 * np.log(frame.income)))
    return frame


def test_same_fit_as_the_column_transformer_pipeline():
    """The formula pipeline is the hand-built ColumnTransformer one (first level dropped,
    log taken), with names as the formula writes them."""
    from sklearn.compose import ColumnTransformer
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder

    frame = _mixed_frame(3000)
    formula = ("visits ~ C(plan) + C(region) + C(smoker) + x0 + x1 + x2 + x3 + x4"
               " + np.log(income)")
    X, y = formula_Xy(formula, frame)
    columns = ColumnTransformer([
        ("cat", OneHotEncoder(drop="first", sparse_output=False), ["plan", "region", "smoker"]),
        ("num", "passthrough", [f"x{j}" for j in range(5)]),
        ("log", FunctionTransformer(np.log), ["income"])])
    by_formula = Pipeline([("formula", FormulaTransformer(formula)),
                           ("clf", BayesianPoissonRegression())]).fit(X, y)
    by_hand = Pipeline([("columns", columns), ("clf", BayesianPoissonRegression())]).fit(X, y)
    np.testing.assert_allclose(by_formula[-1].posterior_.mean, by_hand[-1].posterior_.mean,
                               rtol=1e-10, atol=1e-12)
    assert list(by_formula[-1].summary().to_frame().index[:3]) == [
        "C(plan)[T.plus]", "C(plan)[T.premium]", "C(region)[T.n]"]


def test_sparse_output_is_the_dense_design_as_csr():
    """Many levels: the CSR design equals the dense one, and so does the fit on it."""
    frame = _mixed_frame(2000)
    frame["zip"] = np.random.default_rng(1).integers(0, 150, len(frame)).astype(str)
    formula = "visits ~ C(zip) + C(plan) + x0 + np.log(income)"
    X, y = formula_Xy(formula, frame)
    dense = FormulaTransformer(formula).fit(X)
    sparse = FormulaTransformer(formula, sparse_output=True).fit(X)
    Xs = sparse.transform(X)
    assert sp.issparse(Xs) and Xs.format == "csr" and Xs.dtype == np.float64
    np.testing.assert_array_equal(Xs.toarray(), dense.transform(X).to_numpy())
    assert list(sparse.get_feature_names_out()) == list(dense.get_feature_names_out())
    fits = [Pipeline([("formula", step), ("clf", BayesianPoissonRegression())]).fit(X, y)
            for step in (dense, sparse)]
    np.testing.assert_allclose(fits[1][-1].posterior_.mean, fits[0][-1].posterior_.mean,
                               rtol=1e-8, atol=1e-10)
    # a CSR matrix carries no names: the pipeline's summary takes them from the step
    names = list(dense.get_feature_names_out()) + ["intercept"]
    assert list(fits[1].summary().to_frame().index) == names
    assert list(fits[1].credible_interval().names) == names
    assert list(fits[0][-1].credible_interval().names) == names  # a DataFrame's columns


def test_coreset_pipeline_names_the_terms(randhie):
    """A coreset step after the formula: the fit sees the coreset rows with term names, and
    lands within a few posterior sds of the full-data fit."""
    X, y = formula_Xy(RANDHIE, randhie)
    pipe = Pipeline([("formula", FormulaTransformer(RANDHIE)),
                     ("coreset", QuasiNewtonCoreset(M=400, random_state=0)),
                     ("clf", BayesianPoissonRegression())]).fit(X, y)
    full = Pipeline([("formula", FormulaTransformer(RANDHIE)),
                     ("clf", BayesianPoissonRegression())]).fit(X, y)
    names = list(full[:-1].get_feature_names_out())
    assert list(pipe[-1].summary().to_frame().index) == names + ["intercept"]
    assert list(pipe.summary().to_frame().index) == names + ["intercept"]
    assert list(pipe[-1].feature_names_in_) == names
    z = ((pipe[-1].posterior_.mean - full[-1].posterior_.mean) / full[-1].posterior_.std)
    assert np.abs(z).max() < 3
    assert pipe.predict(X.iloc[:10]).shape == (10,)
    if importlib.util.find_spec("arviz") is not None:
        with warnings.catch_warnings():  # no data groups for a coreset fit: not checked here
            warnings.simplefilter("ignore", UserWarning)
            idata = pipe[-1].to_arviz(n_draws=20, n_chains=1, random_state=0)
        assert list(idata.posterior["coef"].coords["feature"].values) == names


def test_clone_and_pickle(randhie):
    step = FormulaTransformer(RANDHIE, handle_unknown="error")
    assert clone(step).get_params() == step.get_params()
    step.fit(randhie)
    again = pickle.loads(pickle.dumps(step))
    np.testing.assert_array_equal(again.transform(randhie.iloc[:20]),
                                  step.transform(randhie.iloc[:20]))
    assert list(again.get_feature_names_out()) == list(step.get_feature_names_out())
    assert not hasattr(clone(step), "model_spec_")


def test_missing_formulaic_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "formulaic", None)  # import formulaic -> ImportError
    with pytest.raises(ImportError, match=r"skcoreset\[formula\]"):
        FormulaTransformer("~ age").fit(pd.DataFrame({"age": [1.0, 2.0]}))


# scikit-learn's checks that need no data, on the class itself (parametrize_with_checks runs
# the rest through a test-only subclass that frames the checks' arrays as DataFrames)
_DATA_FREE_CHECKS = ["check_no_attributes_set_in_init", "check_get_params_invariance",
                     "check_set_params", "check_estimator_repr", "check_estimators_unfitted",
                     "check_valid_tag_types", "check_estimator_cloneable", "check_mixin_order",
                     "check_parameters_default_constructible", "check_set_output_transform"]


@pytest.mark.parametrize("check", _DATA_FREE_CHECKS)
def test_scikit_learn_checks_without_data(check):
    getattr(estimator_checks, check)("FormulaTransformer", FormulaTransformer("~ x0"))


def test_transformer_conventions(fair):
    """What parametrize_with_checks would check, on a DataFrame: fit_transform equals
    fit().transform, refitting gives the same result, fit returns self and leaves the
    parameters alone, and pandas output keeps the columns."""
    formula = "~ C(occupation) + age + np.log(yrs_married)"
    step = FormulaTransformer(formula)
    first = step.fit_transform(fair)
    assert step.fit(fair) is step and step.get_params()["formula"] == formula
    pd.testing.assert_frame_equal(step.transform(fair), first)
    pd.testing.assert_frame_equal(FormulaTransformer(formula).fit(fair).transform(fair), first)
    assert step.n_features_in_ == fair.shape[1]
    assert list(step.feature_names_in_) == list(fair.columns)
    out = FormulaTransformer(formula).set_output(transform="pandas").fit_transform(fair)
    pd.testing.assert_frame_equal(out, first)
