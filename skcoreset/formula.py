"""Formulas such as ``"visits ~ C(plan) + age + np.log(income)"`` as a scikit-learn
transformer, for the users of statsmodels' and bambi's formula interfaces.

:class:`FormulaTransformer` turns a pandas DataFrame into the design matrix of a formula's
right-hand side with `formulaic <https://matthewwardrop.github.io/formulaic/>`_ (the optional
``formula`` extra): it learns the encoding in ``fit`` (the levels of each categorical, the
state of stateful transforms such as ``center``) and applies the same encoding to new data, so
it can be the first step of a :class:`~skcoreset.pipeline.Pipeline`. Its output is a
DataFrame whose columns are named after the terms (``C(plan)[T.2]``, ``np.log(income)``), so
the final estimator's ``summary()`` rows and ``to_arviz`` coordinates carry those names.
:func:`formula_Xy` evaluates a formula's left-hand side to give the ``X`` and ``y`` of ``fit``.
"""

import warnings
from typing import Any, Self

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from ._atomic import fit_context
from ._backend import is_dask_collection
from ._sklearn_compat import StrOptions
from ._typing import ArrayInput

__all__ = ["FormulaTransformer", "formula_Xy"]

_EXTRA_MESSAGE = ("skcoreset.formula needs formulaic, the optional 'formula' extra: "
                  "pip install 'skcoreset[formula]' (or pip install formulaic).")

# the name formulaic gives the intercept's column (the term "1")
_INTERCEPT_TERM = "1"


def _formulaic():
    try:
        import formulaic
    except ImportError as exc:
        raise ImportError(_EXTRA_MESSAGE) from exc
    return formulaic


def _check_frame(X, caller):
    if is_dask_collection(X):
        raise TypeError(f"{caller} takes in-memory pandas DataFrames; got a dask collection. "
                        "Encode a pandas DataFrame, e.g. X.compute(), or a sample of it.")
    if not hasattr(X, "columns") or not hasattr(X, "iloc"):
        raise TypeError(
            f"{caller} needs a pandas DataFrame, whose columns the formula names; got "
            f"{type(X).__name__}. Wrap an array as pandas.DataFrame(X, columns=[...]).")


def _parse(formula, columns, parameter="formula"):
    """``(lhs, rhs)`` of a formula string (``lhs`` None when it has no ``~`` side); a ``.``
    stands for the ``columns`` the left-hand side does not use."""
    if not isinstance(formula, str):
        raise TypeError(f"{parameter} must be a string such as 'y ~ C(plan) + age', got "
                        f"{type(formula).__name__}.")
    parsed = _formulaic().Formula.from_spec(
        formula, context={"__formulaic_variables_available__": [str(c) for c in columns]})
    lhs, rhs = (parsed.lhs, parsed.rhs) if hasattr(parsed, "rhs") else (None, parsed)
    if not isinstance(rhs, _formulaic().formula.SimpleFormula):
        raise ValueError(f"{parameter}={formula!r} has several right-hand sides ('|'); "
                         "FormulaTransformer builds one design matrix.")
    return lhs, rhs


def _evaluate(spec_or_formula, X, caller, context=None, output="pandas"):
    """The model matrix of X, with missing values refused (a transformer cannot drop rows,
    which statsmodels' formula interface would do silently); a spec keeps its output. The
    formula sees formulaic's transforms, numpy as ``np`` and ``context``, not this module."""
    context = dict(context or {})
    try:
        if isinstance(spec_or_formula, _formulaic().ModelSpec):
            return spec_or_formula.get_model_matrix(X, context=context, na_action="raise")
        return _formulaic().model_matrix(spec_or_formula, X, context=context,
                                         na_action="raise", output=output)
    except _formulaic().errors.FactorEvaluationError as exc:
        missing = sorted(name for name in spec_or_formula.required_variables
                         if name not in X.columns)
        if missing:
            raise ValueError(
                f"{caller}: the formula names {missing}, neither a column of X (its columns: "
                f"{list(X.columns)}) nor a function it knows (pass other functions as "
                "context={'name': function}).") from exc
        raise
    except ValueError as exc:
        if "null values" in str(exc):
            raise ValueError(
                f"{caller}: {exc} Drop or impute the rows with missing values first (e.g. "
                "X.dropna()); a transformer keeps every row.") from exc
        raise


