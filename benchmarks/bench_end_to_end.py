"""End-to-end claim of the coreset papers: coreset + MCMC versus MCMC on all the data.

Run by hand: ``python benchmarks/bench_end_to_end.py [--quick]``.

Synthetic logistic data (``make_logistic_regression``), d = 5, N = 1e5 (``--quick``: 2e4).
When ``../shared/data`` exists, ds1 (chemreact, N=500, d=10) is added as a small real-data
check (there the coreset saves little: N is tiny). MCMC is
``BayesianLogisticRegression(method="mcmc", n_draws=1000)`` (emcee), run once on the full data
(the reference) and once on each weighted coreset (``UniformCoreset``,
``SensitivityCoreset``, ``GIGACoreset``; M = 300 and 1000). Reported: wall time (coreset
construction + MCMC), the speed-up over full-data MCMC, KL(coreset posterior || full-data
posterior) in nats between moment-matched Gaussians (``skcoreset.metrics.posterior_kl``) and
the largest |mean difference| in full-posterior sd (``skcoreset.metrics.mean_error_sd``), both
from MCMC draws, and the same KL between Laplace approximations
(``skcoreset.metrics.coreset_quality``, free of Monte Carlo noise). The MCMC KL of a second
full-data MCMC run with another seed is printed as the Monte Carlo noise floor.
BLAS is limited to one thread (threadpoolctl) for stable timings.

Claim (Campbell & Beronov 2019, Campbell & Broderick 2018, Huggins, Campbell & Broderick 2016):
a coreset of a few hundred to a thousand points gives a posterior close to the full-data one at
a fraction of the MCMC cost, with construction time negligible relative to inference (Huggins,
Campbell & Broderick 2016, Fig. 1a), and sensitivity sampling beats uniform.
"""

import argparse
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from skcoreset import (BayesianLogisticRegression, GIGACoreset, SensitivityCoreset,
                       UniformCoreset)
from skcoreset.datasets import make_logistic_regression
from skcoreset.metrics import coreset_quality, mean_error_sd, posterior_kl
from _common import timed

CONSTRUCTORS = (UniformCoreset, SensitivityCoreset, GIGACoreset)
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results"


def mcmc(X, y, w=None, seed=0):
    return BayesianLogisticRegression(method="mcmc", n_draws=1000, random_state=seed).fit(
        X, y, sample_weight=w)


def run(name, X, y, budgets, seeds, noise_floor=True):
    print(f"\n{name}: N={len(y)}, d={X.shape[1]}", flush=True)
    t_full, full = timed(lambda: mcmc(X, y))
    second = noise_floor and len(y) <= 1000
    t_2, full2 = timed(lambda: mcmc(X, y, seed=99)) if second else (np.nan, None)
    print(f"  full-data MCMC: {t_full:.1f} s")
    if full2 is not None:
        print(f"  second full-data MCMC (noise floor): KL {posterior_kl(full2, full):.3g} nats, "
              f"mean error {mean_error_sd(full2, full):.2f} sd")
    print(f"{'coreset':>20} {'M':>6} {'build [s]':>9} {'MCMC [s]':>9} {'speed-up':>8} "
          f"{'KL [nats]':>10} {'mean err [sd]':>13} {'Laplace KL':>10}")
    rows = []
    full_laplace = None  # the full-data Laplace posterior, fitted once by coreset_quality
    for cls in CONSTRUCTORS:
        for M in budgets:
            kls, sds, lkls, tb, tm = [], [], [], [], []
            for seed in seeds:
                c = cls(M=M, random_state=seed)
                t_b, (Xc, yc, wc) = timed(lambda: c.fit_coreset(X, y))
                t_m, fit = timed(lambda: mcmc(Xc, yc, wc, seed=seed))
                kls.append(posterior_kl(fit, full))
                sds.append(mean_error_sd(fit, full))
                quality = coreset_quality(c, X, y, full_posterior=full_laplace)
                full_laplace = quality.full_posterior
                lkls.append(quality.kl)
                tb.append(t_b)
                tm.append(t_m)
            kl, sd, lkl = np.median(kls), np.median(sds), np.median(lkls)
            b, m = np.median(tb), np.median(tm)
            rows.append((cls.__name__, M, b, m, t_full / (b + m), kl, sd, lkl))
            print(f"{cls.__name__:>20} {M:6d} {b:9.3f} {m:9.2f} {t_full / (b + m):8.1f} "
                  f"{kl:10.3g} {sd:13.2f} {lkl:10.3g}", flush=True)
    return t_full, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="N = 2e4, one seed, M = 1000")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    n = 20_000 if args.quick else 100_000
    budgets = [1000] if args.quick else [300, 1000]
    seeds = [0] if args.quick else [0, 1, 2]
    print("BLAS limited to 1 thread (threadpoolctl); MCMC = emcee, 1000 draws")
    results = {}
    with threadpool_limits(limits=1):
        X, y = make_logistic_regression(n, 5, random_state=0)
        results[f"synthetic N={n}"] = run(f"synthetic N={n}", X, y, budgets, seeds)
        if (DATA / "ds1.npz").exists():
            z = np.load(DATA / "ds1.npz")
            results["ds1"] = run("ds1 (chemreact)", z["X"][:, :-1], (z["y"] > 0).astype(int),
                                 [200], [0], noise_floor=not args.quick)
        else:
            print("../shared/data not found: synthetic data only")
    t_full, rows = results[f"synthetic N={n}"]
    best = {r[0]: r for r in rows if r[1] == max(budgets)}
    s, u, g = best["SensitivityCoreset"], best["UniformCoreset"], best["GIGACoreset"]
    print(f"\nClaim vs measured (N={n}, M={max(budgets)}):")
    print(f"  coreset + MCMC much faster than full MCMC: {s[4]:.1f}x -> "
          f"{'reproduces' if s[4] > 5 else 'DOES NOT reproduce'}")
    print(f"  construction negligible vs inference: build {s[2]:.3f} s vs MCMC {s[3]:.1f} s "
          f"({100 * s[2] / (s[2] + s[3]):.1f}%) -> "
          f"{'reproduces' if s[2] < 0.1 * s[3] else 'DOES NOT reproduce'}")
    print(f"  small KL to the full posterior: sensitivity {s[5]:.3g} nats ({s[6]:.2f} sd), "
          f"uniform {u[5]:.3g} nats ({u[6]:.2f} sd); "
          f"sensitivity better than uniform -> "
          + ("reproduces" if s[5] < u[5] else "DOES NOT reproduce (on this well-conditioned "
             "Gaussian design uniform is as good)"))
    print(f"  GIGA (Hilbert coreset, full-Laplace weighting): KL {g[5]:.3g} nats ({g[6]:.2f} sd) "
          f"at {g[4]:.1f}x speed-up -> "
          f"{'close to the full posterior' if g[5] < 1 else 'not close'} "
          f"(uniform {u[5]:.3g} nats)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for i, name in enumerate(cls.__name__ for cls in CONSTRUCTORS):
        pts = [(r[2] + r[3], r[5]) for r in rows if r[0] == name]
        ax.scatter(*zip(*pts), label=name, color=f"C{i}")
    ax.axvline(t_full, color="k", ls=":", label="full-data MCMC time")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("wall time [s] (coreset + MCMC)")
    ax.set_ylabel("KL(coreset || full) [nats, moment-matched]")
    ax.set_title(f"coreset + MCMC vs full MCMC, N={n}, d=5")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(RESULTS / "end_to_end.png", dpi=110)
    print(f"plot: {RESULTS / 'end_to_end.png'}")


if __name__ == "__main__":
    main()
