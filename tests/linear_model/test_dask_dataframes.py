"""dask DataFrames as first-class input: ``fit(ddf[columns], ddf.y)`` with chunks of
unknown size, the columns naming the summary's rows, and predictions on the DataFrame."""

import warnings

import numpy as np
import pytest

from skcoreset import BayesianLogisticRegression, BayesianPoissonRegression

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")


def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.normal(size=n), "dose": rng.normal(size=n),
                          "weight": rng.uniform(0.5, 2.0, n)})
    frame["visits"] = rng.poisson(np.exp(0.4 * frame["age"] - 0.2 * frame["dose"]))
    frame["event"] = rng.random(n) < 1 / (1 + np.exp(-frame["age"]))
    return frame


@pytest.mark.parametrize("cls, target", [(BayesianPoissonRegression, "visits"),
                                         (BayesianLogisticRegression, "event")])
def test_fit_on_dask_dataframe_columns_equals_in_memory(cls, target):
    frame = _frame()
    ddf = dd.from_pandas(frame, npartitions=4)
    cols = ["age", "dose"]
    lazy = cls().fit(ddf[cols], ddf[target], sample_weight=ddf.weight)
    memory = cls().fit(frame[cols], frame[target], sample_weight=frame.weight)
    np.testing.assert_allclose(lazy.posterior_.mean, memory.posterior_.mean, rtol=1e-8)
    assert [key[0] for key in lazy.summary().index] == ["age", "dose", "intercept"]
    assert not hasattr(lazy, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names"
        predicted = lazy.predict(ddf[cols]).compute()
    np.testing.assert_allclose(predicted, memory.predict(frame[cols]), rtol=1e-8)
    # an in-memory fit afterwards forgets the dask columns
    assert [key[0] for key in lazy.fit(frame[cols].to_numpy(), frame[target])
            .summary().index] == ["x0", "x1", "intercept"]


def test_dask_dataframe_with_exposure_series():
    frame = _frame()
    exposure = pd.Series(np.linspace(0.5, 2.0, len(frame)))
    ddf = dd.from_pandas(frame.assign(exposure=exposure), npartitions=3)
    lazy = BayesianPoissonRegression().fit(ddf[["age", "dose"]], ddf.visits,
                                           exposure=ddf.exposure)
    memory = BayesianPoissonRegression().fit(frame[["age", "dose"]], frame.visits,
                                             exposure=exposure)
    np.testing.assert_allclose(lazy.posterior_.mean, memory.posterior_.mean, rtol=1e-8)
