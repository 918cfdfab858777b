"""The method table of skcoreset.linear_model declares each fitting method once: the
estimators' parameters, their constraints and their docs follow from it."""

import inspect
from numbers import Real

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression)
from skcoreset import linear_model as lm
from skcoreset._sklearn_compat import Interval
from skcoreset.families import LogisticFamily

from .conftest import logistic_data

ESTIMATORS = [BayesianLogisticRegression, BayesianProbitRegression, BayesianPoissonRegression,
              BayesianNegativeBinomialRegression]


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_parameters_constraints_and_docs_agree(cls):
    names = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
    assert set(cls._parameter_constraints) == set(names)
    assert cls().get_params() == {name: getattr(cls(), name) for name in names}
    documented = [name for name in names if f"\n    {name} : " in cls.__doc__]
    assert documented == names  # every parameter, in signature order
    supported = [method for method, spec in lm._METHODS.items()
                 if spec.supports is None or spec.supports(cls()._family())]
    for method, spec in lm._METHODS.items():
        for option in spec.options:
            assert (option in names) == (method in supported), (method, option)


def test_a_new_method_is_one_table_entry(monkeypatch):
    seen = {}

    def shrunk_laplace(X, y, family, *, shrink, prior_prec, **common):
        seen["shrink"] = shrink
        return lm.laplace(X, y, family, prior_prec=prior_prec / shrink, **common)

    entry = lm._Method(
        shrunk_laplace, doc='- ``"shrunk"``: Laplace under a prior widened by ``shrink``.',
        options={"shrink": lm._Param(1.0, [Interval(Real, 0, None, closed="neither")],
                                     "float", "Factor of the prior variance.",
                                     keyword="shrink")})
    monkeypatch.setitem(lm._METHODS, "shrunk", entry)

    @lm._glm_estimator(LogisticFamily(), lm._CLASSIFIER_ATTRS_DOC)
    class Shrunk(lm._BaseBinaryClassifier):
        """A classifier of the extended table.

        Parameters
        ----------
        {common_params}
        Attributes
        ----------
        {common_attrs}
        """

        def _family(self):
            return LogisticFamily()

    assert "shrink : float, default=1.0" in Shrunk.__doc__
    assert '``"shrunk"``: Laplace under a prior widened' in Shrunk.__doc__
    X, y = logistic_data(300, [1.0, -0.5], 0.3)[:2]
    with pytest.raises(InvalidParameterError, match="shrink"):
        Shrunk(method="shrunk", shrink=-1.0).fit(X, y)
    fitted = Shrunk(method="shrunk", shrink=4.0).fit(X, y)
    assert seen["shrink"] == 4.0
    wide = BayesianLogisticRegression(prior_scale=2.0, intercept_prior_scale=20.0).fit(X, y)
    np.testing.assert_allclose(fitted.coef_, wide.coef_, rtol=1e-10)
