#!/usr/bin/env python3
"""Summarise runs.csv from run.sh (Markdown on stdout).

Usage: summarize.py runs.csv [idle_conns] [headroom_min]

Medians over rounds per (kind, regime, target); "per CPU-s" is the rate
divided by the proxy's CPU share (user + system, all its processes and
threads); every ratio is to nginx in the same kind and regime. The origin
headroom section compares the origin alone ("direct") with the fastest proxy
and prints a WARNING line when it is below headroom_min (1.5).
"""
import csv
import statistics
import sys
from collections import defaultdict

ROUTES = [
    ("get1k", "GET 1 KiB"),
    ("post4k", "POST 4 KiB upload"),
    ("chunk64k", "GET 64 KiB chunked"),
    ("ws", "WebSocket echo 1 KiB (messages)"),
]
ORDER = ["nginx", "haproxy", "gantry", "traefik", "direct"]
REGIMES = [("A", "proxy pinned to CPU 0, one worker / GOMAXPROCS=1; origins on CPU 1; load client on LOAD_CPU, see versions.txt"), ("B", "unpinned")]


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def mx(vals):
    vals = [v for v in vals if v is not None]
    return max(vals) if vals else None


def col(rows, key):
    return med([num(r[key]) for r in rows])


def eff(r):
    rps, cpu = num(r["rps"]), num(r["cpu_pct"])
    return rps / (cpu / 100) if rps and cpu else None


def fmt(v, nd=1):
    return "-" if v is None else f"{v:,.{nd}f}"


