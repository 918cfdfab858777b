"""The method table of skcoreset.linear_model declares each fitting method once: the
estimators' parameters, their constraints, their docs and their written ``__init__``
follow from it."""

import inspect
import re
import textwrap
from numbers import Integral, Real
from typing import Literal

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from skcoreset import linear_model
from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, BayesianProbitRegression)
from skcoreset._inference import laplace
from skcoreset._sklearn_compat import Interval, StrOptions
from skcoreset._typing import FitMethod, RandomStateLike
from skcoreset.families import LogisticFamily
from skcoreset.linear_model._binary import _CLASSIFIER_ATTRS_DOC, _BaseBinaryClassifier
from skcoreset.linear_model._codegen import main as _codegen_main
from skcoreset.linear_model._codegen import stale_estimators, write
from skcoreset.linear_model._methods import (ESTIMATORS, GENERATED_BEGIN, GENERATED_END,
                                             METHODS, Method, Param, glm_params,
                                             annotation_of, estimator_params, glm_estimator,
                                             render_init)

from ..conftest import logistic_data

# every public estimator, from the package's exports: a new one is checked without a list
ESTIMATORS_UNDER_TEST = [getattr(linear_model, name) for name in linear_model.__all__]


def test_every_public_estimator_is_made_from_the_table():
    assert set(ESTIMATORS_UNDER_TEST) <= set(ESTIMATORS)
    assert {BayesianLogisticRegression, BayesianProbitRegression, BayesianPoissonRegression,
            BayesianNegativeBinomialRegression} <= set(ESTIMATORS_UNDER_TEST)


@pytest.mark.parametrize("cls", ESTIMATORS_UNDER_TEST)
def test_parameters_constraints_and_docs_agree(cls):
    names = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
    assert set(cls._parameter_constraints) == set(names)
    assert cls().get_params() == {name: getattr(cls(), name) for name in names}
    documented = [name for name in names if f"\n    {name} : " in cls.__doc__]
    assert documented == names  # every parameter, in signature order
    supported = [method for method, spec in METHODS.items()
                 if spec.supports is None or spec.supports(cls()._family())]
    for method, spec in METHODS.items():
        for option in spec.options:
            assert (option in names) == (method in supported), (method, option)


def _shrunk_entry():
    def shrunk_laplace(X, y, family, *, shrink, prior_prec, **common):
        shrunk_laplace.seen = shrink
        return laplace(X, y, family, prior_prec=prior_prec / shrink, **common)

    return Method(
        shrunk_laplace, doc='- ``"shrunk"``: Laplace under a prior widened by ``shrink``.',
        options={"shrink": Param(1.0, [Interval(Real, 0, None, closed="neither")],
                                 "float", "Factor of the prior variance.", keyword="shrink")})


_DOC = """A classifier of the extended table.

        Parameters
        ----------
        {common_params}
        Attributes
        ----------
        {common_attrs}
        """


def _class_from_table(name, base, family, attrs_doc, family_params=None):
    """A class whose ``__init__`` is the source the table renders for it: what
    ``python -m skcoreset.linear_model._codegen`` would write into its module."""
    params = {**(family_params or {}), **glm_params(family)}
    namespace = {"Literal": Literal, "FitMethod": FitMethod,
                 "RandomStateLike": RandomStateLike}
    exec(textwrap.dedent(render_init(params)), namespace)
    cls = type(name, (base,), {"__doc__": _DOC, "__init__": namespace["__init__"],
                               "_family": lambda self: family})
    return glm_estimator(family, attrs_doc, **(family_params or {}))(cls)


