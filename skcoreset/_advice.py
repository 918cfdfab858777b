"""Which route to the exact posterior is faster: NUTS on all rows, or a coreset and NUTS on it.

The one place of the rule, measured by ``benchmarks/bench_route_advice.py`` (CPU seconds of
one thread, at equal accuracy: the coreset route's posterior within 0.02 nats of the exact
one, else with its exact correction). Both routes pay the sampler's own bookkeeping for
every gradient (about 0.1 ms); they differ in the rows each gradient reads (all ``N``, or
the coreset's few hundred) and in the coreset's construction (a few passes over all rows).
Below a few thousand rows the passes are cheaper than the bookkeeping and both routes take
1-3 s, within 0.5-2x of each other run to run; above, NUTS on all rows grows with ``N``
(10-45 s at 3e4-3e5 rows) while the coreset route stays at 1-3 s, whatever the family. So
the rule is a threshold on ``N`` over the size of the default coreset; it agreed with the
measured faster route on 9 of the benchmark's 10 cells (logistic, Poisson and negative
binomial, N = 1e3-3e5, d = 3-30), the other a tie (1.1 against 0.9 s).
"""

# The default coreset's size, as QuasiNewtonCoreset(M="auto") first sizes it: the
# p (p + 3) / 2 second-order moments of p parameters, at least 500 rows
_MIN_CORESET_ROWS = 500
# Measured: the coreset route is faster from about this many times the coreset's rows
# (k = 4 agreed on 9 of 10 cells, k = 1-6 on 8; below, both routes take about as long and
# only NUTS on all rows is exact)
ROWS_PER_CORESET_ROW = 4


def default_coreset_rows(n_features):
    """The rows of the default coreset of ``n_features`` features and an intercept."""
    p = n_features + 1
    return max(_MIN_CORESET_ROWS, p * (p + 3) // 2)


def coreset_break_even(n_features):
    """The number of rows from which a coreset and NUTS on it are faster than NUTS on all
    rows at equal accuracy."""
    return ROWS_PER_CORESET_ROW * default_coreset_rows(n_features)


def coreset_pays(n_samples, n_features):
    """Whether a coreset and NUTS on it are faster than NUTS on all ``n_samples`` rows."""
    return n_samples >= coreset_break_even(n_features)
