#!/usr/bin/env python3
"""rls2util.py - small helpers for the bench/rls2 scripts (Python standard library only).

Data:
  mirror IN OUT               every row (y, x) followed by (-y, -x): the mean of y is 0, so
                              rls2-path's output centering does nothing and a linear model
                              has no intercept (see bench/rls2/experiment1.sh)
  center TRAIN TEST OTR OTE   features minus their TRAIN means (all indices up to the largest
                              in either file), written densely (exact zeros omitted)
  keep IN OUT SPEC            keep the features in SPEC (e.g. 1-3 or 1,4,7-9)
  rowstd IN OUT NFEAT         every row to mean 0 and sd 1 (divisor NFEAT - 1) over its NFEAT
                              features (absent ones count as 0): per-sample standardization
  esl2svm X Y OUT             ESL's 14cancer.xtrain/xtest (genes in rows, samples in columns,
                              blank- or comma-separated) and ytrain/ytest (one label per
                              sample) to svmlight (one sample per row)
Path tables (the CSV of rls2-path -o):
  best CSV COLUMN min|max     the best row of COLUMN (ties: the first, i.e. the larger lambda):
                              prints "row lambda value lambdaspec" where lambdaspec =
                              lambda_row:lambda_0:row+1, the -L that reruns the same path up
                              to that row (same lambdas, same warm starts)
  column CSV COLUMN           one column, one value a line
RLS2 models (linear basis kernels, one feature each):
  coef MODEL [NAMES]          intercept and, per kept feature k and decision function j,
                              s_kj, d_kj, z_kj = sum_i c_ij x_ik and w_kj = d_kj s_kj z_kj
                              (thesis (4.7)); NAMES: comma-separated feature names
  genes MODEL                 the number of distinct features among the basis lines (the
                              union over the one-versus-all decision functions)
Errors:
  testerr PRED TEST           MSE of the predictions (one a line) against TEST's labels and
                              its standard error (sd of the squared errors / sqrt(n))
"""
import math
import sys


def die(msg):
    sys.stderr.write("rls2util: %s\n" % msg)
    sys.exit(2)


def read_svm(path):
    rows = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            t = line.split("#", 1)[0].split()
            if not t:
                continue
            x = {}
            for tok in t[1:]:
                if tok.startswith("qid:"):
                    continue
                i, _, v = tok.partition(":")
                try:
                    x[int(i)] = float(v)
                except ValueError:
                    die("%s:%d: bad pair '%s'" % (path, ln, tok))
            rows.append((float(t[0]), x))
    return rows


def fmt(v):
    return repr(float(v))  # shortest string that reads back to the same double


def write_row(f, y, items):
    f.write(fmt(y))
    for i, v in items:
        if v != 0:
            f.write(" %d:%s" % (i, fmt(v)))
    f.write("\n")


def cmd_mirror(a):
    rows = read_svm(a[0])
    with open(a[1], "w") as f:
        for y, x in rows:
            items = sorted(x.items())
            write_row(f, y, items)
            write_row(f, -y, [(i, -v) for i, v in items])


def cmd_center(a):
    tr, te = read_svm(a[0]), read_svm(a[1])
    n = max([max(x) for _, x in tr + te if x] + [0])
    mean = [0.0] * (n + 1)
    for _, x in tr:
        for i, v in x.items():
            mean[i] += v
    mean = [m / len(tr) for m in mean]
    for rows, out in ((tr, a[2]), (te, a[3])):
        with open(out, "w") as f:
            for y, x in rows:
                write_row(f, y, [(i, x.get(i, 0.0) - mean[i]) for i in range(1, n + 1)])


def parse_spec(spec):
    keep = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        keep.update(range(int(lo), int(hi or lo) + 1))
    return keep


def cmd_keep(a):
    keep = parse_spec(a[2])
    with open(a[1], "w") as f:
        for y, x in read_svm(a[0]):
            write_row(f, y, sorted((i, v) for i, v in x.items() if i in keep))


def cmd_rowstd(a):
    n = int(a[2])
    with open(a[1], "w") as f:
        for y, x in read_svm(a[0]):
            if max(x, default=0) > n:
                die("%s: feature %d beyond NFEAT = %d" % (a[0], max(x), n))
            mean = sum(x.values()) / n
            ss = sum((v - mean) ** 2 for v in x.values()) + (n - len(x)) * mean * mean
            sd = math.sqrt(ss / (n - 1)) if n > 1 else 0.0
            sd = sd if sd > 0 else 1.0
            write_row(f, y, [(i, (x.get(i, 0.0) - mean) / sd) for i in range(1, n + 1)])


def cmd_esl2svm(a):
    def numbers(path):
        with open(path) as f:
            return [[float(t) for t in line.replace(",", " ").split()]
                    for line in f if line.strip()]
    X = numbers(a[0])
    y = [v for row in numbers(a[1]) for v in row]
    if not X or any(len(r) != len(X[0]) for r in X):
        die("%s: rows of unequal length (expected genes in rows, samples in columns)" % a[0])
    if len(X[0]) != len(y):
        die("%s has %d samples (columns) but %s has %d labels"
            % (a[0], len(X[0]), a[1], len(y)))
    with open(a[2], "w") as f:
        for s in range(len(y)):
            if y[s] != int(y[s]):
                die("%s: label %r is not an integer class" % (a[1], y[s]))
            write_row(f, int(y[s]), [(g + 1, X[g][s]) for g in range(len(X))])


