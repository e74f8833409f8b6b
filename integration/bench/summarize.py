#!/usr/bin/env python3
"""Summarise runs.csv from run.sh (Markdown on stdout).

Usage: summarize.py runs.csv [idle_conns] [headroom_min]

Medians over rounds per (kind, regime, target); "per CPU-s" is the rate
divided by the proxy's CPU share (user + system, all its processes and
threads); every ratio is to the route's peer (BASE: nginx for the HTTP
routes, HAProxy for new TCP connections, nginx's stream module for UDP, or
socat when nginx has no stream module) in the same kind and regime, and for
Gantry's access-log and tracing variants to plain Gantry in the same run.
The origin headroom section compares the origin alone ("direct") with the
fastest proxy and prints a WARNING line when it is below headroom_min (1.5).
The last section is one table for a note.
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
    ("h2", "HTTPS HTTP/2 GET 1 KiB (h2load, 10 connections x 10 streams)"),
    ("tcpconn", "TCP new connections (64 B request, 256 B reply, close)"),
    ("tcpbulk", "TCP throughput, one connection (MB echoed)"),
    ("udp", "UDP echo 64 B (datagrams)"),
]
# The peer each route's ratios are taken to (first one present in the run).
BASE = {"tcpconn": ["haproxy", "nginx"], "tcpbulk": ["haproxy", "nginx"], "udp": ["nginx", "socat"]}
OBS = [("gantry-alog", "JSON access log to a file"), ("gantry-metrics", "Prometheus metrics, entrypoint, router and service labels"), ("gantry-trace1", "tracing, sample rate 1.0 (OTLP/HTTP)"),
       ("gantry-trace001", "tracing, sample rate 0.01 (OTLP/HTTP)")]
PEERS = ["gantry", "haproxy", "nginx", "socat"]
ORDER = ["nginx", "haproxy", "socat", "gantry", "traefik", "direct"]
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


def pct(v):
    return "-" if v is None else f"{v * 100:.2f} %"


def ratio(a, b):
    return "-" if a is None or not b else f"{a / b:.2f}"


def order(t):
    return (ORDER.index(t) if t in ORDER else len(ORDER), t)


def base_of(g, kind):
    """The peer the route's ratios are taken to: the first of BASE present."""
    for t in BASE.get(kind, ["nginx"]):
        if any(k[0] == kind and k[2] == t for k in g):
            return t
    return BASE.get(kind, ["nginx"])[0]


def loss(rs):
    """Lost / sent over all rounds (UDP), or None."""
    sent = sum(num(r.get("sent")) or 0 for r in rs)
    lost = sum(num(r.get("lost")) or 0 for r in rs)
    return lost / sent if sent else None


