"""The method table: every fitting method of the estimators, declared once.

Each entry of :data:`METHODS` is all the estimators know of a method: the inference function,
its options (the estimators' parameters that reach it, with their defaults, scikit-learn
constraints and numpydoc entries), the families it supports and what it can do. From the
table and :data:`COMMON_PARAMS` follow each estimator's ``_parameter_constraints``, the
parameter sections of its docstring (:func:`glm_estimator`) and the source of its typed
``__init__`` (:func:`render_init`, written into the modules by
``python -m skcoreset.linear_model._codegen``; a test fails, naming every class, when one is
out of date). A new option of a method is one :class:`Param` here and nothing else written
by hand.
"""

import re
import textwrap
from functools import partial
from numbers import Integral, Real
from typing import NamedTuple

from .._docstrings import fill_doc
from .._inference import (SAMPLERS, check_pass_degree, kl_proximal, laplace, mcmc,
                          pass_glm)
from .._sklearn_compat import Interval, StrOptions


class Param(NamedTuple):
    """An estimator parameter, declared once: its default, its scikit-learn constraints and
    its numpydoc entry (``type`` and ``doc`` under ``name : type, default=...``)."""

    default: object
    constraints: list
    type: str
    doc: str
    keyword: str | None = None  # a method's option: the keyword of its ``fit`` (None: the name)
    # the type annotation of ``__init__``; None: derived from ``constraints`` (annotation_of)
    annotation: str | None = None


class Method(NamedTuple):
    """A fitting method, declared once in :data:`METHODS`."""

    fit: object  # the inference function, (X, y, family, **common, **options) -> result
    doc: str  # its item in the description of the ``method`` parameter
    options: dict  # estimator parameter -> Param, passed to ``fit`` as its keyword
    supports: object = None  # family -> whether the method fits it (None: every family)
    streams: bool = False  # one pass over the data: partial_fit
    check: object = None  # estimator -> None; raises ValueError for invalid options
    finds_non_finite: bool = False  # its pass over X raises on NaN/inf: no separate check
    takes_offset: bool = True  # fits offsets in the rows' linear predictors (offset=)


def _check_pass_degree(estimator):
    check_pass_degree(estimator._family().pass_glm_mapping, estimator.pass_degree)


def _has_pass_glm_mapping(family):
    return family.pass_glm_mapping is not None