def test_a_new_method_is_one_table_entry(monkeypatch):
    entry = _shrunk_entry()
    monkeypatch.setitem(METHODS, "shrunk", entry)
    Shrunk = _class_from_table("Shrunk", _BaseBinaryClassifier, LogisticFamily(),
                               _CLASSIFIER_ATTRS_DOC)
    # the options of a new method come after those of the methods before it in the table
    names = list(inspect.signature(Shrunk.__init__).parameters)
    assert names[-3:] == ["random_state", "shrink", "verbose"]
    assert "shrink : float, default=1.0" in Shrunk.__doc__
    assert '``"shrunk"``: Laplace under a prior widened' in Shrunk.__doc__
    X, y = logistic_data(300, [1.0, -0.5], 0.3)[:2]
    with pytest.raises(InvalidParameterError, match="shrink"):
        Shrunk(method="shrunk", shrink=-1.0).fit(X, y)
    fitted = Shrunk(method="shrunk", shrink=4.0).fit(X, y)
    assert entry.fit.seen == 4.0
    wide = BayesianLogisticRegression(prior_scale=2.0, intercept_prior_scale=20.0).fit(X, y)
    np.testing.assert_allclose(fitted.coef_, wide.coef_, rtol=1e-10)
    Shrunk(method="shrunk").fit(X, y)  # every other parameter at its table default
    ESTIMATORS.pop(Shrunk)


def test_the_written_signatures_are_the_tables():
    stale = stale_estimators()
    assert not stale, (
        f"the __init__ of {', '.join(cls.__name__ for cls in stale)} differ from the method "
        "table: run python -m skcoreset.linear_model._codegen")
    assert set(ESTIMATORS) >= set(ESTIMATORS_UNDER_TEST)


def test_a_new_option_names_every_estimator_to_regenerate(monkeypatch, capsys):
    monkeypatch.setitem(METHODS, "shrunk", _shrunk_entry())
    stale = stale_estimators()
    assert set(stale) == set(ESTIMATORS_UNDER_TEST)  # all of them at once
    assert _codegen_main(["--check"]) == 1
    printed = capsys.readouterr().out
    assert all(cls.__name__ in printed for cls in ESTIMATORS_UNDER_TEST)


def test_codegen_writes_the_rendered_init_and_nothing_else(monkeypatch, tmp_path):
    monkeypatch.setitem(METHODS, "shrunk", _shrunk_entry())
    stale = stale_estimators()
    copies = {}
    for cls, (path, rendered) in stale.items():
        copy = copies.setdefault(path, tmp_path / path.name)
        if not copy.exists():
            copy.write_text(path.read_text())
        stale[cls] = (copy, rendered)
    write(stale)
    for path, copy in copies.items():  # the same modules outside the generated lines
        assert _without_generated(copy.read_text()) == _without_generated(path.read_text())
    for cls, (copy, rendered) in stale.items():
        assert rendered in copy.read_text()


def _without_generated(source):
    return re.sub(f"{re.escape(GENERATED_BEGIN)}.*?{re.escape(GENERATED_END)}", "", source,
                  flags=re.DOTALL)


@pytest.mark.parametrize("constraints, annotation", [
    ([Interval(Real, 0, None, closed="neither")], "float"),
    ([Interval(Integral, 1, None, closed="left"), None], "int | None"),
    ([StrOptions({"b", "a"})], 'Literal["a", "b"]'),
    ([Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
     'float | Literal["auto"]'),
    (["boolean"], "bool"),
    (["random_state"], "RandomStateLike"),
    ([Integral, None], "int | None"),
])
def test_annotations_follow_from_the_constraints(constraints, annotation):
    assert annotation_of(Param(None, constraints, "", "")) == annotation


def test_rendered_signatures_fit_the_line_length():
    for cls in ESTIMATORS_UNDER_TEST:
        lines = render_init(estimator_params(cls)).split("\n")
        assert max(map(len, lines)) <= 99, cls


def test_signatures_are_explicit_and_typed():
    """Type checkers and IDEs read the signature from the source: every parameter is a
    typed keyword-only argument of a written ``__init__``."""
    for cls in ESTIMATORS_UNDER_TEST:
        signature = inspect.signature(cls.__init__)
        for name, param in signature.parameters.items():
            if name != "self":
                assert param.kind is inspect.Parameter.KEYWORD_ONLY, (cls, name)
                assert param.annotation is not inspect.Parameter.empty, (cls, name)
        assert "def __init__" in inspect.getsource(
            next(base for base in cls.__mro__ if "__init__" in vars(base)))
