#!/usr/bin/env python3
"""gen_gauss.py - a deterministic Gaussian regression design for bench/rls2/glmnet.sh.

    gen_gauss.py [-l ROWS] [-n FEATURES] [--support K] [--sigma S] [--seed N] OUT

X has ROWS x FEATURES entries x_ij ~ N(0, 1), independent. y = X beta + sigma * eps with
eps ~ N(0, 1) and beta sparse: K features (drawn without replacement) get
beta_j = +-(1 + U(0, 1)) (random sign), the others 0. Defaults: 144 x 16,063 (the shape of
the 14 Cancers training set), K = 10, sigma = 1, seed 1. Written as svmlight text: every
feature printed (values %.6g, label %.10g); the chosen support and beta go to stderr.
Python standard library only (random.Random(seed): the same bytes for the same options).
"""
import argparse
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-l", type=int, default=144, help="rows (default 144)")
    ap.add_argument("-n", type=int, default=16063, help="features (default 16063)")
    ap.add_argument("--support", type=int, default=10, help="non-zero coefficients (10)")
    ap.add_argument("--sigma", type=float, default=1.0, help="noise sd (default 1)")
    ap.add_argument("--seed", type=int, default=1, help="seed (default 1)")
    ap.add_argument("out", help="output file ('-': standard output)")
    a = ap.parse_args()
    if a.l < 1 or a.n < 1 or not 0 <= a.support <= a.n or a.sigma < 0:
        ap.error("need ROWS >= 1, FEATURES >= 1, 0 <= K <= FEATURES, sigma >= 0")
    r = random.Random(a.seed)
    support = sorted(r.sample(range(a.n), a.support))
    beta = {j: (1 + r.random()) * (1 if r.random() < 0.5 else -1) for j in support}
    print("gen_gauss: support (1-based) and beta: "
          + " ".join("%d:%.4f" % (j + 1, beta[j]) for j in support), file=sys.stderr)
    out = sys.stdout if a.out == "-" else open(a.out, "w")
    for _ in range(a.l):
        x = [r.gauss(0.0, 1.0) for _ in range(a.n)]
        y = sum(beta[j] * x[j] for j in support) + a.sigma * r.gauss(0.0, 1.0)
        out.write("%.10g " % y + " ".join("%d:%.6g" % (j + 1, v) for j, v in enumerate(x))
                  + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