# The fitting methods, in the order their options take in the estimators' signatures.
METHODS = {
    # the estimators read no precision: their posterior is one p x p array
    "laplace": Method(
        partial(laplace, keep_precision=False), doc="""
- ``"laplace"``: Gaussian centred at the posterior mode (found by Newton's method with a
  line search) with covariance the inverse negative Hessian of the log posterior there.""",
        options={}),
    "kl_proximal": Method(
        kl_proximal, doc="""
- ``"kl_proximal"``: full-covariance Gaussian variational inference by KL proximal-gradient
  steps (Khan et al., 2015, eqs. 16-19), started at the Laplace approximation; maximises the
  evidence lower bound (``elbo_``). Uses the dual updates, which form no ``d x d`` matrix
  until the end, when there are more parameters than rows.""",
        options={"kl_beta": Param(None, [Interval(Real, 0, None, closed="neither"), None],
                                  "float", """
Proximal step size ``beta`` of ``method="kl_proximal"`` (each step mixes the current ``q``
and the linearised target with ``r = 1 / (1 + beta)``). ``None``: 1, the fastest step near
the optimum, where the Laplace approximation starts the iteration (the paper's 0.25 for the
logistic model suits its start from the prior); from 50,000 rows on, ``None`` takes
fixed-point steps to the same optimum instead, which need fewer iterations there.""",
                                  keyword="beta")}),
    # PASS-GLM needs a polynomial approximation of each family's mapping function
    "pass_glm": Method(
        pass_glm, doc="""
- ``"pass_glm"``: PASS-GLM (Huggins et al., 2017): the GLM mapping function is replaced by a
  degree-``pass_degree`` polynomial (see ``pass_radius``), so the log-likelihood depends on
  the data only through polynomial sufficient statistics computed in one pass
  (``partial_fit`` for streams, dask arrays chunk by chunk). Degree 2 gives a Gaussian
  posterior in closed form; higher degrees use Newton and Laplace on the polynomial
  surrogate. Supports the logistic and probit models (probit at degree 2) and Poisson with
  ``link="log"``.""",
        options={
            "pass_degree": Param(2, [Interval(Integral, 2, None, closed="left")], "int", """
Degree of PASS-GLM's polynomial approximation (``method="pass_glm"`` only). Logistic: 2, 6,
10, ... (the paper's 2 + 4k rule keeps the surrogate concave); Poisson: even; probit: 2.
Degrees above 2 store ``C(p + degree, degree)`` monomial sums and are meant for few
features; they are more accurate where degree 2 warns.""", keyword="degree"),
            "pass_radius": Param(
                "auto", [Interval(Real, 0, None, closed="neither"), StrOptions({"auto"})],
                'float or "auto"', """
Which polynomial PASS-GLM uses (``method="pass_glm"`` only). ``"auto"``: a Laplace fit on
pilot rows (at most 10,000 rows drawn uniformly from all rows, per class for a binary model,
the rarer class up to half; the same rows in memory, on a dask array and in a
``partial_fit`` stream) gives representative linear predictors ``s = x . theta``, and the
derivative of the polynomial is the least-squares fit of the exact one (sigmoid, ``exp``, or
``phi / Phi`` at the margins ``y s`` for probit) at them, so the approximation is accurate
where the data are, including far from 0 (rare positives, large counts). The statistics do
not depend on the polynomial, so a stream's is chosen again after every ``partial_fit`` from
all its rows so far. A number ``R``: the Chebyshev approximation on ``[-R, R]`` of Huggins et
al. (2017) (their PASS-LR2 uses ``R = 4``), accurate only when most ``s`` lie in that
interval. Either way held-out rows (drawn with the pilot rows) measure the resulting error of
the posterior mean, and a :class:`~skcoreset.exceptions.PassGLMAccuracyWarning` (a
``UserWarning``) is issued when it exceeds one posterior standard deviation or the
estimate's standard error cannot rule that out: the approximation error does not shrink with
the number of rows, while the posterior does.""", keyword="radius"),
        },
        supports=_has_pass_glm_mapping, streams=True, check=_check_pass_degree,
        finds_non_finite=True, takes_offset=False),
    "mcmc": Method(
        mcmc, doc="""
- ``"mcmc"``: draws from the exact posterior, by default with the No-U-Turn sampler
  (``sampler="nuts"``: mici's dynamic multinomial HMC with the Laplace Hessian as a dense
  metric, ``n_chains`` chains run until the bulk effective sample size reaches ``n_draws``),
  or with emcee's affine-invariant ensemble (``sampler="ensemble"``); chains start from the
  Laplace approximation. ``posterior_samples_`` holds the draws and predictions average over
  them. Every gradient is one pass over the rows: on a coreset of 1,000 rows a run takes
  seconds at 100 parameters; on all rows the cost grows with N.""",
        options={
            "sampler": Param("nuts", [StrOptions(set(SAMPLERS))],
                             "{" + ", ".join(f'"{name}"' for name in SAMPLERS) + "}", """
The MCMC kernel (``method="mcmc"``). ``"nuts"``: the No-U-Turn sampler (dynamic HMC with
multinomial sampling, Hoffman and Gelman, 2014; Betancourt, 2017, as implemented by mici) in
the coordinates that whiten the Laplace approximation, with dual-averaging step-size
adaptation; it uses the gradient of the log posterior and mixes in a few leapfrog steps per
draw at 10 or 100 parameters alike. ``"ensemble"``: emcee's stretch-move ensemble (Goodman
and Weare, 2010), which needs no gradient but whose autocorrelation time grows like
``10 + 15 p`` steps, so that beyond about 20 parameters its default run is cut short with a
warning. On a 1,000-row coreset NUTS gives many times more effective draws per second from
30 parameters on (``benchmarks/bench_mcmc.py``)."""),
            "n_draws": Param(4000, [Interval(Integral, 2, None, closed="left")], "int", """
Size of the MCMC sample (``method="mcmc"``), in effective draws. NUTS runs until the smallest
bulk effective sample size of the parameters (Vehtari et al., 2021) reaches ``n_draws`` and
every rank-normalized R-hat is at most 1.01, or until a budget of 10 times ``n_draws``
draws, which warns (:class:`~skcoreset.exceptions.MCMCDiagnosticWarning`) with the numbers;
it keeps all its draws (about ``n_draws`` of them on a near-Gaussian posterior). The
ensemble keeps ``n_draws`` draws over all walkers, thinned to be nearly independent."""),
            "n_burnin": Param(None, [Interval(Integral, 0, None, closed="left"), None], "int",
                              """
Warm-up iterations per chain, discarded (``method="mcmc"``). NUTS: step-size adaptation, 150
by default (the chains start near stationarity, at Laplace draws). Ensemble: ``None`` scales
it with the number of parameters p, ``100 + 150 p`` steps, about ten autocorrelation times
of the stretch move on a Gaussian target."""),
            "thin": Param(None, [Interval(Integral, 1, None, closed="left"), None], "int", """
Keep every ``thin``-th iteration (``method="mcmc"``). NUTS: 1 by default; its budget counts
kept draws, so a larger value lets a slowly mixing run go on longer. Ensemble: ``None``
chooses the smallest value that runs the chain for about 50 autocorrelation times
(``500 + 750 p`` steps); the defaulted parts of the run are capped together at 1,000,000
walker steps (``n_walkers`` times steps per walker), which binds from about ``p = 17``; the
shortened run then warns (:class:`~skcoreset.exceptions.MCMCDiagnosticWarning`) with the
``n_burnin`` and ``thin`` that give the full run. Explicit values are not capped."""),
            "n_walkers": Param(None, [Interval(Integral, 2, None, closed="left"), None],
                               "int", """
Number of emcee walkers (``sampler="ensemble"``), at least ``2 p``; ``None`` means
``max(16, 4 p)``."""),
            "n_chains": Param(4, [Interval(Integral, 1, None, closed="left")], "int", """
Number of independent NUTS chains (``sampler="nuts"``), each with its own warm-up and step
size, started at independent Laplace draws; R-hat compares them."""),
            "n_jobs": Param(None, [Integral, None], "int", """
Number of NUTS chains run in parallel (joblib). ``None`` means 1 unless in a
:obj:`joblib.parallel_backend` context, ``-1`` all processors. The draws do not depend on
it."""),
            "max_tree_depth": Param(10, [Interval(Integral, 1, None, closed="left")], "int",
                                    """
Largest number of trajectory doublings of a NUTS iteration (``sampler="nuts"``; Stan's
count, at most ``2**max_tree_depth - 1`` leapfrog steps, each a gradient). Transitions that
reach it are counted in ``n_max_tree_depth_`` and warned about: the posterior is then much
longer in some direction than the Laplace approximation says."""),
            "max_gradients": Param(
                "auto", [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}),
                         None], 'int, "auto" or None', """
Most gradient evaluations of a NUTS run (``sampler="nuts"``), warm-up included, each a pass
over the rows. ``"auto"``: 64 per planned iteration, ``64 * n_chains * (n_burnin + 2 *
ceil(n_draws / n_chains))``, about ten times what a near-Gaussian posterior needs; None: no
limit. A run that spends it returns the draws its chains completed, with an
:class:`~skcoreset.exceptions.MCMCDiagnosticWarning` naming the ESS, the R-hat, the likely
cause (e.g. trees at the maximum depth on a flat posterior) and the fixes. The count is
deterministic, so the draws stay reproducible with ``random_state``."""),
            "max_time": Param(None, [Interval(Real, 0, None, closed="neither"), None],
                              "float", """
Most seconds an MCMC run may take (``method="mcmc"``, either sampler), counted from the
start of the fit; None: no limit. NUTS checks the clock at every leapfrog step (chains run
one after the other share the time left equally), the ensemble after every step; a run that
reaches it returns the draws it has, with an
:class:`~skcoreset.exceptions.MCMCDiagnosticWarning`. The draws then depend on the
machine's speed."""),
            "random_state": Param(None, ["random_state"],
                                  "int, RandomState instance or None", """
Seed of the MCMC chains' starting points and moves (``method="mcmc"``), for reproducible
draws. The other methods are deterministic."""),
        }),
}
STREAMING_METHODS = " or ".join(repr(name) for name, spec in METHODS.items() if spec.streams)

