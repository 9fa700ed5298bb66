#!/usr/bin/env python3
"""rls2_numpy.py - a straightforward numpy port of RLS2 (Dinuzzo's thesis, Algorithm 3), the
peer that bench/rls2/table43.sh times against kmtk's bench/rls2/table43.

    rls2_numpy.py [options] FILE

The same protocol as table43 on the same splits: the paper's basis set (on all features and
on each feature: (1 + x'y)^d, d = 1..3, and exp(-gamma ||x - y||^2) with 10 gammas in
[1e-3, 1e3]; m = 13 (N + 1)), dense kernel matrices computed once over all rows, scaled by
the transductive trace rule s_k = 1 / tr K~^k (all rows), then for each split a path of 30
lambdas from 1e6 down to 1e-6 with warm starts:

    d = e_i, i = argmax_k y'K^k y                  (Lemma 6, first lambda only)
    repeat:  c = (sum_k d_k K^k + lambda I)^-1 y   (4.2), numpy.linalg.solve
             V = [K^1 c ... K^m c], u = y - lambda c / 2
             d = argmin ||V d - u|| on the simplex (4.4), SMO from the current d
    until    ||(K(d) + lambda I) c - y|| <= delta ||y||  (delta 1e-2)

SMO (the same rule as kmtk's km_simplex_ls): move weight from the coordinate with the largest
gradient among d_j > 0 to the one with the best second-order gain; Gram columns V'v_k
computed when first needed; stop when max_{d_j>0} g_j - min_k g_k <= 1e-10 max_k ||v_k|| ||u||
on a recomputed gradient. Regression outputs are centred by the training mean; classification
uses +-1 targets and the sign. Split r is drawn with kmtk's generator (xoshiro256**, seeded by
seed * 0x9E3779B97F4A7C15 + r, Fisher-Yates over the rows, the first round(F l) train), so
split r here is split r of table43: the per-lambda numbers can be compared row by row.

The time of a path ("path_s" wall, "path_cpu" CPU of the process) covers taking the split's
blocks out of the kernel matrices, the 30 lambdas and the test predictions, as table43's
per-path time covers km_rls2_run.
Needs numpy only (Debian: apt-get install python3-numpy). numpy's BLAS threads follow
OPENBLAS_NUM_THREADS (table43.sh sets 1, like kmtk's paths).
"""
import argparse
import gzip
import math
import sys
import time

import numpy as np

MASK64 = (1 << 64) - 1


