"""The worked examples of doc/extending.rst run here, so the page cannot rot: each adds a link,
a family, a coreset constructor or an inference method in one file, and checks itself
against an independent reference (statsmodels, uniform rows, weighted rows)."""

import importlib.util
import sys
from pathlib import Path

import pytest

from skcoreset.families import FAMILIES
from skcoreset.linear_model._codegen import stale_estimators
from skcoreset.linear_model._methods import ESTIMATORS, METHODS

EXAMPLES = Path(__file__).resolve().parents[1] / "doc" / "extending"

# Lines an extension takes in its one file, above its "use" section (the code a
# contributor writes, docstrings included), as measured when the page was written: the
# extension points stay one small file each, with no registry line elsewhere.
EXTENSION_LINES = {"link.py": 36, "family.py": 125, "constructor.py": 43, "method.py": 84}


def _extension_lines(path):
    lines = path.read_text().splitlines()
    return next(number for number, line in enumerate(lines) if line.startswith("# --- 3. use")
                or line.startswith("# --- 2. use"))


def test_every_example_is_listed_and_documented():
    assert sorted(path.name for path in EXAMPLES.glob("*.py")) == sorted(EXTENSION_LINES)
    page = (EXAMPLES.parent / "extending.rst").read_text()
    for name, lines in EXTENSION_LINES.items():
        assert f"extending/{name}" in page, name
        # a grown example is a sign that an extension point needs more than it should
        assert _extension_lines(EXAMPLES / name) <= lines + 5, name


@pytest.mark.parametrize("name", sorted(EXTENSION_LINES))
def test_example_runs(name):
    tables = (METHODS, ESTIMATORS, FAMILIES)
    before = [dict(table) for table in tables]
    # imported as a module of its own file, so that its source (the written __init__) is found
    module_name = f"skcoreset_extending_{name[:-3]}"
    spec = importlib.util.spec_from_file_location(module_name, EXAMPLES / name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
        module.main()
        # an estimator an example declares has the __init__ the method table renders (with
        # a new method's option, the package's own are stale until _codegen writes them)
        stale = [cls.__name__ for cls in stale_estimators() if cls.__module__ == module_name]
        assert not stale, stale
    finally:
        for table, kept in zip(tables, before):  # the registries as they were
            for key in set(table) - set(kept):
                table.pop(key)
        sys.modules.pop(module_name)