# The parameters every estimator has besides ``method`` and the methods' options (which
# come between ``max_iter`` and ``verbose``).
COMMON_PARAMS = {
    "prior_scale": Param(1.0, [Interval(Real, 0, None, closed="neither")], "float", """
Standard deviation of the isotropic Gaussian prior ``N(0, prior_scale^2 I)`` on the
coefficients. Must be positive."""),
    "intercept_prior_scale": Param(10.0, [Interval(Real, 0, None, closed="neither")],
                                   "float", """
Standard deviation of the Gaussian prior on the intercept (a wide prior by default). Ignored
when ``fit_intercept=False``."""),
    "fit_intercept": Param(True, ["boolean"], "bool", """
Whether to fit an intercept, with its own prior."""),
    "tol": Param(1e-10, [Interval(Real, 0, None, closed="neither")], "float", """
Convergence tolerance, in nats: Newton's method (Laplace, PASS-GLM above degree 2) stops when
half the Newton decrement (the predicted increase of the log posterior from another step) is
below ``tol``; KL-proximal VI when half the squared natural-gradient norm of the ELBO is."""),
    "max_iter": Param(500, [Interval(Integral, 1, None, closed="left")], "int", """
Maximum number of Newton or proximal iterations; a ``ConvergenceWarning`` is issued when
reached."""),
}
VERBOSE = Param(0, ["verbose"], "int", """
Print progress of the fit when positive.""")