class Rng:
    """kmtk's km_rng: xoshiro256** seeded through splitmix64."""

    def __init__(self, seed):
        x = seed & MASK64
        self.s = []
        for _ in range(4):
            x = (x + 0x9E3779B97F4A7C15) & MASK64
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
            self.s.append(z ^ (z >> 31))

    @staticmethod
    def _rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK64

    def next(self):
        s = self.s
        result = (self._rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = self._rotl(s[3], 45)
        return result

    def below(self, n):
        m = self.next() * n
        low = m & MASK64
        if low < n:
            t = ((1 << 64) - n) % n
            while low < t:
                m = self.next() * n
                low = m & MASK64
        return m >> 64

    def shuffle(self, a):
        for i in range(len(a) - 1, 0, -1):
            j = self.below(i + 1)
            a[i], a[j] = a[j], a[i]


def split(l, ntrain, seed, r):
    """Training and test rows of split r, each ascending (as table43)."""
    rng = Rng((seed * 0x9E3779B97F4A7C15 + r) & MASK64)
    perm = list(range(l))
    rng.shuffle(perm)
    mask = np.zeros(l, dtype=bool)
    mask[perm[:ntrain]] = True
    return np.flatnonzero(mask), np.flatnonzero(~mask)


def read_svmlight(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    ys, rows, n = [], [], 0
    with opener(path, "rt") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if not line:
                continue
            ys.append(float(line[0]))
            row = {}
            for tok in line[1:]:
                if tok.startswith("qid:"):
                    continue
                i, v = tok.split(":")
                row[int(i) - 1] = float(v)
                n = max(n, int(i))
            rows.append(row)
    X = np.zeros((len(rows), n))
    for i, row in enumerate(rows):
        for j, v in row.items():
            X[i, j] = v
    return X, np.array(ys)


def paper_kernels(X):
    """m x l x l: for all features, then each feature: poly d = 1..3 (coef0 1), 10 RBF."""
    l, n = X.shape
    gammas = [10 ** (-3 + 6.0 * t / 9) for t in range(10)]
    K = np.empty((13 * (n + 1), l, l))
    k = 0
    for g in range(n + 1):
        Z = X if g == 0 else X[:, g - 1:g]
        G = Z @ Z.T
        sq = np.diag(G).copy()
        D = np.maximum(sq[:, None] + sq[None, :] - 2 * G, 0)
        for d in (1, 2, 3):
            K[k] = (1 + G) ** d
            k += 1
        for gam in gammas:
            K[k] = np.exp(-gam * D)
            k += 1
    return K


def simplex_ls(V, u, d, skip, eps=1e-10):
    """min ||V'd - u|| over the simplex; V is m x l (rows v_k). d: start, changed in place."""
    m = V.shape[0]
    Qd = np.einsum("kl,kl->k", V, V)
    Qd[skip] = 0
    tol = eps * math.sqrt(Qd.max()) * np.linalg.norm(u)
    if not tol > 0:
        tol = sys.float_info.min
    usable = ~skip
    cols = {}

    def col(k):
        q = cols.get(k)
        if q is None:
            q = cols[k] = V @ V[k]
        return q

    steps, cap = 0, 1000 * m + 100000
    out = np.where(usable, 0.0, -np.inf)  # added to a score: leaves the skipped kernels out

    def pick(g):
        gs = np.where(d > 0, g, -np.inf) + out
        j = int(gs.argmax())
        return j, gs[j] + (out - g).max()  # max_{d_j > 0} g_j - min_k g_k

    with np.errstate(divide="ignore", invalid="ignore"):
        for _ in range(20):
            g = V @ (d @ V - u)
            while True:
                j, gap = pick(g)
                if gap <= tol or steps >= cap:
                    break
                qj = col(j)
                a = Qd + Qd[j] - 2 * qj
                diff = g[j] - g
                gain = np.where(a > 0, diff * diff / a, np.inf)
                gain = np.where(diff > 0, gain, -np.inf) + out
                gain[j] = -np.inf
                i = int(gain.argmax())
                qi = col(i)
                a = Qd[i] + Qd[j] - 2 * qi[j]
                t = (g[j] - g[i]) / a if a > 0 else d[j]
                if t >= d[j]:
                    t = d[j]
                    d[j] = 0
                else:
                    d[j] -= t
                d[i] += t
                g += t * (qi - qj)
                steps += 1
            g = V @ (d @ V - u)
            j, gap = pick(g)
            if gap <= tol or steps >= cap:
                break
    d /= d.sum()
    return steps


def rls2_path(K, s_zero, tr, te, yall, lambdas, classification, delta, max_iter=1000):
    """One split's path: per lambda (test metric, kernels, iterations)."""
    m = K.shape[0]
    Ktr = np.take(np.take(K, tr, axis=1), tr, axis=2)
    Kte = np.take(np.take(K, te, axis=1), tr, axis=2)
    n = len(tr)
    y = yall[tr].copy()
    mean = 0.0 if classification else y.mean()
    y -= mean
    ynorm = np.linalg.norm(y)
    Kflat = Ktr.reshape(m * n, n)
    a = (Kflat @ y).reshape(m, n) @ y
    a[s_zero] = -np.inf
    d = np.zeros(m)
    d[int(np.argmax(a))] = 1
    out = []
    for lam in lambdas:
        it = 0
        while True:
            act = np.flatnonzero(d > 0)
            A = np.tensordot(d[act], Ktr[act], axes=1)
            A[np.diag_indices(n)] += lam
            c = np.linalg.solve(A, y)
            V = (Kflat @ c).reshape(m, n)
            u = y - lam * c / 2
            simplex_ls(V, u, d, s_zero)
            it += 1
            res = np.linalg.norm(d @ V + lam * c - y) / ynorm if ynorm > 0 else 0
            if res <= delta or it >= max_iter:
                break
        act = np.flatnonzero(d > 0)
        dec = np.tensordot(d[act], Kte[act], axes=1) @ c + mean
        if classification:
            pred = np.where(dec > 0, 1.0, -1.0)
            metric = 100.0 * np.mean(pred == yall[te])
        else:
            metric = math.sqrt(np.mean((dec - yall[te]) ** 2))
        out.append((metric, len(act), it))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--task", choices=["class", "reg"])
    ap.add_argument("--standardize", action="store_true")
    ap.add_argument("--drop-constant", action="store_true")
    ap.add_argument("--train-fraction", type=float, default=0.7)
    ap.add_argument("-r", "--splits", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-e", "--delta", type=float, default=1e-2)
    ap.add_argument("--name")
    ap.add_argument("--raw", help="per split and lambda CSV (as table43 --raw)")
    o = ap.parse_args()

    t0 = time.perf_counter()
    X, y = read_svmlight(o.file)
    classification = o.task == "class" if o.task else bool(np.all(np.abs(y) == 1))
    const = np.all(X == X[0], axis=0)
    if o.drop_constant:
        X = X[:, ~const]
    if o.standardize:
        mu, sd = X.mean(0), X.std(0, ddof=1)
        X = np.where(sd > 0, (X - mu) / np.where(sd > 0, sd, 1), 0.0)
    t1 = time.perf_counter()
    K = paper_kernels(X)
    tr_k = np.einsum("kii->k", K)
    s = np.where(tr_k > 1e-12 * np.abs(tr_k), 1 / np.where(tr_k != 0, tr_k, 1), 0.0)
    s_zero = s == 0
    K *= s[:, None, None]
    t2 = time.perf_counter()

    l = X.shape[0]
    ntrain = int(math.floor(o.train_fraction * l + 0.5))
    lambdas = np.exp(np.log(1e6) + (np.log(1e-6) - np.log(1e6)) * np.arange(30) / 29)
    res, secs, cpus = [], [], []
    for r in range(o.splits):
        tr, te = split(l, ntrain, o.seed, r)
        p0, c0 = time.perf_counter(), time.process_time()
        res.append(rls2_path(K, s_zero, tr, te, y, lambdas, classification, o.delta))
        secs.append(time.perf_counter() - p0)
        cpus.append(time.process_time() - c0)
    R = np.array(res)  # splits x lambdas x (metric, kernels, iterations)
    mean_metric = R[:, :, 0].mean(0)
    best = int(np.argmax(mean_metric) if classification else np.argmin(mean_metric))

    def ms(v):
        v = np.asarray(v, dtype=float)
        return v.mean(), (v.std(ddof=1) if len(v) > 1 else 0.0)

    tm, ts = ms(R[:, best, 0])
    km, ks = ms(R[:, best, 1])
    im, is_ = ms(R[:, :, 2].sum(1))
    sm, ss = ms(secs)
    cm, cs = ms(cpus)
    name = o.name or o.file.rsplit("/", 1)[-1]
    print(f"dataset={name} task={'class' if classification else 'reg'} "
          f"ratio={100 * o.train_fraction:.0f}/{100 * (1 - o.train_fraction):.0f} "
          f"splits={o.splits} rows={l} train={ntrain} features={X.shape[1]} m={K.shape[0]} "
          f"metric={'acc' if classification else 'rmse'} test_mean={tm:.4g} test_sd={ts:.3g} "
          f"kernels_mean={km:.3g} kernels_sd={ks:.3g} iter_mean={im:.4g} iter_sd={is_:.3g} "
          f"path_s_mean={sm:.4g} path_s_sd={ss:.3g} path_cpu_mean={cm:.4g} path_cpu_sd={cs:.3g} "
          f"lambda_best={lambdas[best]:.4g} "
          f"bank_s={t2 - t1:.4f} read_s={t1 - t0:.4f}")
    if o.raw:
        with open(o.raw, "w") as f:
            f.write(f"split,lambda,{'accuracy' if classification else 'rmse'},kernels,"
                    "iterations\n")
            for r in range(o.splits):
                for t, lam in enumerate(lambdas):
                    f.write(f"{r},{lam:.10g},{R[r, t, 0]:.10g},{R[r, t, 1]:.0f},"
                            f"{R[r, t, 2]:.0f}\n")


if __name__ == "__main__":
    main()