def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def order(t):
    return (ORDER.index(t) if t in ORDER else len(ORDER), t)


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    idle_n = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
    need = float(sys.argv[3]) if len(sys.argv) > 3 else 1.5
    g = defaultdict(list)
    for r in rows:
        g[(r["kind"], r["regime"], r["target"])].append(r)
    routes = [(k, n) for k, n in ROUTES if any(key[0] == k for key in g)]
    print("\n# Gantry side-by-side benchmark (medians over rounds; ratios to nginx in the same run)\n")

    # -- origin headroom -------------------------------------------------
    print("## Origin headroom (origin alone vs the fastest proxy, best round of each; must be >= %.1fx)\n" % need)
    print("| regime | route | origin alone /s | origin per origin CPU-s | fastest proxy | its rate /s | headroom | |")
    print("|---|---|---|---|---|---|---|---|")
    warnings = []
    for reg, _ in REGIMES:
        for kind, name in routes:
            # Best round of each: on a shared machine noise only ever lowers a rate.
            drs = g.get((kind, reg, "direct"), [])
            direct = mx([num(r["rps"]) for r in drs])
            cap = med([eff(r) for r in drs])
            best, best_t = None, "-"
            for (k, rr, t), rs in g.items():
                if k == kind and rr == reg and t != "direct" and not t.endswith("-10k"):
                    v = mx([num(r["rps"]) for r in rs])
                    if v is not None and (best is None or v > best):
                        best, best_t = v, t
            if direct is None or best is None:
                continue
            h = direct / best
            ok = h >= need
            print(f"| {reg} | {name} | {fmt(direct, 0)} | {fmt(cap, 0)} | {best_t} | {fmt(best, 0)} | {h:.2f}x | {'ok' if ok else '**LOW**'} |")
            if not ok:
                warnings.append(f"WARNING: origin headroom {h:.2f}x < {need}x for {name} in regime {reg}: "
                                f"the origin alone serves {direct:,.0f}/s and {best_t} {best:,.0f}/s; "
                                "the proxies' figures for this route may be limited by the origin and load side rather than by the proxy")
    print()
    for w in warnings:
        print(f"**{w}**\n")

    # -- headline --------------------------------------------------------
    print("## Requests (messages) per proxy CPU-second, ratio to nginx\n")
    hdr = "| proxy | " + " | ".join(f"{n} A | B | p99 A ms" for _, n in routes) + " |"
    print(hdr)
    print("|---|" + "---|---|---|" * len(routes))
    targets = sorted({t for (k, _, t) in g if k in dict(routes) and t != "direct"}, key=order)
    for t in targets:
        cells = []
        for kind, _ in routes:
            for reg in ("A", "B"):
                base = med([eff(r) for r in g.get((kind, reg, "nginx"), [])])
                mine = med([eff(r) for r in g.get((kind, reg, t), [])])
                cells.append(ratio(mine, base) + (f" ({fmt(mine, 0)})" if t == "nginx" and mine else ""))
            cells.append(fmt(col(g.get((kind, "A", t), []), "p99_ms"), 2))
        print(f"| {t} | " + " | ".join(cells) + " |")
    print()

    # -- detail per regime and route ---------------------------------------
    for reg, title in REGIMES:
        for kind, name in routes:
            keys = sorted([k for k in g if k[0] == kind and k[1] == reg], key=lambda k: order(k[2]))
            if not keys:
                continue
            print(f"### {name}, regime {reg} ({title})\n")
            print("| target | runs | rate /s | p50 ms | p99 ms | proxy CPU % (usr+sys) | per CPU-s | CPU µs/req usr | sys | "
                  "vs nginx per CPU | p99 vs nginx | origins CPU % | load CPU % | RSS load MiB | errors |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            base = g.get((kind, reg, "nginx"), [])
            b_eff, b_p99 = med([eff(r) for r in base]), col(base, "p99_ms")
            for k in keys:
                rs = g[k]
                rps, cpu, usr, sys_ = col(rs, "rps"), col(rs, "cpu_pct"), col(rs, "usr_pct"), col(rs, "sys_pct")
                e = med([eff(r) for r in rs])
                us_u = usr / 100 / rps * 1e6 if usr is not None and rps else None
                us_s = sys_ / 100 / rps * 1e6 if sys_ is not None and rps else None
                rl = col(rs, "rss_load_kb")
                errs = sum(int(num(r["errors"]) or 0) for r in rs)
                print(f"| {k[2]} | {len(rs)} | {fmt(rps, 0)} | {fmt(col(rs, 'p50_ms'), 2)} | {fmt(col(rs, 'p99_ms'), 2)} | "
                      f"{fmt(cpu)} ({fmt(usr)}+{fmt(sys_)}) | {fmt(e, 0)} | {fmt(us_u)} | {fmt(us_s)} | {ratio(e, b_eff)} | "
                      f"{ratio(col(rs, 'p99_ms'), b_p99)} | {fmt(col(rs, 'origin_cpu_pct'))} | {fmt(col(rs, 'load_cpu_pct'))} | "
                      f"{fmt(rl and rl / 1024)} | {errs} |")
            print()
        many = g.get(("get1k", reg, "gantry-10k"), [])
        one = g.get(("get1k", reg, "gantry"), [])
        if many and one:
            print(f"Gantry with 10 000 routers, regime {reg}: {fmt(col(many, 'rps'), 0)}/s vs {fmt(col(one, 'rps'), 0)}/s with one "
                  f"router ({ratio(col(many, 'rps'), col(one, 'rps'))}); per CPU-s {ratio(med([eff(r) for r in many]), med([eff(r) for r in one]))}; "
                  f"p99 {fmt(col(many, 'p99_ms'), 2)} ms vs {fmt(col(one, 'p99_ms'), 2)} ms\n")

    tls = {k: v for k, v in g.items() if k[0].startswith("tls-")}
    if tls:
        print("## TLS full handshakes (new connection per request, regime A)\n")
        print("| protocol | target-cert | handshakes/s | proxy CPU % | per proxy CPU-s | vs nginx (RSA, same protocol) |")
        print("|---|---|---|---|---|---|")
        for k in sorted(tls):
            rs = tls[k]
            e = med([eff(r) for r in rs])
            n_e = med([eff(r) for r in tls.get((k[0], k[1], "nginx-rsa"), [])])
            print(f"| {k[0][4:]} | {k[2]} | {fmt(col(rs, 'rps'), 0)} | {fmt(col(rs, 'cpu_pct'))} | {fmt(e, 0)} | {ratio(e, n_e)} |")
        print()
    idle = {k: v for k, v in g.items() if k[0] == "idle"}
    if idle:
        print(f"## {idle_n} idle keep-alive connections\n")
        print("| target | RSS before MiB | RSS held MiB | bytes per connection | connections open |")
        print("|---|---|---|---|---|")
        for k in sorted(idle):
            rs = idle[k]
            ri, rl = col(rs, "rss_idle_kb"), col(rs, "rss_load_kb")
            per = (rl - ri) * 1024 / idle_n if ri is not None and rl is not None else None
            print(f"| {k[2]} | {fmt(ri / 1024)} | {fmt(rl / 1024)} | {fmt(per, 0)} | {rs[0]['errors']} |")


if __name__ == "__main__":
    main()
