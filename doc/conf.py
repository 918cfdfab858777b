"""Sphinx configuration of the skcoreset documentation.

Build (executing the example gallery, as CI does: about two minutes of examples)::

    sphinx-build -W -b html doc doc/_build/html

Build without running the examples (placeholder thumbnails, no figures; a quick check of
the references)::

    sphinx-build -W -D plot_gallery=0 -b html doc doc/_build/html

The network is not needed, to build or to read: no intersphinx inventories are fetched, so
references to numpy, scipy, scikit-learn and Python objects render as plain code, and math is
converted to MathML at build time (no MathJax from a CDN).
"""

import os
import re
import sys
import warnings
from pathlib import Path

DOC_DIR = Path(__file__).resolve().parent
# _gallery_order, the mathml extension; and the checkout's own package before any installed
# one (a git worktree documents its own code, not that of the editable install)
sys.path[:0] = [str(DOC_DIR), str(DOC_DIR / "sphinxext"), str(DOC_DIR.parent)]

import skcoreset  # noqa: E402

# -- Project -------------------------------------------------------------------------------
project = "skcoreset"
author = "skcoreset developers"
copyright = "skcoreset developers, BSD-3-Clause"
release = skcoreset.__version__
version = ".".join(release.split(".")[:2])

# -- General -------------------------------------------------------------------------------
html_math_renderer = "mathml"
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "mathml",  # doc/sphinxext/mathml.py: MathML at build time, readable offline
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "generated/*.examples", "auto_examples/*.ipynb",
                    "auto_examples/*.py", "auto_examples/*.md5", "auto_examples/*.zip",
                    "auto_examples/*.json", "**.ipynb_checkpoints"]
source_suffix = {".rst": "restructuredtext"}
root_doc = "index"
default_role = "literal"  # `x` renders as code, never as a (possibly broken) reference
pygments_style = "sphinx"
nitpicky = False

# autodoc / autosummary: one stub page per public name, generated into doc/generated/
autosummary_generate = True
autosummary_imported_members = True
# "Bases:" lines name public classes only (``_public_bases`` below)
autodoc_default_options = {"members": True, "inherited-members": True,
                           "show-inheritance": True}
autodoc_typehints = "none"
autoclass_content = "class"
autodoc_member_order = "groupwise"

# numpydoc: methods are listed by the class template, not by numpydoc (as in
# scikit-learn-contrib projects), so inherited sklearn docstrings cannot break the build
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# -- HTML ----------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"skcoreset {release}"
html_static_path = []
html_show_sourcelink = False
html_theme_options = {
    "navbar_end": ["navbar-icon-links"],
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"index": []}

# -- sphinx-gallery ------------------------------------------------------------------------
# ``-D plot_gallery=0`` builds the gallery pages from the scripts' text without running them.
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",  # execute only plot_*.py
    "ignore_pattern": r"(^|/)quickstart\.py$|__init__\.py$",
    "within_subsection_order": "_gallery_order.ExampleOrder",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "backreferences_dir": "generated",
    "doc_module": ("skcoreset",),
    "reference_url": {"skcoreset": None},
    "show_memory": False,
    "write_computation_times": False,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
}

os.environ.setdefault("MPLBACKEND", "Agg")
warnings.filterwarnings("ignore", category=UserWarning,
                        message="Matplotlib is currently using agg")


# -- Every public name must be in the API reference -----------------------------------------
PUBLIC_MODULES = ["skcoreset", "skcoreset.coreset", "skcoreset.pipeline", "skcoreset.solvers",
                  "skcoreset.metrics", "skcoreset.datasets", "skcoreset.multiclass",
                  "skcoreset.exceptions", "skcoreset.formula", "skcoreset.plotting"]


def _check_api_reference(app):
    """Warn (an error under ``-W``) for a public name missing from ``api.rst``.

    Public names are the ``__all__`` of the public modules (or, without one, the public
    classes and functions a module defines); a name is covered when it is listed in an
    autosummary table of ``api.rst``.
    """
    import importlib
    import re

    from sphinx.util import logging

    logger = logging.getLogger("skcoreset.api_check")
    text = (DOC_DIR / "api.rst").read_text()
    listed = set()
    module = None
    for line in text.splitlines():
        match = re.match(r"\.\. currentmodule:: (\S+)", line)
        if match:
            module = match.group(1)
        elif re.match(r"   [A-Za-z_]\w*$", line) and module is not None:
            listed.add(f"{module}.{line.strip()}")
    listed_short = {name.rsplit(".", 1)[1] for name in listed}
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        public = getattr(module, "__all__", None)
        if public is None:  # no __all__: the public classes and functions it defines
            public = [name for name, obj in vars(module).items()
                      if not name.startswith("_") and callable(obj)
                      and getattr(obj, "__module__", None) == module_name]
        for name in public:
            if name.startswith("__"):
                continue
            if name not in listed_short:
                logger.warning(f"{module_name}.{name} is public but missing from "
                               "doc/api.rst", type="skcoreset", subtype="api")