def read_csv(path):
    with open(path) as f:
        head = f.readline().strip().split(",")
        rows = [dict(zip(head, line.strip().split(","))) for line in f if line.strip()]
    return head, rows


def cmd_best(a):
    head, rows = read_csv(a[0])
    col, how = a[1], a[2]
    if col not in head:
        die("%s: no column %s (columns: %s)" % (a[0], col, ",".join(head)))
    best = None
    for t, r in enumerate(rows):
        if r[col] == "":
            continue
        v = float(r[col])
        if best is None or (v < best[1] if how == "min" else v > best[1]):
            best = (t, v)
    if best is None:
        die("%s: column %s is empty" % (a[0], col))
    t = best[0]
    print(t, rows[t]["lambda"], best[1], "%s:%s:%d" % (rows[t]["lambda"], rows[0]["lambda"],
                                                        t + 1))


def cmd_column(a):
    head, rows = read_csv(a[0])
    if a[1] not in head:
        die("%s: no column %s" % (a[0], a[1]))
    for r in rows:
        print(r[a[1]])


def read_model(path):
    """Header dict, basis list [(s list, d list, kernel text)], intercepts, sv list."""
    hdr, basis, icpt, sv = {}, [], [], []
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f]
    i = 0
    while i < len(lines) and lines[i] != "basis":
        k, _, v = lines[i].partition(" ")
        hdr[k] = v
        i += 1
    if i == len(lines):
        die("%s: no basis section (not an RLS2 model?)" % path)
    nw, nb = int(hdr["nr_w"]), int(hdr["nr_basis"])
    for ln in lines[i + 1:i + 1 + nb]:
        t = ln.split(" ", 2 * nw)
        basis.append(([float(v) for v in t[:nw]], [float(v) for v in t[nw:2 * nw]],
                      t[2 * nw]))
    i += 1 + nb
    icpt = [float(v) for v in lines[i].split()[1:]]
    i += 1
    nsv = int(lines[i].split()[1])
    for ln in lines[i + 2:i + 2 + nsv]:
        t = ln.split()
        c = [float(v) for v in t[:nw]]
        x = {}
        for tok in t[nw:]:
            k, _, v = tok.partition(":")
            x[int(k)] = float(v)
        sv.append((c, x))
    return hdr, basis, icpt, sv


def feature_of(kernel):
    """The one feature of a 'linear features=k' basis kernel, else None."""
    t = kernel.split()
    if t[0] != "linear" or len(t) != 2 or not t[1].startswith("features="):
        return None
    spec = t[1][len("features="):]
    return int(spec) if spec.isdigit() else None


def cmd_coef(a):
    hdr, basis, icpt, sv = read_model(a[0])
    names = a[1].split(",") if len(a) > 1 and a[1] else []
    nw = int(hdr["nr_w"])
    print("lambda", hdr.get("lambda"))
    print("intercept", " ".join("%.6g" % v for v in icpt))
    print("feature name j s d z w")
    for s, d, kern in basis:
        k = feature_of(kern)
        if k is None:
            die("%s: basis kernel '%s' is not linear on one feature" % (a[0], kern))
        name = names[k - 1] if k - 1 < len(names) else "x%d" % k
        for j in range(nw):
            z = sum(c[j] * x.get(k, 0.0) for c, x in sv)
            print(k, name, j + 1, "%.6g" % s[j], "%.6g" % d[j], "%.6g" % z,
                  "%.6g" % (d[j] * s[j] * z))


def cmd_genes(a):
    hdr, basis, icpt, sv = read_model(a[0])
    feats = set()
    for s, d, kern in basis:
        k = feature_of(kern)
        if k is None:
            die("%s: basis kernel '%s' is not linear on one feature" % (a[0], kern))
        if any(v > 0 for v in d):
            feats.add(k)
    print(len(feats))


def cmd_testerr(a):
    with open(a[0]) as f:
        pred = [float(line) for line in f if line.strip()]
    y = [yy for yy, _ in read_svm(a[1])]
    if len(pred) != len(y):
        die("%d predictions for %d test rows" % (len(pred), len(y)))
    se = [(p - t) ** 2 for p, t in zip(pred, y)]
    n = len(se)
    mse = sum(se) / n
    sd = math.sqrt(sum((e - mse) ** 2 for e in se) / (n - 1)) if n > 1 else float("nan")
    print("%.6g %.6g" % (mse, sd / math.sqrt(n)))


COMMANDS = {"mirror": (cmd_mirror, 2), "center": (cmd_center, 4), "keep": (cmd_keep, 3), "rowstd": (cmd_rowstd, 3),
            "esl2svm": (cmd_esl2svm, 3), "best": (cmd_best, 3), "column": (cmd_column, 2),
            "coef": (cmd_coef, 1), "genes": (cmd_genes, 1), "testerr": (cmd_testerr, 2)}


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return
    cmd = COMMANDS.get(sys.argv[1])
    if not cmd:
        die("unknown command '%s' (see -h)" % sys.argv[1])
    args = sys.argv[2:]
    if len(args) < cmd[1]:
        die("%s needs %d arguments (see -h)" % (sys.argv[1], cmd[1]))
    cmd[0](args)


if __name__ == "__main__":
    main()
