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


def _shrunk_entry():
    def shrunk_laplace(X, y, family, *, shrink, prior_prec, **common):
        shrunk_laplace.seen = shrink
        return lm.laplace(X, y, family, prior_prec=prior_prec / shrink, **common)

    return lm._Method(
        shrunk_laplace, doc='- ``"shrunk"``: Laplace under a prior widened by ``shrink``.',
        options={"shrink": lm._Param(1.0, [Interval(Real, 0, None, closed="neither")],
                                     "float", "Factor of the prior variance.",
                                     keyword="shrink")})


_DOC = """A classifier of the extended table.

        Parameters
        ----------
        {common_params}
        Attributes
        ----------
        {common_attrs}
        """


def test_a_new_method_is_one_table_entry_and_its_options_in_the_signatures(monkeypatch):
    entry = _shrunk_entry()
    monkeypatch.setitem(lm._METHODS, "shrunk", entry)

    # the options of a new method come after those of the methods before it in the table
    @lm._glm_estimator(LogisticFamily(), lm._CLASSIFIER_ATTRS_DOC)
    class Shrunk(lm._BaseBinaryClassifier):
        __doc__ = _DOC

        def __init__(self, *, method="laplace", prior_scale=1.0, intercept_prior_scale=10.0,
                     fit_intercept=True, tol=1e-10, max_iter=500, kl_beta=None,
                     pass_degree=2, pass_radius="auto", sampler="nuts", n_draws=4000,
                     n_burnin=None, thin=None, n_walkers=None, n_chains=4, n_jobs=None,
                     random_state=None, shrink=1.0, verbose=0):
            super().__init__(
                method=method, prior_scale=prior_scale,
                intercept_prior_scale=intercept_prior_scale, fit_intercept=fit_intercept,
                tol=tol, max_iter=max_iter, kl_beta=kl_beta, pass_degree=pass_degree,
                pass_radius=pass_radius, sampler=sampler, n_draws=n_draws, n_burnin=n_burnin,
                thin=thin, n_walkers=n_walkers, n_chains=n_chains, n_jobs=n_jobs,
                random_state=random_state, verbose=verbose)
            self.shrink = shrink

        def _family(self):
            return LogisticFamily()

    assert "shrink : float, default=1.0" in Shrunk.__doc__
    assert '``"shrunk"``: Laplace under a prior widened' in Shrunk.__doc__
    X, y = logistic_data(300, [1.0, -0.5], 0.3)[:2]
    with pytest.raises(InvalidParameterError, match="shrink"):
        Shrunk(method="shrunk", shrink=-1.0).fit(X, y)
    fitted = Shrunk(method="shrunk", shrink=4.0).fit(X, y)
    assert entry.fit.seen == 4.0
    wide = BayesianLogisticRegression(prior_scale=2.0, intercept_prior_scale=20.0).fit(X, y)
    np.testing.assert_allclose(fitted.coef_, wide.coef_, rtol=1e-10)


def test_an_option_missing_from_a_signature_fails_at_class_creation(monkeypatch):
    monkeypatch.setitem(lm._METHODS, "shrunk", _shrunk_entry())
    # the estimators' signatures lack the new option: defining one raises, naming it
    with pytest.raises(TypeError, match=r"Shrunk.__init__ .*missing \['shrink'\]"):
        @lm._glm_estimator(LogisticFamily(), lm._CLASSIFIER_ATTRS_DOC)
        class Shrunk(lm._BaseBinaryClassifier):
            __doc__ = _DOC


@pytest.mark.parametrize("init, message", [
    ("def __init__(self, *, link='log', verbose=0): pass", r"missing \['method'"),
    ("def __init__(self, *, link='log', method='laplace', bogus=1, prior_scale=1.0): pass",
     r"missing \['intercept_prior_scale', .*'verbose'\]; unexpected \['bogus'\]"),
    ("def __init__(self, *, method='laplace', link='log'): pass",
     r"missing \['prior_scale'.*"),
])
def test_a_signature_unlike_the_table_fails_at_class_creation(init, message):
    namespace = {}
    exec(init, namespace)
    with pytest.raises(TypeError, match=message):
        lm._glm_estimator(lm.PoissonFamily(), lm._COMMON_ATTRS_DOC, link=lm._Param(
            "log", [], "", ""))(type("Counts", (lm._BaseCountRegression,), {
                "__doc__": _DOC, "__init__": namespace["__init__"]}))


@pytest.mark.parametrize("change, message", [
    ({"prior_scale": 2.0}, "'prior_scale' has default 2.0, the method table 1.0"),
    ({"max_iter": 500.0}, "'max_iter' has default 500.0, the method table 500"),
])
def test_a_default_unlike_the_table_fails_at_class_creation(change, message):
    signature = inspect.signature(BayesianLogisticRegression.__init__)
    parameters = [param.replace(default=change.get(name, param.default))
                  for name, param in signature.parameters.items()]

    def __init__(self, **params):
        pass

    __init__.__signature__ = signature.replace(parameters=parameters)
    with pytest.raises(TypeError, match=message):
        lm._glm_estimator(LogisticFamily(), lm._CLASSIFIER_ATTRS_DOC)(type(
            "Changed", (lm._BaseBinaryClassifier,), {"__doc__": _DOC, "__init__": __init__}))


def test_signatures_are_explicit_and_typed():
    """Type checkers and IDEs read the signature from the source: every parameter is a
    typed keyword-only argument of a written ``__init__``."""
    for cls in ESTIMATORS:
        signature = inspect.signature(cls.__init__)
        for name, param in signature.parameters.items():
            if name != "self":
                assert param.kind is inspect.Parameter.KEYWORD_ONLY, (cls, name)
                assert param.annotation is not inspect.Parameter.empty, (cls, name)
        assert "def __init__" in inspect.getsource(
            next(base for base in cls.__mro__ if "__init__" in vars(base)))
