"""The public warnings: one class each, importable from skcoreset.exceptions and from the
modules that raised them before that module existed."""

import importlib
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from skcoreset import BayesianLogisticRegression
from skcoreset.exceptions import MCMCDiagnosticWarning, PassGLMAccuracyWarning


def test_warnings_are_user_warnings_and_keep_their_old_paths():
    diagnostics, mcmc, pass_glm = (importlib.import_module(f"skcoreset._inference.{name}")
                                   for name in ("diagnostics", "mcmc", "pass_glm"))
    assert issubclass(MCMCDiagnosticWarning, ConvergenceWarning)
    assert issubclass(PassGLMAccuracyWarning, UserWarning)
    assert diagnostics.MCMCDiagnosticWarning is MCMCDiagnosticWarning
    assert mcmc.MCMCDiagnosticWarning is MCMCDiagnosticWarning
    assert pass_glm.PassGLMAccuracyWarning is PassGLMAccuracyWarning


def test_pass_glm_warning_is_the_public_class():
    # rare positives far from 0: the Chebyshev polynomial on [-4, 4] is far off there
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 2))
    y = (X @ [1.0, -1.0] - 6.0 + rng.logistic(size=len(X)) > 0).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.warns(PassGLMAccuracyWarning):
            BayesianLogisticRegression(method="pass_glm", pass_radius=4.0).fit(X, y)
