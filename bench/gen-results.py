#!/usr/bin/env python3
"""Writes a synthetic results directory in the layout of src/store.rs, for
bench/report.sh: NAMES targets x REPEATS runs x the 32 reported sysbench tests
x THREADS thread counts (default 4 x 3 x 28 x 3 = 1,008 results; the four
Krows tests and the rest mixed), each with SECONDS per-second samples and
hardware figures, like a real run of that length.

usage: gen-results.py DIR [--names 4] [--repeats 3] [--tests 28] [--threads 1,4,16] [--seconds 60]
       gen-results.py DIR --from RUN_DIR --runs 2000 [--names 20] [--every 1] [--noise 0.03]

With --from, copies a real stored run (e.g. one `rqps run --profile ci`) RUNS
times instead: NAMES targets in turn, one run EVERY minutes apart, each test's
QPS (and its per-second series) scaled by a level per name and NOISE of
noise (--noise 0: exact copies, every value tied, as a directory of copied
runs has), everything else (histograms, hardware figures, parameters) as
stored.
Prints the number of runs.
"""

import argparse
import json
import os
import random

GROUPS = {
    "point": ["point-query", "random-points_range=10", "random-points_range=100",
              "random-points_range=1000", "hot-points", "points-covered-pk",
              "points-notcovered-pk", "points-covered-si", "points-notcovered-si"],
    "range": ["range-covered-pk", "range-notcovered-pk", "range-covered-si",
              "range-notcovered-si", "scan"],
    "range-agg": ["read-only_range=10", "read-only_range=100", "read-only_range=10000",
                  "read-only-simple", "read-only-sum", "read-only-order",
                  "read-only-distinct", "read-only-count"],
    "write": ["update-inlist", "update-index", "update-nonindex", "update-one",
              "update-zipf", "write-only", "read-write_range=10", "read-write_range=100",
              "delete", "insert"],
}


def copies(a):
    """Writes a.runs copies of the run in a.src under a.dir."""
    rnd = random.Random(7)
    with open(os.path.join(a.src, "run.json")) as f:
        run = json.load(f)
    tests = []
    for t in sorted(os.listdir(os.path.join(a.src, "tests"))):
        with open(os.path.join(a.src, "tests", t)) as f:
            tests.append((t, json.load(f)))
    levels = [1.0 + 0.02 * ((n * 7) % 5 - 2) for n in range(a.names)]
    for i in range(a.runs):
        n = i % a.names
        name = f"v{n + 1}"
        day, minute = divmod(i * a.every, 24 * 60)
        started = f"2025-{1 + day // 28:02d}-{1 + day % 28:02d}T{minute // 60:02d}:{minute % 60:02d}:00Z"
        run_id = f"2025{1 + day // 28:02d}{1 + day % 28:02d}-{minute // 60:02d}{minute % 60:02d}00-{name}"
        d = os.path.join(a.dir, run_id)
        os.makedirs(os.path.join(d, "tests"))
        doc = dict(run, run_id=run_id, name=name, started=started, finished=started)
        doc.pop("owner", None)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump(doc, f)
        for file, t in tests:
            k = levels[n] * rnd.uniform(1 - a.noise, 1 + a.noise) if a.noise > 0 else 1.0
            r = dict(t, started=started)
            for key in ("qps", "tps", "statements_per_sec"):
                if isinstance(r.get(key), (int, float)):
                    r[key] = r[key] * k
            r["per_second"] = [
                dict(s, **{q: s[q] * k for q in ("qps", "tps") if isinstance(s.get(q), (int, float))})
                for s in t.get("per_second", [])
            ]
            with open(os.path.join(d, "tests", file), "w") as f:
                json.dump(r, f)
    print(a.runs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--from", dest="src")
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--every", type=int, default=1, help="minutes between runs (--from)")
    ap.add_argument("--noise", type=float, default=0.03,
                    help="QPS noise of each copy (--from); 0: exact copies, QPS as stored")
    ap.add_argument("--names", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tests", type=int, default=28)
    ap.add_argument("--threads", default="1,4,16")
    ap.add_argument("--seconds", type=int, default=60)
    a = ap.parse_args()
    if a.src:
        if a.names == 4:
            a.names = 20
        return copies(a)
    rnd = random.Random(7)
    tests = [(t, g) for g, ts in GROUPS.items() for t in ts][: a.tests]
    threads = [int(x) for x in a.threads.split(",")]
    count = 0
    for rep in range(a.repeats):
        for n in range(a.names):
            name = f"v{n + 1}"
            run_id = f"20250101-{rep:02d}{n:02d}00-{name}"
            d = os.path.join(a.dir, run_id)
            os.makedirs(os.path.join(d, "tests"), exist_ok=True)
            doc = {
                "rqps_version": "0.1.0", "run_id": run_id, "name": name,
                "suite": "sysbench", "status": "ok",
                "started": f"2025-01-01T{rep:02d}:{n:02d}:00Z",
                "command_line": ["rqps", "run"], "target": "synthetic",
                "engine": {"name": "postgres", "version": f"16.{n}"},
                "settings": {"shared_buffers": f"{128 * (n + 1)}MB", "jit": "on"},
                "params": {"list": "current", "profile": "synthetic", "seed": rep},
                "host": {"hostname": "h", "os": "linux", "arch": "x86_64", "cpus": 8},
            }
            with open(os.path.join(d, "run.json"), "w") as f:
                json.dump(doc, f)
            seq = 0
            for t, g in tests:
                level = 1.0 + 0.04 * n * (1 if sum(map(ord, t)) % 2 else -1)
                for th in threads:
                    seq += 1
                    qps = 10000.0 * th ** 0.8 * level * rnd.uniform(0.97, 1.03)
                    r = {
                        "suite": "sysbench", "test": t, "group": g, "threads": th,
                        "reported": True, "status": "ok", "started": doc["started"],
                        "secs": float(a.seconds), "warmup_secs": 5.0, "qps": qps,
                        "qps_unit": "Krows/s" if t == "scan" else "statements/s",
                        "tps": qps, "statements_per_sec": qps, "reads": 1, "writes": 0,
                        "other": 0, "events": 1, "errors": 0, "reconnects": 0, "rows": 1,
                        "latency_us": {"avg": 90.0, "p50": 80.0, "p95": 150.0,
                                       "p99": 300.0, "max": 9000.0},
                        "per_second": [
                            {"t": s, "qps": qps * rnd.uniform(0.95, 1.05),
                             "tps": qps, "errors": 0}
                            for s in range(1, a.seconds + 1)
                        ],
                        "hw": {"ops": qps * a.seconds, "cpu_us_per_op": 50.0 * level,
                               "server_cpu_us_per_op": 35.0, "client_cpu_us_per_op": 15.0,
                               "cs_per_op": 2.0, "reads_per_op": 0.0, "rkb_per_op": 0.0,
                               "wkb_per_op": 0.5, "unavailable": [], "per_second": []},
                    }
                    with open(os.path.join(d, "tests", f"{seq:03d}-{t}-t{th}.json"), "w") as f:
                        json.dump(r, f)
                    count += 1
    print(count)


if __name__ == "__main__":
    main()
