#!/usr/bin/env python3
"""Writes outdegree.dat: the out-degree distribution of the LinkBench load.

Facts it meets (spec A2): 45 % of nodes have no links, the largest out-degree
is 961,963, the mean is 4.74. The shape between them is a Lomax (Pareto II)
tail with index 2: P(X > k) = 0.55 * (c / (k + c))^2, tabled exactly at
0..100 and at about 10 % steps above, each tabled value taking the mass up to
it; c is solved so that the table's own mean is 4.74.
Each line: out-degree, cumulative probability.
"""
ZERO, MAX, MEAN, B = 0.45, 961_963, 4.74, 2.0

def grid():
    v = list(range(0, 101))
    x = 100.0
    while True:
        x *= 1.1
        if x >= MAX:
            break
        if int(x) > v[-1]:
            v.append(int(x))
    v.append(MAX)
    return v

def table(c):
    rows = []
    for k in grid():
        s = (1 - ZERO) * (c / (k + c)) ** B if k < MAX else 0.0
        rows.append((k, 1.0 - s))
    return rows

def mean(rows):
    m, prev = 0.0, 0.0
    for k, cdf in rows:
        m += k * (cdf - prev)
        prev = cdf
    return m

lo, hi = 0.1, 100.0
for _ in range(200):
    mid = (lo + hi) / 2
    if mean(table(mid)) < MEAN:
        lo = mid
    else:
        hi = mid
rows = table(lo)
with open("outdegree.dat", "w") as f:
    f.write("# LinkBench out-degree distribution: out-degree, cumulative probability\n")
    f.write(f"# made by make_outdegree.py (Lomax tail, index 2, c = {lo:.6f}); mean {mean(rows):.6f}\n")
    for k, cdf in rows:
        f.write(f"{k} {cdf:.12f}\n")

if __name__ == "__main__":
    import math
    for n in (2000, 5000, 10000, 20000, 100000):
        tot = 0
        for s in range(n):
            u = 1 - (s + 0.5) / n
            for k, cdf in rows:
                if cdf >= u:
                    tot += k
                    break
        print(n, tot / n, tot / n / MEAN - 1)
