#!/usr/bin/env python3
"""table43_scale.py - the Table 4.3 protocol's time on P ranks (table43-mpi), predicted from
one measured run of bench/rls2/table43.sh with OUT_DIR (doc/scale.md).

    table43_scale.py OUT_DIR TABLE43.md [LAUNCH_S] [P ...]

Per dataset and ratio (a table43-mpi launch): split r runs on rank r mod P, so the paths
take max_q sum_{r = q mod P} t_r, where t_r is split r's path time: the sum of its
per-lambda solver seconds (OUT_DIR/NAME-RATIO.raw.csv) scaled so that their mean is the
measured mean CPU seconds per path (Table 4.4's "cpu s": one path on an idle core). Each
launch adds LAUNCH_S (mpirun, default 0.8 s) and the kernel bank (Table 4.4's "bank s";
every rank builds it, at the same time). The gather is 8 (4 x 30 + 3) bytes per split,
about 0.1 MB per launch: left out. Prints the total for each P, with the ideal
max(longest path, sum / P) per launch next to it.
"""
import re
import sys


def main():
    out_dir, md = sys.argv[1], sys.argv[2]
    launch = float(sys.argv[3]) if len(sys.argv) > 3 else 0.8
    ps = [int(p) for p in sys.argv[4:]] or [1, 2, 4, 8, 16, 32, 64]
    runs = []
    # Table 4.4 rows: | Title | 60/40 | kernels | thesis | iterations | thesis | s | cpu s |
    # thesis s | bank s | paths wall s |
    for line in open(md):
        f = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(f) != 11 or not re.fullmatch(r'\d+/\d+', f[1]):
            continue
        name, ratio = f[0].lower(), f[1].split('/')[0]
        cpu = float(f[7].split('(')[0])
        bank = float(f[9])
        t = {}
        with open(f"{out_dir}/{name}-{ratio}.raw.csv") as raw:
            next(raw)
            for row in raw:
                c = row.split(',')
                t[int(c[0])] = t.get(int(c[0]), 0.0) + float(c[5])
        mean = sum(t.values()) / len(t)
        times = [t[r] * cpu / mean for r in sorted(t)]
        runs.append((name, ratio, bank, times))
    if not runs:
        sys.exit("table43_scale.py: no Table 4.4 rows in " + md)
    npaths = sum(len(r[3]) for r in runs)
    print(f"{len(runs)} launches, {npaths} paths, {sum(sum(r[3]) for r in runs):.1f} s of "
          f"paths on one core, launch {launch} s")
    print("| P | predicted wall (static r mod P) | ideal (max(longest, sum/P)) |")
    print("|---:|---:|---:|")
    for p in ps:
        total = ideal = 0.0
        for _, _, bank, times in runs:
            per_rank = [sum(times[q::p]) for q in range(p)]
            total += launch + bank + max(per_rank)
            ideal += launch + bank + max(max(times), sum(times) / p)
        print(f"| {p} | {total:.1f} s | {ideal:.1f} s |")


if __name__ == "__main__":
    main()
