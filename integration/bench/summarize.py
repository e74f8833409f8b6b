#!/usr/bin/env python3
"""Summarise runs.csv from run.sh: medians per (kind, regime, target) and each
figure's ratio to nginx in the same kind and regime. Usage:
summarize.py runs.csv [idle_conns]"""
import csv
import statistics
import sys
from collections import defaultdict


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(rows, key):
    vals = [num(r[key]) for r in rows if num(r[key]) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, nd=1):
    return "-" if v is None else f"{v:,.{nd}f}"


def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}x"


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    idle_n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    groups = defaultdict(list)
    for r in rows:
        groups[(r["kind"], r["regime"], r["target"])].append(r)
    print("# Gantry side-by-side benchmark (medians; ratio = target / nginx)\n")
    for regime in ("A", "B"):
        keys = [k for k in groups if k[0] == "http" and k[1] == regime]
        if not keys:
            continue
        print(f"## HTTP keep-alive, regime {regime} ({'proxy pinned to CPU 0' if regime == 'A' else 'unpinned'})\n")
        print("| target | runs | RPS | p50 ms | p99 ms | RSS idle MiB | RSS load MiB | proxy CPU % | req per proxy CPU-s | RPS vs nginx | req/CPU-s vs nginx | p99 vs nginx |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        base = groups.get(("http", regime, "nginx"), [])
        b_rps, b_p99, b_cpu = med(base, "rps"), med(base, "p99_ms"), med(base, "cpu_pct")
        b_eff = b_rps / (b_cpu / 100) if b_rps and b_cpu else None
        for k in sorted(keys, key=lambda k: k[2]):
            g = groups[k]
            rps, p50, p99 = med(g, "rps"), med(g, "p50_ms"), med(g, "p99_ms")
            ri, rl, cpu = med(g, "rss_idle_kb"), med(g, "rss_load_kb"), med(g, "cpu_pct")
            eff = rps / (cpu / 100) if rps and cpu else None
            print(f"| {k[2]} | {len(g)} | {fmt(rps, 0)} | {fmt(p50, 2)} | {fmt(p99, 2)} | {fmt(ri and ri / 1024)} | {fmt(rl and rl / 1024)} | {fmt(cpu)} | {fmt(eff, 0)} | {ratio(rps, b_rps)} | {ratio(eff, b_eff)} | {ratio(p99, b_p99)} |")
        print()
        many = groups.get(("routers10k", regime, "gantry-10k"), [])
        one = groups.get(("http", regime, "gantry"), [])
        if many and one:
            print(f"Gantry with 10 000 routers, regime {regime}: RPS {fmt(med(many, 'rps'), 0)} vs {fmt(med(one, 'rps'), 0)} with one router "
                  f"({ratio(med(many, 'rps'), med(one, 'rps'))}); p99 {fmt(med(many, 'p99_ms'), 2)} ms vs {fmt(med(one, 'p99_ms'), 2)} ms\n")
    tls = {k: v for k, v in groups.items() if k[0].startswith("tls-")}
    if tls:
        print("## TLS full handshakes (new connection per request, regime A)\n")
        print("| protocol | target-cert | handshakes/s | proxy CPU % | handshakes per proxy CPU-s | vs nginx (RSA, same protocol) |")
        print("|---|---|---|---|---|---|")
        for k in sorted(tls):
            g = tls[k]
            rps, cpu = med(g, "rps"), med(g, "cpu_pct")
            eff = rps / (cpu / 100) if rps and cpu else None
            nb = tls.get((k[0], k[1], "nginx-rsa"), [])
            n_rps, n_cpu = med(nb, "rps"), med(nb, "cpu_pct")
            n_eff = n_rps / (n_cpu / 100) if n_rps and n_cpu else None
            print(f"| {k[0][4:]} | {k[2]} | {fmt(rps, 0)} | {fmt(cpu)} | {fmt(eff, 0)} | {ratio(eff, n_eff)} |")
        print()
    idle = {k: v for k, v in groups.items() if k[0] == "idle"}
    if idle:
        print(f"## {idle_n} idle keep-alive connections\n")
        print("| target | RSS before MiB | RSS held MiB | bytes per connection | connections open |")
        print("|---|---|---|---|---|")
        for k in sorted(idle):
            g = idle[k]
            ri, rl = med(g, "rss_idle_kb"), med(g, "rss_load_kb")
            per = (rl - ri) * 1024 / idle_n if ri is not None and rl is not None else None
            print(f"| {k[2]} | {fmt(ri / 1024)} | {fmt(rl / 1024)} | {fmt(per, 0)} | {g[0]['errors']} |")


if __name__ == "__main__":
    main()
