"""numpydoc validation of the public API: every class, function and public method that the
API reference documents.

The checks (numpydoc's codes) are those that catch a wrong or missing piece of
documentation: an object without a docstring, an undocumented, unknown or misordered
parameter, a parameter without type or description, a function whose return value is not
described, sections out of order, malformed summaries. Style checks that would ask every
docstring for more (an extended summary, an Examples or See Also section, a one-line
summary, a description of every return value) are not enforced.

Implementations of a documented contract (a :class:`~skcoreset.families.Link` or
:class:`~skcoreset.families.Family` subclass overriding one of its base's methods) are
validated through the base's docstring, which documents the parameters once; their own
docstrings say what the implementation computes.
"""

import importlib
import inspect
import pkgutil
import re

import pytest

import skcoreset

pytest.importorskip("numpydoc")
from numpydoc.validate import validate  # noqa: E402

CHECKS = {
    "GL02", "GL03", "GL05", "GL06", "GL07", "GL08",  # layout, sections, docstring exists
    "SS01", "SS02", "SS03", "SS04", "SS05",  # the summary line
    "PR01", "PR02", "PR03", "PR04", "PR05", "PR06", "PR07", "PR08", "PR10",  # parameters
    "RT01", "YD01",  # returns, yields
}

# Modules of the API reference; None: their __all__ (or every public name defined there).
PUBLIC = {
    "skcoreset": None,
    "skcoreset.coreset": ["BaseCoreset"],
    "skcoreset.families": None,
    "skcoreset.pipeline": None,
    "skcoreset.solvers": None,
    "skcoreset.metrics": None,
    "skcoreset.datasets": None,
    "skcoreset.multiclass": None,
    "skcoreset.exceptions": None,
    "skcoreset.formula": None,
    "skcoreset.plotting": None,
}


def _defined_in_skcoreset(obj):
    return getattr(obj, "__module__", "").startswith("skcoreset")


def _public_api():
    """``{import path: object}``: the public classes and functions, and the public methods
    and properties of each class that skcoreset defines (those inherited from scikit-learn
    are scikit-learn's to document), each once."""
    found = {}
    for module_name, names in PUBLIC.items():
        module = importlib.import_module(module_name)
        if names is None:
            names = getattr(module, "__all__", None) or [
                name for name, obj in vars(module).items() if not name.startswith("_")
                and getattr(obj, "__module__", None) == module_name]
        for name in names:
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and _defined_in_skcoreset(obj):
                found[f"{module_name}.{name}"] = obj
    public_classes = {obj for obj in found.values() if inspect.isclass(obj)}
    seen = set()
    for path, cls in list(found.items()):
        if not inspect.isclass(cls):
            continue
        for name in sorted({name for base in cls.__mro__ for name in vars(base)}):
            owner = next(base for base in cls.__mro__ if name in vars(base))
            member = vars(owner)[name]
            if (name.startswith("_") or not _defined_in_skcoreset(owner)
                    or not (inspect.isfunction(member) or isinstance(member, property))
                    or id(member) in seen or _implements(owner, name, public_classes)):
                continue
            seen.add(id(member))
            found[f"{path}.{name}"] = member
    return found


def _implements(owner, name, public_classes):
    """Whether ``owner.name`` implements a method of a public base class (documented
    there)."""
    return any(name in vars(base) for base in owner.__mro__[1:] if base in public_classes)


API = _public_api()


def _is_record(obj):
    """A result read by users, never built by them (a NamedTuple or dataclass): its
    fields are documented as Attributes."""
    return inspect.isclass(obj) and (hasattr(obj, "_fields")
                                     or hasattr(obj, "__dataclass_fields__"))


def test_the_public_api_is_found():
    # a method shared by several classes is checked once, under the first (sorted) of them
    for path in ("skcoreset.BayesianBinaryRegression.predict_proba",
                 "skcoreset.metrics.coreset_quality", "skcoreset.families.Link.inverse",
                 "skcoreset.exceptions.MCMCDiagnosticWarning", "skcoreset.pipeline.Pipeline"):
        assert path in API


@pytest.mark.parametrize("path", sorted(API))
def test_docstring(path):
    errors = [(code, message) for code, message in validate(path)["errors"]
              if code in CHECKS and not (code == "PR01" and _is_record(API[path]))]
    assert errors == []


def _unfilled_placeholders(classes):
    """``{class name: placeholders}`` of the classes whose docstring (or whose own methods'
    docstrings) still hold a ``{name}`` section placeholder."""
    found = {}
    for cls in classes:
        docs = [cls.__doc__ or ""] + [getattr(member, "__doc__", "") or ""
                                      for member in vars(cls).values()
                                      if inspect.isfunction(member)]
        placeholders = sorted({hit for doc in docs for hit in _PLACEHOLDER.findall(doc)})
        if placeholders:
            found[cls.__name__] = placeholders
    return found


_PLACEHOLDER = re.compile(r"\{[a-z_]+\}")


def _every_class_of_the_package():
    for info in pkgutil.walk_packages(skcoreset.__path__, "skcoreset."):
        module = importlib.import_module(info.name)
        yield from (obj for obj in vars(module).values()
                    if inspect.isclass(obj) and obj.__module__ == info.name)


def test_no_docstring_placeholder_is_left_unfilled():
    # every class of every module, exported or not (a constructor whose {common_params}
    # no decorator filled fails here, by name)
    assert _unfilled_placeholders(_every_class_of_the_package()) == {}

    class NewCoreset(skcoreset.UniformCoreset):
        """A constructor that forgot its sections.

        Parameters
        ----------
        {common_params}
        """

    assert _unfilled_placeholders([NewCoreset]) == {"NewCoreset": ["{common_params}"]}