def headroom(g, kind, reg):
    """(origin alone /s, fastest proxy, its rate /s) from the best round of each."""
    drs = g.get((kind, reg, "direct"), [])
    direct = mx([num(r["rps"]) for r in drs])
    best, best_t = None, "-"
    for (k, rr, t), rs in g.items():
        if k == kind and rr == reg and t != "direct" and not t.startswith("gantry-"):
            v = mx([num(r["rps"]) for r in rs])
            if v is not None and (best is None or v > best):
                best, best_t = v, t
    return direct, best_t, best


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
            cap = med([eff(r) for r in g.get((kind, reg, "direct"), [])])
            direct, best_t, best = headroom(g, kind, reg)
            if direct is None or best is None:
                continue
            h = direct / best
            if kind == "tcpbulk":  # one connection is a pipeline: a proxy adds buffers, so the direct path bounds nothing
                print(f"| {reg} | {name} | {fmt(direct, 0)} | {fmt(cap, 0)} | {best_t} | {fmt(best, 0)} | {h:.2f}x | n/a |")
                continue
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
    print("## Units (requests, messages, connections, datagrams) per proxy CPU-second, ratio to the route's peer\n")
    hdr = "| proxy | " + " | ".join(f"{n} A (vs {base_of(g, k)}) | B | p99 A ms" for k, n in routes) + " |"
    print(hdr)
    print("|---|" + "---|---|---|" * len(routes))
    targets = sorted({t for (k, _, t) in g if k in dict(routes) and t != "direct" and not t.startswith("gantry-")}, key=order)
    for t in targets:
        cells = []
        for kind, _ in routes:
            bt = base_of(g, kind)
            for reg in ("A", "B"):
                base = med([eff(r) for r in g.get((kind, reg, bt), [])])
                mine = med([eff(r) for r in g.get((kind, reg, t), [])])
                cells.append(ratio(mine, base) + (f" ({fmt(mine, 0)})" if t == bt and mine else ""))
            cells.append(fmt(col(g.get((kind, "A", t), []), "p99_ms"), 2))
        print(f"| {t} | " + " | ".join(cells) + " |")
    print()

    # -- detail per regime and route ---------------------------------------
    for reg, title in REGIMES:
        for kind, name in routes:
            keys = sorted([k for k in g if k[0] == kind and k[1] == reg], key=lambda k: order(k[2]))
            if not keys:
                continue
            bt = base_of(g, kind)
            print(f"### {name}, regime {reg} ({title})\n")
            print("| target | runs | rate /s | p50 ms | p99 ms | proxy CPU % (usr+sys) | per CPU-s | CPU µs/unit usr | sys | "
                  f"vs {bt} per CPU | p99 vs {bt} | origins CPU % | load CPU % | RSS load MiB | errors | lost |")
            print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
            base = g.get((kind, reg, bt), [])
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
                      f"{fmt(rl and rl / 1024)} | {errs} | {pct(loss(rs)) if kind == 'udp' else '-'} |")
            print()
        many = g.get(("get1k", reg, "gantry-10k"), [])
        one = g.get(("get1k", reg, "gantry"), [])
        if many and one:
            print(f"Gantry with 10 000 routers, regime {reg}: {fmt(col(many, 'rps'), 0)}/s vs {fmt(col(one, 'rps'), 0)}/s with one "
                  f"router ({ratio(col(many, 'rps'), col(one, 'rps'))}); per CPU-s {ratio(med([eff(r) for r in many]), med([eff(r) for r in one]))}; "
                  f"p99 {fmt(col(many, 'p99_ms'), 2)} ms vs {fmt(col(one, 'p99_ms'), 2)} ms\n")

    obs = [(t, n) for t, n in OBS if any(k[2] == t for k in g)]
    if obs:
        print("## Gantry with access logs and tracing (issue 17), GET 1 KiB, ratio to plain Gantry in the same run\n")
        print("| variant | per CPU-s A | vs plain A | p99 vs plain A | per CPU-s B | vs plain B | p99 vs plain B | errors |")
        print("|---|---|---|---|---|---|---|---|")
        for t, n in obs:
            cells = []
            for reg in ("A", "B"):
                plain, mine = g.get(("get1k", reg, "gantry"), []), g.get(("get1k", reg, t), [])
                e = med([eff(r) for r in mine])
                cells += [fmt(e, 0), ratio(e, med([eff(r) for r in plain])), ratio(col(mine, "p99_ms"), col(plain, "p99_ms"))]
            errs = sum(int(num(r["errors"]) or 0) for k, rs in g.items() if k[2] == t for r in rs)
            print(f"| {n} | " + " | ".join(cells) + f" | {errs} |")
        print()
    note_table(g, routes, obs, need, idle_n)

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
    cores_table(g)
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


