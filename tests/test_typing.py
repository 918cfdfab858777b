"""The package ships type hints (PEP 561): every public signature is annotated, and user
code written against the API type-checks with mypy."""

import importlib
import inspect
import textwrap

import pytest

PUBLIC_MODULES = ["skcoreset", "skcoreset.coreset", "skcoreset.datasets",
                  "skcoreset.exceptions", "skcoreset.families", "skcoreset.linear_model",
                  "skcoreset.metrics", "skcoreset.multiclass", "skcoreset.pipeline",
                  "skcoreset.solvers", "skcoreset.formula"]


def _own(obj):
    return getattr(obj, "__module__", "").startswith("skcoreset")


def _public_callables():
    """(qualified name, function) of every public function, and every public method,
    property and ``__init__`` that skcoreset defines on a public class."""
    seen = {}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None) or [
            name for name, obj in vars(module).items()
            if not name.startswith("_") and getattr(obj, "__module__", None) == module_name]
        for name in names:
            obj = getattr(module, name)
            if inspect.isfunction(obj) and _own(obj):
                seen[f"{obj.__module__}.{obj.__qualname__}"] = obj
            if not inspect.isclass(obj) or not _own(obj):
                continue
            for klass in obj.__mro__:
                if not _own(klass):
                    continue
                for attr, value in vars(klass).items():
                    if attr.startswith("_") and attr != "__init__":
                        continue
                    if isinstance(value, property):
                        value = value.fget
                    elif isinstance(value, (staticmethod, classmethod)):
                        value = value.__func__
                    else:  # available_if descriptors hold the method as ``fn``
                        value = getattr(value, "fn", value)
                    if inspect.isfunction(value) and _own(value):
                        seen[f"{klass.__module__}.{klass.__qualname__}.{attr}"] = value
    return seen


def test_the_package_is_marked_typed():
    from importlib.resources import files

    assert files("skcoreset").joinpath("py.typed").is_file()


def test_every_public_signature_is_annotated():
    callables = _public_callables()
    assert len(callables) > 100  # the walk found the API
    incomplete = []
    for name, function in callables.items():
        signature = inspect.signature(function)
        params = list(signature.parameters.values())
        if params and params[0].name in ("self", "cls"):
            params = params[1:]
        missing = [param.name for param in params
                   if param.annotation is inspect.Parameter.empty]
        if signature.return_annotation is inspect.Signature.empty:
            missing.append("return")
        if missing:
            incomplete.append(f"{name}: {', '.join(missing)}")
    assert not incomplete, "unannotated:\n" + "\n".join(incomplete)


USER_SCRIPT = '''
import numpy as np
from sklearn.model_selection import cross_val_score

from skcoreset import (BayesianLogisticRegression, BayesianNegativeBinomialRegression,
                       BayesianPoissonRegression, SensitivityCoreset, UniformCoreset)
from skcoreset.datasets import make_rare_events
from skcoreset.metrics import coreset_quality
from skcoreset.pipeline import make_pipeline

X, y = make_rare_events(n_samples=500, n_features=5, random_state=0)
clf = BayesianLogisticRegression(method="kl_proximal", prior_scale=2.0, kl_beta=0.5,
                                 random_state=0)
fitted: BayesianLogisticRegression = clf.fit(X, y)
proba, std = fitted.predict_proba(X, return_std=True)
labels = fitted.predict(X)
accuracy: float = fitted.score(X, y)
lower, upper = fitted.credible_interval(level=0.9)
counts = BayesianPoissonRegression(link="log", method="pass_glm").fit(X, y + 1)
mean = counts.predict(X, exposure=np.ones(len(y)))
draws = counts.sample_y(X, n_draws=10, random_state=0)
nb = BayesianNegativeBinomialRegression(alpha=0.5).fit(X, y, offset=np.zeros(len(y)))
low, high = nb.alpha_interval(0.9)
subset = SensitivityCoreset(M=100, random_state=0).fit(X, y)
pipe = make_pipeline(UniformCoreset(M=200, random_state=0), BayesianLogisticRegression())
scores = cross_val_score(pipe, X, y, cv=2)
quality = coreset_quality(subset, X, y)
'''


MISTAKES = {  # a line of user code -> what mypy says of it
    "BayesianLogisticRegression(prior_scal=2.0)": 'Unexpected keyword argument "prior_scal"',
    'BayesianLogisticRegression(method="nuts")': 'Argument "method"',
    "BayesianLogisticRegression(2.0)": "Too many positional arguments",
    "BayesianPoissonRegression().fit(X, y, exposre=y)": 'Unexpected keyword argument "exposre"',
    "UniformCoreset(M=10, stratfy=False)": 'Unexpected keyword argument "stratfy"',
    "BayesianLogisticRegression().fit(X, y).predict_proba(X, return_sd=True)":
        'Unexpected keyword argument "return_sd"',
}


@pytest.fixture(scope="module")
def mypy_report(tmp_path_factory):
    """mypy's report (``--strict``, as a user's CI may run it) on the user script and on one
    file per mistake, from one run (the run reads numpy's stubs and the package once:
    about 15 s)."""
    api = pytest.importorskip("mypy.api")
    folder = tmp_path_factory.mktemp("user_code")
    files = {"user_script.py": USER_SCRIPT}
    header = ("import numpy as np\nfrom skcoreset import (BayesianLogisticRegression, "
              "BayesianPoissonRegression, UniformCoreset)\nX = np.ones((3, 2))\n"
              "y = np.ones(3)\n")
    for number, line in enumerate(MISTAKES):
        files[f"mistake_{number}.py"] = header + line + "\n"
    for name, source in files.items():
        (folder / name).write_text(textwrap.dedent(source))
    stdout, stderr, _ = api.run(
        [str(folder / name) for name in files]
        # errors in the package itself are silenced, as they are for an installed package
        + ["--cache-dir", str(folder / "cache"), "--strict", "--follow-imports", "silent",
           "--ignore-missing-imports",
           "--no-error-summary", "--hide-error-context", "--no-pretty"])
    report = {name: [] for name in files}
    for line in (stdout + stderr).splitlines():
        name = line.split(":", 1)[0].rsplit("/", 1)[-1]
        report.setdefault(name, []).append(line)
    return report


def test_the_user_script_runs():
    exec(compile(textwrap.dedent(USER_SCRIPT), "user_script.py", "exec"), {})


def test_user_code_type_checks(mypy_report):
    assert mypy_report["user_script.py"] == []
    assert set(mypy_report) == {"user_script.py"} | {
        f"mistake_{number}.py" for number in range(len(MISTAKES))}  # nothing else reported


@pytest.mark.parametrize("number, line", list(enumerate(MISTAKES)))
def test_mistakes_in_user_code_are_reported(mypy_report, number, line):
    errors = [error for error in mypy_report[f"mistake_{number}.py"] if ": error:" in error]
    assert errors and MISTAKES[line] in errors[0], errors