def _method_param(methods):
    """The ``method`` parameter of the estimators fitted by ``methods`` (name -> Method):
    its docs list those, its constraint every method (another method raises a ValueError
    naming the supported ones, ``BaseBayesianGLM._method``)."""
    items = "\n".join(spec.doc.strip("\n") for spec in methods.values())
    dask = ("Every method also fits dask arrays where their chunks live: each Newton or "
            "proximal step (PASS-GLM: its one pass, NUTS: each gradient) is a map-reduce over "
            "the chunks, and the posterior is that of the same rows in memory. MCMC on dask "
            'arrays runs NUTS only (``sampler="ensemble"`` is refused), at one round trip to '
            "the cluster per gradient: see the user guide's scaling page for when that pays.")
    return Param("laplace", [StrOptions(set(METHODS))],
                 "{" + ", ".join(f'"{name}"' for name in methods) + "}",
                 f"How the posterior is fitted.\n\n{items}\n\n{dask}",
                 annotation="FitMethod")


def glm_params(family):
    """The parameters of the estimators of ``family`` (an instance), in signature order:
    ``method``, the common ones, the options of the methods that support the family in the
    order of :data:`METHODS`, ``verbose``."""
    methods = {name: spec for name, spec in METHODS.items()
               if spec.supports is None or spec.supports(family)}
    options = {name: param for spec in methods.values() for name, param in spec.options.items()}
    return {"method": _method_param(methods), **COMMON_PARAMS, **options, "verbose": VERBOSE}


def _fill(text, indent, width=92):
    """Paragraphs and ``- `` list items of ``text`` refilled at ``indent``."""
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        items = re.split(r"\n(?=- )", block)
        blocks.append("\n".join(
            textwrap.fill(" ".join(item.split()), width=width, initial_indent=indent,
                          subsequent_indent=indent + ("  " if item.startswith("- ") else ""),
                          break_long_words=False, break_on_hyphens=False)
            for item in items))
    return "\n\n".join(blocks)


