"""The one way the package issues warnings: attributed to the user's line.

A warning raised inside ``fit`` is several calls deep in skcoreset and behind
scikit-learn's wrappers (``fit_context`` in ``sklearn/base.py``, a ``GridSearchCV``), so
no fixed ``stacklevel`` points at the caller's line from every path. :func:`warn` skips
every frame of skcoreset and of the libraries it calls back through (scikit-learn,
SciPy, dask, joblib, ``contextlib``): what Python 3.12's
``warnings.warn(skip_file_prefixes=...)`` does, computed by walking the stack on 3.11.
"""

import contextlib
import os
import sys
import warnings


def _package_dir(module):
    return os.path.dirname(os.path.abspath(module.__file__)) + os.sep


def _library_dirs():
    """Directories of the libraries whose frames are not the user's (those installed)."""
    dirs = [_package_dir(sys.modules[__package__]), os.path.abspath(contextlib.__file__)]
    for name in ("sklearn", "scipy", "dask", "joblib"):
        module = sys.modules.get(name)
        if module is not None and getattr(module, "__file__", None):
            dirs.append(_package_dir(module))
    return tuple(dirs)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """Issue the warning ``message`` of ``category``, attributed to the first frame on the
    stack outside skcoreset and the libraries it is called through (the user's line;
    the outermost frame if there is none, as in a dask worker's thread).

    Parameters
    ----------
    message : str
        The warning's text.
    category : type of Warning, default=UserWarning
        The warning's class.
    """
    skipped = _library_dirs()
    frame = sys._getframe(1)
    level = 2  # 1 is this function, 2 its caller
    while frame.f_back is not None and frame.f_code.co_filename.startswith(skipped):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)