class FormulaTransformer(TransformerMixin, BaseEstimator):
    """Design matrix of a formula's right-hand side, learned on a DataFrame and reapplied.

    ``fit`` evaluates the formula on the training DataFrame with formulaic and keeps the
    resulting model specification: the levels and contrasts of each categorical and the state
    of stateful transforms (``center``, ``scale``, splines). ``transform`` encodes any
    DataFrame with that specification, so test rows get the training columns in the training
    order. The output is a DataFrame with one column per term level, named as formulaic (and
    statsmodels) name them, e.g. ``C(plan)[T.2]``, ``age``, ``np.log(income)``.

    Parameters
    ----------
    formula : str
        A formula in formulaic's (Wilkinson) syntax, e.g. ``"~ C(plan) + age +
        np.log(income)"``. A left-hand side (``"visits ~ ..."``) is allowed and ignored
        here, so one formula serves both this transformer and :func:`formula_Xy`; ``.``
        stands for every column of the training DataFrame that the left-hand side does not
        use (fixed in fit). Numpy is
        available as ``np``; formulaic's transforms (``C``, ``center``, ``scale``, ``bs``,
        ``poly``, ``log``, ...) too.
    drop_intercept : bool, default=True
        Drop the formula's ``Intercept`` column (present unless the formula says ``0 +`` or
        ``- 1``). The skcoreset estimators fit their own intercept (``fit_intercept=True``,
        under its own wide prior), which plays the role of that column: categoricals are
        still coded against a reference level, as the formula's intercept implies. With
        ``drop_intercept=False`` keep the column and fit the estimator with
        ``fit_intercept=False``.
    sparse_output : bool, default=False
        Return a scipy CSR matrix instead of a DataFrame: the indicators of a categorical
        with many levels (postcodes, products) then take memory per row, not per level.
        A CSR matrix carries no names to the estimator: the pipeline's ``summary()`` takes
        them from :meth:`get_feature_names_out` (the estimator's own reads ``x0, x1, ...``).
    context : dict, default=None
        Further names the formula may call, e.g. ``{"winsorize": winsorize}`` for
        ``"~ winsorize(income)"`` (formulaic's transforms and ``np`` are always there).
        Give picklable functions (defined at module level) to pickle the transformer.
    handle_unknown : {"warn", "error"}, default="warn"
        Levels of a categorical that ``fit`` did not see. ``"warn"`` does what formulaic
        does: warns (``formulaic.errors.DataMismatchWarning``) and encodes such a row with
        all of that term's indicator columns 0, i.e. as the reference level under treatment
        coding. ``"error"`` raises a ``ValueError`` instead.

    Attributes
    ----------
    model_spec_ : formulaic.ModelSpec
        The specification learned in fit (formula, levels, transform state); its
        ``get_model_matrix(data)`` is what :meth:`transform` applies.
    feature_names_out_ : ndarray of str
        Names of the output columns (the intercept dropped per ``drop_intercept``).
    n_features_in_ : int
        Number of columns of the DataFrame seen in fit.
    feature_names_in_ : ndarray of str
        Columns of the DataFrame seen in fit (the formula may use only some of them).

    See Also
    --------
    formula_Xy : ``X`` and ``y`` from a DataFrame and a formula with a left-hand side.

    Notes
    -----
    A transformer keeps every row, so missing values raise a ``ValueError`` instead of being
    dropped (statsmodels' formula interface drops those rows): drop or impute them first.
    The input must be a pandas DataFrame (the formula names its columns). The output is a
    DataFrame whatever ``set_output`` says, except that ``set_output(transform="polars")``
    converts it.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from skcoreset.formula import FormulaTransformer
    >>> data = pd.DataFrame({"plan": [1, 2, 3, 1], "age": [30.0, 41.0, 52.0, 63.0],
    ...                      "income": [1e4, 2e4, 4e4, 8e4]})
    >>> formula = FormulaTransformer("~ C(plan) + age + np.log(income)").fit(data)
    >>> formula.get_feature_names_out().tolist()
    ['C(plan)[T.2]', 'C(plan)[T.3]', 'age', 'np.log(income)']
    >>> formula.transform(data.iloc[:2]).shape
    (2, 4)
    """

    _parameter_constraints: dict = {
        "formula": [str],
        "drop_intercept": ["boolean"],
        "sparse_output": ["boolean"],
        "context": [dict, None],
        "handle_unknown": [StrOptions({"warn", "error"})],
    }

    def __init__(self, formula: str, *, drop_intercept: bool = True,
                 sparse_output: bool = False, context: dict[str, Any] | None = None,
                 handle_unknown: str = "warn") -> None:
        self.formula = formula
        self.drop_intercept = drop_intercept
        self.sparse_output = sparse_output
        self.context = context
        self.handle_unknown = handle_unknown

    @fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: Any, y: Any = None) -> Self:
        """Learn the formula's encoding (levels, transform state) from a DataFrame.

        Parameters
        ----------
        X : pandas.DataFrame
            The data, with every column the formula's right-hand side names.
        y : None
            Ignored.

        Returns
        -------
        self : FormulaTransformer
        """
        self._fit(X)
        return self

    @fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """Fit, and return the design of X (evaluated once).

        Parameters
        ----------
        X : pandas.DataFrame
            The data, with every column the formula's right-hand side names.
        y : None
            Ignored.

        Returns
        -------
        X_out : pandas.DataFrame or CSR matrix of shape (n_samples, n_features_out)
            As :meth:`transform` returns it.
        """
        return self._fit(X)

    def _fit(self, X):
        """Learn the spec from X; return X's design."""
        _check_frame(X, "FormulaTransformer.fit")
        if X.shape[0] == 0:
            raise ValueError("FormulaTransformer.fit got a DataFrame with 0 rows; it needs at "
                             "least one to learn the encoding.")
        _, rhs = _parse(self.formula, X.columns)
        matrix = _evaluate(rhs, X, "FormulaTransformer.fit", self.context,
                           output="sparse" if self.sparse_output else "pandas")
        spec = matrix.model_spec
        keep = self._kept_columns(spec)
        if not keep:
            raise ValueError(f"formula={self.formula!r} gives no column besides the "
                             "intercept (which the estimator fits itself); name some terms.")
        self.model_spec_ = spec
        self._keep = keep
        self.feature_names_out_ = np.asarray(
            [spec.column_names[i] for i in keep], dtype=object)
        self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        self.n_features_in_ = X.shape[1]
        return self._output(matrix, X, "FormulaTransformer.fit")

    def _kept_columns(self, spec):
        dropped = set()
        if self.drop_intercept:
            for term, columns in spec.term_slices.items():
                if str(term) == _INTERCEPT_TERM:
                    dropped.update(range(len(spec.column_names))[columns])
        return [i for i in range(len(spec.column_names)) if i not in dropped]

    def transform(self, X: Any) -> Any:
        """Encode a DataFrame as in fit.

        Parameters
        ----------
        X : pandas.DataFrame
            Data with every column the formula names (other columns are ignored).

        Returns
        -------
        X_out : pandas.DataFrame or CSR matrix of shape (n_samples, n_features_out)
            The design matrix as float64: a DataFrame with X's index and the columns
            :meth:`get_feature_names_out` names, or with ``sparse_output=True`` a scipy CSR
            matrix of those columns.
        """
        check_is_fitted(self)
        _check_frame(X, "FormulaTransformer.transform")
        formulaic = _formulaic()
        with warnings.catch_warnings():
            if self.handle_unknown == "error":
                warnings.simplefilter("error", formulaic.errors.DataMismatchWarning)
            # pandas 3 deprecates how formulaic casts unseen levels to missing; the
            # DataMismatchWarning above already tells the user about those levels
            warnings.filterwarnings("ignore", message="Constructing a Categorical with a dtype")
            try:
                matrix = _evaluate(self.model_spec_, X, "FormulaTransformer.transform",
                                   self.context)
            except formulaic.errors.DataMismatchWarning as exc:
                raise ValueError(f"FormulaTransformer.transform (handle_unknown='error'): "
                                 f"{exc}") from None
        return self._output(matrix, X, "FormulaTransformer.transform")

    def _output(self, matrix, X, caller):
        """The kept columns of a model matrix, as float64, in the output chosen in fit;
        non-finite values (the log of 0, ...) refused, naming their terms."""
        if sp.issparse(matrix):
            out = sp.csr_matrix(matrix, dtype=np.float64)[:, self._keep]
            finite = np.isfinite(out.data)
            bad_columns = out.indices[~finite] if not finite.all() else []
        else:
            import pandas as pd

            values = np.asarray(matrix.iloc[:, self._keep], dtype=np.float64)
            out = pd.DataFrame(values, index=X.index, columns=list(self.feature_names_out_))
            finite = np.isfinite(values)
            bad_columns = np.nonzero(~finite.all(axis=0))[0] if not finite.all() else []
        if len(bad_columns):
            terms = list(self.feature_names_out_[np.unique(bad_columns)])
            raise ValueError(
                f"{caller}: the design has infinite or undefined values in {terms} (e.g. the "
                "log of 0 or of a negative number, or an infinite input); transform those "
                "columns so that every row is finite (e.g. np.log1p), or drop such rows.")
        return out

    def get_feature_names_out(self, input_features: ArrayInput | None = None
                              ) -> NDArray[np.object_]:
        """Get the names of the output columns: the formula's term levels.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Ignored (the formula, not the input columns, names the output); accepted so that
            a Pipeline can pass the names on.

        Returns
        -------
        feature_names_out : ndarray of str
        """
        check_is_fitted(self)
        return self.feature_names_out_.copy()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        tags.input_tags.categorical = True
        tags.requires_fit = True
        return tags