def _param_doc(name, param):
    """The numpydoc entry of a parameter, indented for a class docstring."""
    default = f'"{param.default}"' if isinstance(param.default, str) else repr(param.default)
    return f"    {name} : {param.type}, default={default}\n{_fill(param.doc, ' ' * 8)}\n"


def annotation_of(param):
    """The type annotation of a parameter in ``__init__``: ``param.annotation``, or derived
    from its scikit-learn constraints (intervals of reals or integers, string options,
    booleans, ``None``, random states)."""
    if param.annotation is not None:
        return param.annotation
    types = []
    for constraint in param.constraints:
        if constraint is None:
            continue
        if isinstance(constraint, Interval):
            kind = "int" if constraint.type is Integral else "float"
        elif isinstance(constraint, StrOptions):
            kind = "Literal[" + ", ".join(f'"{option}"' for option in
                                          sorted(constraint.options)) + "]"
        else:
            kind = {Integral: "int", Real: "float", "boolean": "bool", "verbose": "int",
                    "random_state": "RandomStateLike"}[constraint]
        if kind not in types:
            types.append(kind)
    if None in param.constraints:
        types.append("None")
    return " | ".join(types)


def _default_source(value):
    return f'"{value}"' if isinstance(value, str) else repr(value)


# The lines around the generated ``__init__`` of every estimator.
GENERATED_BEGIN = ("    # __init__ generated from the method table "
                   "(python -m skcoreset.linear_model._codegen)")
GENERATED_END = "    # end of the generated __init__"


def render_init(params, width=99):
    """The source of a typed, keyword-only ``__init__`` that stores ``params`` (name ->
    Param, in signature order), between :data:`GENERATED_BEGIN` and :data:`GENERATED_END`."""
    opening, indent = "    def __init__(self, *, ", " " * len("    def __init__(")
    arguments = [f"{name}: {annotation_of(param)} = {_default_source(param.default)}"
                 for name, param in params.items()]
    lines, line = [], opening
    for position, argument in enumerate(arguments):
        last = position == len(arguments) - 1
        text = argument + (") -> None:" if last else ",")
        if line.strip() and len(line) + len(text) + 1 > width and line != opening:
            lines.append(line.rstrip())
            line = indent
        line += text if line in (opening, indent) else " " + text
    lines.append(line)
    body = [f"        self.{name} = {name}" for name in params]
    return "\n".join([GENERATED_BEGIN, *lines, *body, GENERATED_END])


# Every estimator made by glm_estimator -> (its family, its family's parameters): what
# ``_codegen`` writes and the tests check.
ESTIMATORS: dict[type, tuple] = {}


def estimator_params(cls):
    """The parameters of an estimator class (name -> Param), in signature order: its
    family's, ``method``, the common ones, the options of the methods that support its
    family in the order of :data:`METHODS`, ``verbose``."""
    family, family_params = ESTIMATORS[cls]
    return {**family_params, **glm_params(family)}


def glm_estimator(family, attrs_doc, **family_params):
    """Class decorator of an estimator of ``family`` (an instance): its
    ``_parameter_constraints`` and the ``{common_params}`` of its docstring from the method
    table, after ``family_params`` (name -> Param, documented in the class docstring);
    ``{common_attrs}`` from ``attrs_doc``. The class's ``__init__`` is the source that
    :func:`render_init` gives for the same parameters (registered in :data:`ESTIMATORS`)."""
    def decorate(cls):
        ESTIMATORS[cls] = (family, family_params)
        params = estimator_params(cls)
        cls._parameter_constraints = {name: param.constraints
                                      for name, param in params.items()}
        documented = {name: param for name, param in params.items() if name not in family_params}
        common = "\n".join(_param_doc(name, param) for name, param in documented.items())
        return fill_doc(common_params=common, common_attrs=attrs_doc)(cls)
    return decorate
