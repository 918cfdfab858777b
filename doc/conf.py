"""Sphinx configuration of the skcoreset documentation.

Build (executing the example gallery)::

    sphinx-build -W -b html doc doc/_build/html

Build without running the examples (what CI does, to catch broken references fast)::

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

import skcoreset

DOC_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(DOC_DIR), str(DOC_DIR / "sphinxext")]  # _gallery_order, the mathml extension

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
autodoc_default_options = {"members": True, "inherited-members": True,
                           "show-inheritance": False}
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
                  "skcoreset.metrics", "skcoreset.datasets"]


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
    """Document only members defined by skcoreset: the methods a class inherits from
    scikit-learn's mixins or from ``numpy.ndarray`` are documented there (and their
    docstrings reference labels of those projects' docs, which would break ``-W``)."""
    if what != "class" or skip:
        return None
    module = _defining_module(obj)
    if isinstance(module, str) and not module.startswith("skcoreset"):
        return True
    if module is None and not callable(obj):
        return True  # data attributes inherited from foreign bases (ndarray.T, ...)
    return None


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
    app.connect("builder-inited", _check_api_reference)
    app.connect("autodoc-skip-member", _skip_foreign_member)