def formula_Xy(formula: str, data: Any) -> tuple[Any, Any]:
    """``X`` and ``y`` for ``fit`` from a DataFrame and a formula with a left-hand side.

    The left-hand side is evaluated on ``data`` (it may be a transform, e.g.
    ``np.log(y)``); ``X`` is ``data`` without the columns the left-hand side uses, to be
    encoded by a :class:`FormulaTransformer` of the same formula in the pipeline.

    Parameters
    ----------
    formula : str
        A formula with one response, e.g. ``"visits ~ C(plan) + age"``.
    data : pandas.DataFrame
        The data.

    Returns
    -------
    X : pandas.DataFrame
        ``data`` without the response's columns.
    y : pandas.Series
        The response, named after the left-hand side.

    Examples
    --------
    >>> import pandas as pd
    >>> from skcoreset.formula import formula_Xy
    >>> data = pd.DataFrame({"visits": [0, 2, 1], "plan": [1, 2, 1], "age": [30, 41, 52]})
    >>> X, y = formula_Xy("visits ~ C(plan) + age", data)
    >>> list(X.columns), y.tolist()
    (['plan', 'age'], [0.0, 2.0, 1.0])
    """
    _check_frame(data, "formula_Xy")
    lhs, _ = _parse(formula, data.columns)
    if lhs is None:
        raise ValueError(f"formula={formula!r} has no left-hand side (the response before "
                         "'~'); formula_Xy needs one, e.g. 'visits ~ C(plan) + age'.")
    matrix = _evaluate(lhs, data, "formula_Xy")
    if matrix.shape[1] != 1:
        raise ValueError(f"The left-hand side of formula={formula!r} gives "
                         f"{matrix.shape[1]} columns {list(matrix.columns)}; formula_Xy "
                         "needs one response column.")
    used = set(matrix.model_spec.required_variables)
    X = data[[c for c in data.columns if c not in used]]
    y = matrix.iloc[:, 0].astype(np.float64)
    y.index = data.index
    return X, y
