"""Every warning the package issues points at the user's line: the file that called
``fit`` (not skcoreset's modules, nor scikit-learn's ``fit_context`` wrapper in
``sklearn/base.py``), whatever the depth and the path of the call."""

import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from skcoreset import BayesianLogisticRegression, UniformCoreset
from skcoreset._warnings import warn
from skcoreset.datasets import make_logistic_regression
from skcoreset.pipeline import Pipeline


@pytest.fixture(scope="module")
def data():
    return make_logistic_regression(300, coef=[1.0, -0.5], random_state=0)


def _caught(call, category):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    found = [w for w in caught if issubclass(w.category, category)]
    assert found, f"no {category.__name__} issued"
    # the line of ``call`` (a lambda, or the line calling warn), in this file
    assert {(w.filename, w.lineno) for w in found} == {(__file__, call.__code__.co_firstlineno)}
    return found


def test_a_warning_from_fit_names_the_callers_file_and_line(data):
    X, y = data
    est = BayesianLogisticRegression(max_iter=1)
    _caught(lambda: est.fit(X, y), ConvergenceWarning)


def test_a_warning_from_a_pipeline_and_a_search_names_the_callers_file(data):
    X, y = data
    pipe = Pipeline([("coreset", UniformCoreset(M=1000, random_state=0)),
                     ("clf", BayesianLogisticRegression())])
    _caught(lambda: pipe.fit(X, y), UserWarning)
    search = GridSearchCV(pipe, {"clf__prior_scale": [1.0]}, cv=2)
    _caught(lambda: search.fit(X, y), UserWarning)


def test_warn_skips_the_package_frames_only():
    found = _caught(lambda: warn("from the package", RuntimeWarning), RuntimeWarning)
    assert str(found[0].message) == "from the package"
