"""The package's imports run one way: no cycles, no import of a higher layer (lazy imports
inside functions included), and one inference surface (``skcoreset._inference`` itself).

Read from the source with ``ast``, so an import that only runs on some code path counts.
"""

import ast
import pathlib

import pytest

import skcoreset

# The layers, lowest first, named by the package's top-level modules and subpackages. A
# module may import from its own layer and the layers below, never from one above.
LAYERS = [
    # plain helpers: numbers, docstrings, progress lines, the public warnings, test tools,
    # the type aliases of the public signatures
    {"_numbers", "_docstrings", "_progress", "exceptions", "_testing", "_typing", "_warnings"},
    # the measured rule of which route to the exact posterior is faster
    {"_advice"},
    # input checks and the one place that touches scikit-learn's private helpers
    {"_validation", "_sklearn_compat", "_atomic"},
    # dense factorisations, the linear predictor, where rows are stored, PSIS-LOO
    {"_linalg", "_design", "_backend", "_psis"},
    # posterior objects and what the estimators compute from them or from dask rows
    {"_posterior", "_summary", "_arviz", "_dask_predict"},
    # likelihoods in the linear predictor; sparse vector-sum solvers
    {"families", "solvers"},
    {"datasets"},
    # one function per fitting method
    {"_inference"},
    # coreset constructors
    {"coreset"},
    # the estimators
    {"linear_model"},
    {"multiclass"},
    {"pipeline", "metrics", "formula"},
    # pictures of the estimators, the coresets and the metrics
    {"plotting"},
    # the top-level package, which re-exports the public classes
    {"skcoreset"},
]
LAYER_OF = {name: rank for rank, names in enumerate(LAYERS) for name in names}

ROOT = pathlib.Path(skcoreset.__file__).parent.parent


def _modules():
    """``{dotted module name: (path, is_package)}`` of every module of the package."""
    modules = {}
    for path in (ROOT / "skcoreset").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


MODULES = _modules()


def _imports(path, module, is_package):
    """``(imported module, imported names)`` of every import statement in a file, with
    relative imports resolved."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, ()
        elif isinstance(node, ast.ImportFrom):
            name = node.module
            if node.level:
                name = ".".join(base[:len(base) - node.level + 1] + ([name] if name else []))
            yield name, tuple(alias.name for alias in node.names)


def _graph():
    """Module -> the package's modules it imports (``from package import name`` counts
    the package, and the submodule ``package.name`` if there is one)."""
    graph = {}
    for module, (path, is_package) in MODULES.items():
        targets = set()
        for name, names in _imports(path, module, is_package):
            targets.add(name)
            targets.update(f"{name}.{n}" for n in names)
        graph[module] = {name for name in targets if name in MODULES and name != module}
    return graph


def _layer_name(module):
    """The top-level module or subpackage a module belongs to (``skcoreset`` for the
    package's ``__init__``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_module_has_a_layer():
    unplaced = sorted({_layer_name(module) for module in MODULES} - set(LAYER_OF))
    assert unplaced == [], f"add these to LAYERS in {__file__}: {unplaced}"


def test_no_import_cycles():
    """No module of the package imports, even inside a function, one that imports it back
    (directly or through others)."""
    graph = _graph()

    def reachable(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        return seen

    cycles = sorted(module for module in graph if module in reachable(module))
    assert cycles == []


def test_no_import_from_a_higher_layer():
    upward = sorted(
        f"{module} imports {name}"
        for module, names in _graph().items() for name in names
        if LAYER_OF[_layer_name(name)] > LAYER_OF[_layer_name(module)])
    assert upward == []


def test_inference_is_used_through_its_package_only():
    """Outside ``skcoreset._inference`` nothing imports one of its submodules: what the
    rest of the package needs is exported by ``skcoreset._inference`` itself."""
    reaching_in = sorted(
        f"{module} imports {name}"
        for module, (path, is_package) in MODULES.items()
        if _layer_name(module) != "_inference"
        for name, _ in _imports(path, module, is_package)
        if name.startswith("skcoreset._inference."))
    assert reaching_in == []


def test_the_inference_surface_exports_what_it_declares():
    from skcoreset import _inference

    for name in _inference.__all__:
        assert hasattr(_inference, name), name


@pytest.mark.parametrize("layer", ["families", "_inference"])
def test_families_and_inference_know_nothing_of_the_estimators(layer):
    """The lower half never imports scikit-learn's estimator machinery (families and
    inference are plain functions of arrays; scikit-learn's exceptions are fine)."""
    offending = sorted(
        f"{module} imports {name}"
        for module, (path, is_package) in MODULES.items() if _layer_name(module) == layer
        for name, _ in _imports(path, module, is_package)
        if name.startswith(("sklearn.base", "sklearn.pipeline", "sklearn.linear_model")))
    assert offending == []