def _defining_module(obj):
    """Module that defines a class member (function, property, classmethod, ...)."""
    for attr in ("__func__", "fget"):
        obj = getattr(obj, attr, None) or obj
    module = getattr(obj, "__module__", None)
    if module is None and hasattr(obj, "__objclass__"):  # C methods, e.g. of ndarray
        module = getattr(obj.__objclass__, "__module__", None)
    return module


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Document the members defined by skcoreset and those inherited from scikit-learn
    (``get_params``, ``set_params``, ``fit_transform``, a pipeline's ``predict``, ...): they
    are part of every estimator's API. The methods of ``numpy.ndarray`` (the base of
    :class:`~skcoreset.WeightedSubset`) are documented by NumPy."""
    if what != "class" or skip:
        return None
    module = _defining_module(obj)
    if isinstance(module, str) and not module.startswith(("skcoreset", "sklearn")):
        return True
    if module is None and not callable(obj):
        return True  # data attributes inherited from foreign bases (ndarray.T, ...)
    return None


_FOREIGN_ROLE = re.compile(r":(?:ref|term|doc):`([^`<]*?)\s*(?:<[^`>]*>)?`")


def _plain_foreign_references(app, what, name, obj, options, lines):
    """The docstrings of methods inherited from scikit-learn cite its user guide and glossary
    (``:ref:``, ``:term:``, ``:doc:``), which do not exist here: keep the link text only."""
    if not (isinstance(_defining_module(obj), str)
            and _defining_module(obj).startswith("sklearn")):
        return
    for i, line in enumerate(lines):
        lines[i] = _FOREIGN_ROLE.sub(lambda match: match.group(1) or "", line)


def _documented_names():
    """``{class: "skcoreset.module.Name"}`` for the classes of the public modules' ``__all__``,
    under the first (shortest) public name, the one their API page has."""
    import importlib

    names = {}
    for module_name in PUBLIC_MODULES + ["skcoreset.families"]:
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name, None)
            if isinstance(obj, type):
                names.setdefault(obj, f"{module_name}.{name}")
    return names


def _public_bases(app, name, obj, options, bases):
    """Show public bases only: a private or internal base (``_HilbertCoreset``,
    ``LikelihoodCoreset``, ``_BaseBayesianGLM``, scikit-learn's ``_SetOutputMixin``, ...) is
    replaced by its own bases, recursively; skcoreset's public bases link to their pages
    under their public name (``skcoreset.coreset.BaseCoreset``, not ``..._base.BaseCoreset``)."""
    documented = _documented_names()

    def public(base):
        if base in documented:
            return [f":py:class:`~{documented[base]}`"]
        module = getattr(base, "__module__", "") or ""
        internal = base.__name__.startswith("_") or module.startswith("skcoreset")
        if not internal:
            return [base]
        return [item for parent in base.__bases__ for item in public(parent)]

    shown = []
    for base in bases:
        for item in public(base):
            if item not in shown:
                shown.append(item)
    if len(shown) > 1 and object in shown:
        shown.remove(object)
    bases[:] = shown


_SHAPE = re.compile(r"shape \(([^)]*)\)")
_FITTED_NAME = re.compile(r"\b([A-Za-z]\w*_)(?=\s*(,|$))")


def _escape_shape_names(app, what, name, obj, options, lines):
    """``ndarray of shape (n_features_in_,)`` in a numpydoc type line is prose, but reST reads
    a word ending in ``_`` as a hyperlink reference ("Unknown target name"); write such
    fitted-attribute names inside ``shape (...)`` as code (scikit-learn writes
    ``(`n_features_in_`,)`` in its docstrings for the same reason)."""
    def escape(match):
        return "shape (" + _FITTED_NAME.sub(r"``\1``", match.group(1)) + ")"

    for i, line in enumerate(lines):
        if "shape (" in line:
            lines[i] = _SHAPE.sub(escape, line)


def setup(app):
    app.connect("autodoc-process-docstring", _escape_shape_names)
    app.connect("autodoc-process-docstring", _plain_foreign_references)
    app.connect("builder-inited", _check_api_reference)
    app.connect("autodoc-skip-member", _skip_foreign_member)
    app.connect("autodoc-process-bases", _public_bases)