def cores_table(g):
    """The NGINX Ingress Controller sizing guides' table (CORES): requests/s
    (GET 1 KiB keep-alive) and new TLS connections/s (TLS 1.3, RSA 2048, full
    handshakes) with the proxy on n cores and the load client and origins on
    the others; a row per n that this machine could not measure."""
    ns = sorted({int(k[1][1:]) for k in g if k[1].startswith("C") and k[1][1:].isdigit()})
    if not ns:
        return
    print("## Scaling with proxy cores (CORES; load client and origins on the other CPUs)\n")
    print("| proxy cores | target | requests/s | proxy CPU % | requests per CPU-s | new TLS connections/s | proxy CPU % | TLS per CPU-s | errors |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in ns:
        reg = f"C{n}"
        skipped = g.get(("cores-skipped", reg, str(n)))
        if skipped:
            cpus = skipped[0]["errors"]
            print(f"| {n} | - | not measured: {n} proxy cores need at least {n + 1} CPUs (the load client and origins on "
                  f"the others); this machine has {cpus}, so a {n}-core figure here would share its cores with the load |" + " |" * 6)
            continue
        for t in ("nginx", "haproxy", "gantry"):
            rq, tl = g.get(("get1k", reg, t), []), g.get(("tls-tls13", reg, t + "-rsa"), [])
            if not rq and not tl:
                continue
            errs = sum(int(num(r["errors"]) or 0) for r in rq + tl)
            print(f"| {n} | {t} | {fmt(col(rq, 'rps'), 0)} | {fmt(col(rq, 'cpu_pct'))} | {fmt(med([eff(r) for r in rq]), 0)} | "
                  f"{fmt(col(tl, 'rps'), 0)} | {fmt(col(tl, 'cpu_pct'))} | {fmt(med([eff(r) for r in tl]), 0)} | {errs} |")
    print("\nA proxy below 100 % CPU per core it has is limited by the load side (client and origins), not by itself.\n")


def note_table(g, routes, obs, need, idle_n):
    """One table for a note: per route and regime, each proxy's units per
    proxy CPU-second as a ratio to the route's peer (the peer's own figure in
    brackets), the p99 ratios, the origin headroom; then the access-log and
    tracing variants and 10 000 routers as ratios to plain Gantry, TLS
    handshakes as ratios to nginx (RSA), and the idle-connection cost."""
    print("## Table for a note (one run; ratios per proxy CPU-second)\n")
    print("| route | regime | ratio to | " + " | ".join(PEERS) + " | p99 ratio " + "/".join(PEERS) + " | origin headroom |")
    print("|---|---|---|" + "---|" * len(PEERS) + "---|---|")
    lossy = []
    for kind, name in routes:
        bt = base_of(g, kind)
        for reg in ("A", "B"):
            base = g.get((kind, reg, bt), [])
            b_eff = med([eff(r) for r in base])
            if b_eff is None and not g.get((kind, reg, "gantry")):
                continue
            cells = []
            for t in PEERS:
                rs = g.get((kind, reg, t), [])
                e = med([eff(r) for r in rs])
                c = ratio(e, b_eff) if rs else "-"
                if t == "gantry" and c != "-":
                    c = f"**{c}**"
                if rs and any(int(num(r["errors"]) or 0) for r in rs):
                    c += " (errors)"
                cells.append(c)
                lo = loss(rs)
                if kind == "udp" and lo is not None:
                    fo = sum(int(num(r.get("foreign")) or 0) for r in rs)
                    lossy.append(f"{t} {reg} {lo * 100:.2f} %" + (f" (and {fo} replies delivered to the wrong client)" if fo else ""))
            direct, _, best = headroom(g, kind, reg)
            h = "-" if direct is None or not best else f"{direct / best:.2f}x" + ("" if direct / best >= need or kind == "tcpbulk" else " LOW")
            if kind == "tcpbulk" and h != "-":
                h += " (n/a)"
            p99 = " / ".join(ratio(col(g.get((kind, reg, t), []), "p99_ms"), col(base, "p99_ms")) for t in PEERS)
            print(f"| {name} | {reg} | {bt} ({fmt(b_eff, 0)}/CPU-s) | " + " | ".join(cells) + f" | {p99} | {h} |")
    for t, n in obs:
        for reg in ("A", "B"):
            plain, mine = g.get(("get1k", reg, "gantry"), []), g.get(("get1k", reg, t), [])
            if not mine:
                continue
            e = med([eff(r) for r in mine])
            p_eff = med([eff(r) for r in plain])
            cells = [f"**{ratio(e, p_eff)}**"] + ["-"] * (len(PEERS) - 1)
            p99 = " / ".join([ratio(col(mine, "p99_ms"), col(plain, "p99_ms"))] + ["-"] * (len(PEERS) - 1))
            print(f"| GET 1 KiB, {n} | {reg} | gantry without ({fmt(p_eff, 0)}/CPU-s) | " + " | ".join(cells) + f" | {p99} | - |")
    dash = ["-"] * (len(PEERS) - 1)
    for reg in ("A", "B"):
        many, one = g.get(("get1k", reg, "gantry-10k"), []), g.get(("get1k", reg, "gantry"), [])
        if many and one:
            o_eff = med([eff(r) for r in one])
            p99 = " / ".join([ratio(col(many, "p99_ms"), col(one, "p99_ms"))] + dash)
            print(f"| GET 1 KiB, 10 000 routers | {reg} | gantry, one router ({fmt(o_eff, 0)}/CPU-s) | "
                  f"**{ratio(med([eff(r) for r in many]), o_eff)}** | " + " | ".join(dash) + f" | {p99} | - |")
    for proto, pname in (("tls-tls12", "TLS 1.2"), ("tls-tls13", "TLS 1.3")):
        for reg in ("A", "B"):
            n_eff = med([eff(r) for r in g.get((proto, reg, "nginx-rsa"), [])])
            if n_eff is None:
                continue
            cell = {t: ratio(med([eff(r) for r in g.get((proto, reg, t + "-rsa"), [])]), n_eff) for t in PEERS}
            cell["gantry"] = f"**{cell['gantry']}**"
            print(f"| {pname} full handshakes, RSA 2048 | {reg} | nginx ({fmt(n_eff, 0)}/CPU-s) | " + " | ".join(cell[t] for t in PEERS) + " | - | - |")
            ec = ratio(med([eff(r) for r in g.get((proto, reg, "gantry-ecdsa"), [])]), n_eff)
            print(f"| {pname} full handshakes, Gantry's ECDSA P-256 default vs RSA 2048 | {reg} | nginx, RSA ({fmt(n_eff, 0)}/CPU-s) | **{ec}** | "
                  + " | ".join(dash) + " | - | - |")
    print()
    idle = {k[2]: v for k, v in g.items() if k[0] == "idle"}
    if idle:
        per = {}
        for t, rs in idle.items():
            ri, rl = col(rs, "rss_idle_kb"), col(rs, "rss_load_kb")
            if ri is not None and rl is not None:
                per[t] = (rl - ri) * 1024 / idle_n
        print(f"{idle_n} idle keep-alive connections, RSS per connection: " + ", ".join(f"{t} {v:,.0f} B" for t, v in sorted(per.items())) + "\n")
    if lossy:
        print("UDP datagrams lost (no echo within the client's timeout, all rounds): " + ", ".join(lossy) + "\n")


if __name__ == "__main__":
    main()
