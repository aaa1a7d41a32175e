#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Turn the bench scenario's raw data into the report.

    report.py --data build/vm-logs/bench/bed/bench --out results/DIR [...]

Reads what tests/vm/scenarios/bench left in the shared directory (per
round and system: fio JSON+, pageverify's log, counter snapshots of both
guests around every measured run) and writes into --out:

    results.md     the tables (min / median / max over the rounds, and the
                   median's ratio to NVMe-oF/RDMA's, or to farswap's in a
                   run without NVMe-oF/RDMA), farswap's options against
                   plain farswap when any ran, the setup, the
                   commands, where farswap is not ahead and the counters
                   that say why
    runs.csv       one row per round, system and workload: every figure
    summary.csv    one row per system and figure: n, min, median, max,
                   ratio to NVMe-oF/RDMA
    raw.json       everything parsed, counter deltas and latency
                   histograms included
    *.png          latency distributions (CDF), throughput, swap, cost
                   (gnuplot; plots/ holds its data and script)

and, with --latest, a short section for the top-level README.

Python standard library only; gnuplot (gnuplot-nox) draws the plots.
"""

import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

USER_HZ = 100  # /proc/stat ticks per second on x86 Linux
PAGE = 4096
REFERENCE = "nvmf"
# farswap with one of its options changed (BENCH_SYSTEMS), compared with
# plain farswap in "farswap's options"; farswap-sync is one too, but part
# of the default run.
OPTIONS = ["farswap-nostage", "farswap-crc32c", "farswap-nocheck", "farswap-encrypt", "farswap-dmcrypt",
           "farswap-r2"]
SYSTEMS = ["farswap", "farswap-sync"] + OPTIONS + ["nvmf", "nbd", "zram"]
LABEL = {
    "farswap": "farswap",
    "farswap-sync": "farswap --sync-io",
    "farswap-nostage": "farswap --stage-kb 0",
    "farswap-crc32c": "farswap --integrity crc32c",
    "farswap-nocheck": "farswap --integrity off",
    "farswap-encrypt": "farswap --encrypt",
    "farswap-dmcrypt": "farswap + dm-crypt",
    "farswap-r2": "farswap --replicas 2",
    "nvmf": "NVMe-oF/RDMA",
    "nbd": "NBD/TCP",
    "zram": "zram (local)",
}
FIO_JOBS = ["randread-qd1", "randwrite-qd1", "randread-qd16", "randwrite-qd16"]
JOB_LABEL = {
    "randread-qd1": "4K random read, QD1",
    "randwrite-qd1": "4K random write, QD1",
    "randread-qd16": "4K random read, QD16",
    "randwrite-qd16": "4K random write, QD16",
    "precondition": "1M sequential write (precondition)",
    "swap": "swap (pageverify)",
}
# Soft-RoCE counters that mean a packet was lost, retried or arrived out
# of order: each costs a retransmit timeout or a resend on this bed.
RXE_TROUBLE = ["completer_retry_err", "rcvd_seq_err", "duplicate_request",
               "out_of_seq_request", "retry_exceeded_err", "rcvd_rnr_err",
               "send_rnr_err", "retry_rnr_exceeded_err"]


# --- reading ----------------------------------------------------------------

def read_kv(path):
    """'key value' lines; numbers become floats, the rest stays text."""
    out = {}
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split(None, 1)
        if len(parts) != 2:
            continue
        k, v = parts
        try:
            out[k] = int(v)
        except ValueError:
            try:
                out[k] = float(v)
            except ValueError:
                out[k] = v.strip()
    return out


def delta(run_dir, phase, role):
    start = read_kv(run_dir / f"{phase}.{role}.start")
    end = read_kv(run_dir / f"{phase}.{role}.end")
    d = {}
    for k, v in end.items():
        if isinstance(v, (int, float)) and isinstance(start.get(k), (int, float)):
            d[k] = v - start[k]
    if "cpu.ncpu" in end:
        d["cpu.ncpu"] = end["cpu.ncpu"]
    return d


def cpu_figures(d, pages, prefix):
    """CPU time from a /proc/stat delta: seconds, share of the window, and
    microseconds per page, split into user / system / irq+softirq."""
    user = d.get("cpu.user", 0) + d.get("cpu.nice", 0)
    system = d.get("cpu.system", 0)
    soft = d.get("cpu.irq", 0) + d.get("cpu.softirq", 0)
    steal = d.get("cpu.steal", 0)
    busy = user + system + soft + steal
    total = busy + d.get("cpu.idle", 0) + d.get("cpu.iowait", 0)
    f = {
        f"{prefix}_cpu_s": busy / USER_HZ,
        f"{prefix}_cpu_util": busy / total if total else float("nan"),
        f"{prefix}_cpu_user_s": user / USER_HZ,
        f"{prefix}_cpu_sys_s": system / USER_HZ,
        f"{prefix}_cpu_softirq_s": soft / USER_HZ,
    }
    # The host's user time is mostly the workload's own (pageverify's
    # patterns, fio's bookkeeping), the same whatever the device: the
    # host's cost of moving pages is its kernel time.
    f[f"{prefix}_kcpu_s"] = (system + soft + steal) / USER_HZ
    if pages:
        scale = 1e6 / USER_HZ / pages
        f[f"{prefix}_kcpu_us_per_page"] = (system + soft + steal) * scale
        f[f"{prefix}_cpu_us_per_page"] = busy * scale
        f[f"{prefix}_cpu_user_us_per_page"] = user * scale
        f[f"{prefix}_cpu_sys_us_per_page"] = system * scale
        f[f"{prefix}_cpu_softirq_us_per_page"] = soft * scale
    return f


def wire_figures(host, donor, pages):
    """Traffic on the host's link (both directions): per 4 KiB page moved."""
    pkts = host.get("net.rx_packets", 0) + host.get("net.tx_packets", 0)
    byts = host.get("net.rx_bytes", 0) + host.get("net.tx_bytes", 0)
    f = {"wire_packets": pkts, "wire_bytes": byts}
    if pages:
        f["wire_packets_per_page"] = pkts / pages
        f["wire_bytes_per_page"] = byts / pages
    for who, d in (("host", host), ("donor", donor)):
        f[f"{who}_rxe_trouble"] = sum(d.get(f"rxe.{k}", 0) for k in RXE_TROUBLE)
        f[f"{who}_udp_drops"] = d.get("udp.RcvbufErrors", 0) + d.get("udp.InErrors", 0)
        f[f"{who}_tcp_retrans"] = d.get("tcp.RetransSegs", 0)
        f[f"{who}_net_dropped"] = d.get("net.rx_dropped", 0) + d.get("net.tx_dropped", 0)
    return f


def load_json(path):
    """fio may print a warning before its JSON: skip to the first brace."""
    text = Path(path).read_text(errors="replace")
    return json.loads(text[text.index("{"):])


def fio_jobs(rdir):
    """The run's fio jobs by name: one fio.json holding them all, or (older
    layout) one fio-<job>.json per job."""
    jobs = {}
    if (rdir / "fio.json").exists():
        for job in load_json(rdir / "fio.json")["jobs"]:
            jobs[job["jobname"]] = job
    for f in rdir.glob("fio-*.json"):
        job = load_json(f)["jobs"][0]
        jobs[job["jobname"]] = job
    return jobs


def fio_figures(job):
    if job.get("error"):
        raise ValueError(f"fio job {job['jobname']}: error {job['error']}")
    side = max(("read", "write"), key=lambda s: job[s]["total_ios"])
    s = job[side]
    lat = s["lat_ns"]
    pct = lat.get("percentile", {})

    def p(q):
        for k, v in pct.items():
            if abs(float(k) - q) < 1e-6:
                return v / 1000.0
        return float("nan")

    f = {
        "iops": s["iops"],
        "mb_per_s": s["bw_bytes"] / 1e6,
        "lat_mean_us": lat["mean"] / 1000.0,
        "lat_p50_us": p(50),
        "lat_p90_us": p(90),
        "lat_p99_us": p(99),
        "lat_p999_us": p(99.9),
        "lat_max_us": lat["max"] / 1000.0,
        "ios": s["total_ios"],
        "pages": s["io_bytes"] / PAGE,
        "runtime_s": s["runtime"] / 1000.0,
    }
    bins = {int(k): v for k, v in lat.get("bins", {}).items()}
    return side, f, bins


RESULT_ALL = re.compile(r"^RESULT all phase=(\S+) pass=(\d+) (.*)$")


def pageverify_figures(path):
    phases = {}
    for line in Path(path).read_text(errors="replace").splitlines():
        m = RESULT_ALL.match(line)
        if not m:
            continue
        kv = dict(x.split("=", 1) for x in m.group(3).split())
        phases[m.group(1)] = {k: float(v) for k, v in kv.items()}
    fill, verify = phases.get("fill"), phases.get("verify-random")
    if not fill or not verify:
        raise ValueError(f"{path}: no 'RESULT all' fill and verify-random lines")
    seq = phases.get("verify-seq")
    more = {}
    if seq:
        more = {"seq_s": seq["seconds"],
                "seq_swapins_per_s": seq["pswpin"] / seq["seconds"] if seq["seconds"] else float("nan"),
                "seq_pswpin": seq["pswpin"]}
    return more | {
        "fill_s": fill["seconds"],
        "verify_s": verify["seconds"],
        "swapins_per_s": verify["pswpin"] / verify["seconds"] if verify["seconds"] else float("nan"),
        "fill_pswpout": fill["pswpout"],
        "verify_pswpin": verify["pswpin"],
        "verify_pswpout": verify["pswpout"],
        "verify_majfaults": verify["pgmajfault"],
        "bad_pages": fill["bad"] + verify["bad"] + (seq["bad"] if seq else 0),
        "workload_pages": fill["pages"],
    }


def sort_figures(rdir):
    """The sort workload's line (host.sh run_sort) and its costs."""
    kv = {}
    for line in (rdir / "sort.log").read_text(errors="replace").splitlines():
        if line.startswith("RESULT sort "):
            kv = {k: float(v) for k, v in (x.split("=", 1) for x in line.split()[2:])}
    if "seconds" not in kv:
        raise ValueError(f"{rdir / 'sort.log'}: no 'RESULT sort' line")
    host, donor = delta(rdir, "sort", "host"), delta(rdir, "sort", "donor")
    pages = host.get("vm.pswpin", 0) + host.get("vm.pswpout", 0)
    f = {"sort_s": kv["seconds"], "sort_lines": kv.get("lines", 0),
         "sort_pswpin": host.get("vm.pswpin", 0), "sort_pswpout": host.get("vm.pswpout", 0),
         "pages_moved": pages}
    f.update(wire_figures(host, donor, pages))
    f.update(cpu_figures(donor, pages, "donor"))
    f.update(cpu_figures(host, pages, "host"))
    try:
        f["cgroup_peak_mib"] = int((rdir / "sort.memory.peak").read_text()) / 2**20
    except (OSError, ValueError):
        pass
    return {"figures": f, "host_delta": host, "donor_delta": donor}


def machine_load(load_log):
    """{'r1/farswap': [load1, ...]}: the machine's 1-minute load average
    sampled while that run was in progress (run.sh's sampler)."""
    seen = {}
    try:
        lines = Path(load_log).read_text().splitlines()
    except OSError:
        return seen
    for line in lines:
        p = line.split()
        if len(p) < 4:
            continue
        for tag in p[4:]:
            seen.setdefault(tag, []).append(float(p[1]))
    return seen


def load_raw(data):
    """The raw verbs' 4 KiB figures per round: {round: {run: {figure: value}}},
    run "read", "write" (one in flight) or "read-16", "write-16", from
    rdmalat's line "rdmalat: OP 4096 B x N depth D: min_us= p50_us= p90_us=
    p99_us= p999_us= max_us= avg_us= iops=" (tests/tools/rdmalat.c)."""
    raw = {}
    for f in sorted(data.glob("r*/raw/*.txt")):
        if not re.match(r"^r\d+$", f.parent.parent.name):
            continue
        op, _, depth = f.stem.partition("-")
        for line in f.read_text().splitlines():
            if not line.startswith(f"rdmalat: {op} 4096 B x ") or \
                    f" depth {depth or 1}: " not in line:
                continue
            v = dict(re.findall(r"(\w+?)(?:_us)?=([0-9.]+)", line.partition(": ")[2]))
            try:
                raw.setdefault(int(f.parent.parent.name[1:]), {})[f.stem] = {
                    k: float(v[k]) for k in ("min", "p50", "avg", "p99", "p999", "iops")}
            except (KeyError, ValueError):
                continue
    return raw


def _raw_cell(raw, run, k, med, fmt="{:.0f}"):
    """Median (min–max) over the rounds of one raw figure, kept in med."""
    vals = [raw[r][run][k] for r in sorted(raw) if run in raw[r]]
    if not vals:
        return "–"
    m = statistics.median(vals)
    med[(run, k)] = m
    if len(vals) == 1:
        return "**" + fmt.format(m) + "**"
    return f"**{fmt.format(m)}** ({fmt.format(min(vals))}–{fmt.format(max(vals))})"


def raw_section(raw, summary, systems):
    """The bed's raw RDMA figures, and each system's fio figures against them."""
    if not raw:
        return None
    lines = ["4 KiB RDMA READ and WRITE between the same two guests in every round, before the "
             "systems ran: `rdmalat` (tests/tools) over rdma_cm, each completion waited for on "
             "a completion channel as a block driver waits for its completion interrupt, "
             "nothing busy-polling. One verb at a time, this is the bed's floor for one page "
             "moved by one verb; 16 in flight on one queue pair, the rate one connection "
             "carries. Median (min–max) over the rounds; latency in µs from post to "
             "completion.\n",
             "| verb | in flight | min | p50 | average | p99 | p99.9 | IOPS |",
             "|---|---|---|---|---|---|---|---|"]
    med = {}
    for op, label in (("read", "RDMA READ"), ("write", "RDMA WRITE")):
        for run, depth in ((op, 1), (f"{op}-16", 16)):
            cells = [_raw_cell(raw, run, k, med) for k in ("min", "p50", "avg", "p99", "p999", "iops")]
            if any(c != "–" for c in cells):
                lines.append(f"| {label} | {depth} | " + " | ".join(cells) + " |")
    lines.append("")
    rows = {}
    # Over the same link at the same MTU only: not zram (local), not the
    # -jumbo variants (the raw verbs ran at the default MTU).
    for s in [s for s in systems if s != "zram" and not s.endswith("-jumbo")]:
        for op in ("read", "write"):
            for job, key, run, k in ((f"rand{op}-qd1", "lat_p50_us", op, "p50"),
                                     (f"rand{op}-qd16", "iops", f"{op}-16", "iops")):
                e = summary.get((s, Metric(job, key, "", "", "").id))
                base = med.get((run, k))
                if e and base:
                    rows.setdefault(s, {})[(op, key)] = (e["median"], e["median"] / base)
    if rows:
        lines.append("Each system's 4K fio jobs (through the block layer) against the raw verbs: "
                     "QD1 p50 as a multiple of the raw p50 one at a time (lower is better, 1 is "
                     "the floor), QD16 IOPS as a multiple of the raw IOPS 16 in flight on one "
                     "queue pair (a system with several queue pairs can pass 1):\n")
        lines.append("| system | read QD1 p50 (µs) | × raw | write QD1 p50 (µs) | × raw "
                     "| read QD16 IOPS | × raw | write QD16 IOPS | × raw |")
        lines.append("|---|---|---|---|---|---|---|---|---|")
        for s in systems:
            if s not in rows:
                continue
            c = [f"{rows[s][k][0]:.0f} | ×{rows[s][k][1]:.2f}" if k in rows[s] else "– | –"
                 for k in (("read", "lat_p50_us"), ("write", "lat_p50_us"),
                           ("read", "iops"), ("write", "iops"))]
            lines.append(f"| {LABEL.get(s, s)} | " + " | ".join(c) + " |")
        lines.append("")
    return "\n".join(lines)


def load_runs(data, load_log=None):
    """Every (round, system) directory, parsed."""
    loads = machine_load(load_log) if load_log else {}
    runs = []
    for rdir in sorted(data.glob("r*/*/"), key=lambda p: (int(p.parent.name[1:]), p.name)):
        if not rdir.is_dir() or not re.match(r"^r\d+$", rdir.parent.name) \
                or rdir.name == "raw":
            continue
        meta = read_kv(rdir / "meta.txt")
        run = {"round": int(rdir.parent.name[1:]), "system": rdir.name,
               "complete": bool(meta), "meta": meta, "phases": {}, "problems": []}
        try:
            jobs = fio_jobs(rdir)
        except (ValueError, KeyError, json.JSONDecodeError) as e:
            run["problems"].append(f"fio output: {e}")
            jobs = {}
        for job in ["precondition"] + FIO_JOBS:
            if job not in jobs:
                continue
            try:
                side, f, bins = fio_figures(jobs[job])
            except (ValueError, KeyError) as e:
                run["problems"].append(str(e))
                continue
            host, donor = delta(rdir, f"fio-{job}", "host"), delta(rdir, f"fio-{job}", "donor")
            f.update(wire_figures(host, donor, f["pages"]))
            f.update(cpu_figures(donor, f["pages"], "donor"))
            f.update(cpu_figures(host, f["pages"], "host"))
            if side == "read" and host.get("farswap.zero_reads", 0) > 0:
                run["problems"].append(
                    f"fio {job}: {host['farswap.zero_reads']:.0f} reads of never-written "
                    "pages were answered locally with zeros")
            run["phases"][job] = {"side": side, "figures": f, "bins": bins,
                                  "host_delta": host, "donor_delta": donor}
        pv = rdir / "pageverify.log"
        if pv.exists():
            try:
                f = pageverify_figures(pv)
            except (ValueError, KeyError) as e:
                run["problems"].append(str(e))
            else:
                host, donor = delta(rdir, "swap", "host"), delta(rdir, "swap", "donor")
                pages = host.get("vm.pswpin", 0) + host.get("vm.pswpout", 0)
                f["pages_moved"] = pages
                f.update(wire_figures(host, donor, pages))
                f.update(cpu_figures(donor, pages, "donor"))
                f.update(cpu_figures(host, pages, "host"))
                if f["bad_pages"]:
                    run["problems"].append(f"pageverify: {f['bad_pages']:.0f} bad pages")
                ev = read_kv(rdir / "memory.events")
                f["cgroup_oom_kills"] = ev.get("oom_kill", 0)
                f["cgroup_high_events"] = ev.get("high", 0)
                try:
                    f["cgroup_peak_mib"] = int((rdir / "memory.peak").read_text()) / 2**20
                except (OSError, ValueError):
                    pass
                run["phases"]["swap"] = {"figures": f, "host_delta": host,
                                         "donor_delta": donor,
                                         "log": [l for l in pv.read_text(errors="replace").splitlines()
                                                 if l.startswith("RESULT all")]}
        if (rdir / "sort.log").exists():
            try:
                run["phases"]["sort"] = sort_figures(rdir)
            except (ValueError, KeyError) as e:
                run["problems"].append(str(e))
        prof = {}
        for pf in sorted(rdir.glob("*.perf-*.txt")):
            phase, role = pf.name.split(".")[0], pf.name.split(".")[1][5:]
            prof.setdefault(phase.replace("fio-", ""), {})[role] = pf
        if prof:
            run["profiles"] = prof
        lat = {}
        for lf in rdir.glob("*.farswap-latency"):
            lat[lf.name.split(".")[0]] = lf.read_text().strip()
        if lat:
            run["farswap_latency"] = lat
        tb = rdir / "swap.trace-breakdown.txt"
        if tb.exists():
            run["trace_breakdown"] = tb
        load = loads.get(f"r{run['round']}/{run['system']}")
        if load:
            run["machine_load1"] = load
            for ph in run["phases"].values():
                ph["figures"]["machine_load1"] = statistics.median(load)
        runs.append(run)
    return runs


# --- aggregating -------------------------------------------------------------

class Metric:
    def __init__(self, phase, key, label, unit, better, fmt="{:.0f}"):
        self.phase, self.key, self.label, self.unit = phase, key, label, unit
        self.better, self.fmt = better, fmt

    @property
    def id(self):
        return f"{self.phase}.{self.key}"


def fio_metrics(job):
    m = [Metric(job, "iops", "IOPS", "IOPS", "higher"),
         Metric(job, "lat_p50_us", "p50 latency", "µs", "lower"),
         Metric(job, "lat_p99_us", "p99 latency", "µs", "lower"),
         Metric(job, "lat_p999_us", "p99.9 latency", "µs", "lower"),
         Metric(job, "lat_mean_us", "mean latency", "µs", "lower")]
    return m + cost_metrics(job)


def cost_metrics(phase):
    return [Metric(phase, "wire_packets_per_page", "packets on the wire / page", "pkts", "lower", "{:.2f}"),
            Metric(phase, "wire_bytes_per_page", "bytes on the wire / page", "B", "lower"),
            Metric(phase, "donor_cpu_us_per_page", "donor CPU / page", "µs", "lower", "{:.1f}"),
            Metric(phase, "donor_cpu_user_us_per_page", "  donor user", "µs", "lower", "{:.1f}"),
            Metric(phase, "donor_cpu_sys_us_per_page", "  donor system", "µs", "lower", "{:.1f}"),
            Metric(phase, "donor_cpu_softirq_us_per_page", "  donor irq+softirq", "µs", "lower", "{:.1f}"),
            Metric(phase, "donor_cpu_util", "donor CPU busy", "%", "lower", "{:.0%}"),
            Metric(phase, "host_kcpu_us_per_page", "host kernel CPU / page", "µs", "lower", "{:.1f}"),
            Metric(phase, "host_cpu_softirq_us_per_page", "  host irq+softirq", "µs", "lower", "{:.1f}"),
            Metric(phase, "host_rxe_trouble", "host rxe retries/out-of-seq", "", "lower"),
            Metric(phase, "donor_rxe_trouble", "donor rxe retries/out-of-seq", "", "lower"),
            Metric(phase, "host_tcp_retrans", "host TCP retransmits", "", "lower")]


SWAP_METRICS = [
    Metric("swap", "machine_load1", "machine load average while this system ran", "", "info", "{:.1f}"),
    Metric("swap", "fill_s", "time to fill", "s", "lower", "{:.1f}"),
    Metric("swap", "verify_s", "time to verify (random order)", "s", "lower", "{:.1f}"),
    Metric("swap", "swapins_per_s", "swap-ins / s during the verify", "/s", "higher"),
    Metric("swap", "seq_s", "time to verify (sequential order, after the random pass)", "s",
           "lower", "{:.1f}"),
    Metric("swap", "seq_swapins_per_s", "swap-ins / s during the sequential verify", "/s", "higher"),
    Metric("swap", "seq_pswpin", "pages swapped in during the sequential verify", "", "info"),
    Metric("swap", "fill_pswpout", "pages swapped out during the fill", "", "info"),
    Metric("swap", "verify_pswpin", "pages swapped in during the verify", "", "info"),
    Metric("swap", "verify_majfaults", "major faults during the verify", "", "info"),
    Metric("swap", "cgroup_peak_mib", "cgroup memory.peak", "MiB", "info"),
] + cost_metrics("swap")

SORT_METRICS = [
    Metric("sort", "machine_load1", "machine load average while this system ran", "", "info", "{:.1f}"),
    Metric("sort", "sort_s", "time to sort", "s", "lower", "{:.1f}"),
    Metric("sort", "sort_pswpout", "pages swapped out", "", "info"),
    Metric("sort", "sort_pswpin", "pages swapped in", "", "info"),
    Metric("sort", "cgroup_peak_mib", "cgroup memory.peak", "MiB", "info"),
] + cost_metrics("sort")

ALL_METRICS = SWAP_METRICS + SORT_METRICS + [m for j in FIO_JOBS for m in fio_metrics(j)] + [
    Metric("precondition", "mb_per_s", "1M sequential write", "MB/s", "higher", "{:.1f}")]


def by_round(runs, system, metric):
    """{round: value} of one figure of one system."""
    out = {}
    for r in runs:
        if r["system"] != system:
            continue
        ph = r["phases"].get(metric.phase)
        if ph is None:
            continue
        v = ph["figures"].get(metric.key)
        if v is not None and not (isinstance(v, float) and math.isnan(v)):
            out[r["round"]] = v
    return out


def values(runs, system, metric):
    return list(by_round(runs, system, metric).values())


def reference(systems):
    """What the ratios are to: NVMe-oF/RDMA, or plain farswap in a run
    without it (one of farswap's options, say); None if neither ran."""
    for s in (REFERENCE, "farswap"):
        if s in systems:
            return s
    return None


def summarize(runs, systems):
    summary = {}
    refsys = reference(systems)
    for m in ALL_METRICS:
        for s in systems:
            v = values(runs, s, m)
            if v:
                summary[(s, m.id)] = {"n": len(v), "min": min(v), "median": statistics.median(v),
                                      "max": max(v), "values": v}
        ref = summary.get((refsys, m.id))
        ref_rounds = by_round(runs, refsys, m) if refsys else {}
        for s in systems:
            e = summary.get((s, m.id))
            if e is None:
                continue
            e["ratio"] = (e["median"] / ref["median"]) if ref and ref["median"] else None
            # The same round's systems ran minutes apart, under much the
            # same machine load: compare them round by round too.
            mine = by_round(runs, s, m)
            pairs = [(mine[k], ref_rounds[k]) for k in sorted(mine) if k in ref_rounds]
            e["paired_ratios"] = [a / b for a, b in pairs if b]
            if m.better in ("lower", "higher"):
                e["rounds_ahead"] = sum(1 for a, b in pairs
                                        if (a < b if m.better == "lower" else a > b))
                e["rounds_paired"] = len(pairs)
    return summary


# --- writing ------------------------------------------------------------------

def fmt(metric, v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if metric.unit == "%":
        return metric.fmt.format(v)
    if abs(v) >= 100000 and metric.fmt == "{:.0f}":
        return f"{v:,.0f}"
    return metric.fmt.format(v)


def cell(metric, e, with_ratio=True):
    if e is None:
        return "–"
    if e["n"] == 1:
        s = f"**{fmt(metric, e['median'])}**"
    else:
        s = f"**{fmt(metric, e['median'])}** ({fmt(metric, e['min'])}–{fmt(metric, e['max'])})"
    if with_ratio and e.get("ratio") is not None and metric.better != "info":
        s += f" ×{e['ratio']:.2f}"
    return s


def table(metrics, systems, summary, title_col="figure"):
    lines = [f"| {title_col} | " + " | ".join(LABEL.get(s, s) for s in systems) + " |",
             "|---|" + "---|" * len(systems)]
    for m in metrics:
        if all((s, m.id) not in summary for s in systems):
            continue
        unit = f" ({m.unit})" if m.unit and m.unit != "%" else ""
        better = {"lower": " ↓", "higher": " ↑"}.get(m.better, "")
        lines.append(f"| {m.label}{unit}{better} | "
                     + " | ".join(cell(m, summary.get((s, m.id))) for s in systems) + " |")
    return "\n".join(lines)


def verdict(metric, e, ref):
    """How a figure compares with NVMe-oF/RDMA's, round by round: 'ahead'
    (better in every round), 'behind' (worse in every round) or 'mixed'."""
    if e is None or ref is None or not e.get("rounds_paired"):
        return None
    if e["rounds_ahead"] == e["rounds_paired"]:
        return "ahead"
    if e["rounds_ahead"] == 0:
        return "behind"
    return "mixed"


def write_csvs(out, runs, summary, systems):
    keys = sorted({k for r in runs for ph in r["phases"].values() for k in ph["figures"]})
    with open(out / "runs.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["round", "position", "system", "workload"] + keys)
        for r in runs:
            for name, ph in r["phases"].items():
                w.writerow([r["round"], int(r["meta"].get("position", 0)), r["system"], name]
                           + [ph["figures"].get(k, "") for k in keys])
    ref = reference(systems) or REFERENCE
    with open(out / "summary.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["system", "workload", "figure", "unit", "better", "n", "min", "median",
                    "max", f"ratio_to_{ref}_median", f"paired_ratios_to_{ref}",
                    f"rounds_ahead_of_{ref}", "values"])
        for m in ALL_METRICS:
            for s in systems:
                e = summary.get((s, m.id))
                if e:
                    w.writerow([s, m.phase, m.key, m.unit, m.better, e["n"], e["min"], e["median"],
                                e["max"], "" if e.get("ratio") is None else f"{e['ratio']:.4f}",
                                " ".join(f"{v:.4f}" for v in e.get("paired_ratios", [])),
                                "" if "rounds_ahead" not in e else
                                f"{e['rounds_ahead']}/{e['rounds_paired']}",
                                " ".join(f"{v:.6g}" for v in e["values"])])


def write_raw(out, runs, info, summary):
    raw = {"info": info, "runs": runs,
           "summary": [{"system": s, "figure": mid, **{k: v for k, v in e.items()}}
                       for (s, mid), e in summary.items()]}
    (out / "raw.json").write_text(json.dumps(raw, indent=1, sort_keys=True, default=str) + "\n")


# --- plots (gnuplot) -------------------------------------------------------------

COLORS = {"farswap": "#1b9e77", "farswap-sync": "#66c2a5", "farswap-nostage": "#1f78b4", "farswap-crc32c": "#a6761d",
          "farswap-nocheck": "#e6ab02", "farswap-encrypt": "#7f3b08",
          "farswap-dmcrypt": "#e7298a", "farswap-r2": "#66a61e",
          "nvmf": "#d95f02", "nbd": "#7570b3", "zram": "#888888"}


def cdf_points(bins):
    total = sum(bins.values())
    acc = 0
    pts = []
    for ns in sorted(bins):
        acc += bins[ns]
        pts.append((ns / 1000.0, acc / total))
    return pts


def write_plots(out, runs, summary, systems):
    if not shutil.which("gnuplot"):
        return "gnuplot not found: no plots (apt-get install gnuplot-nox, or make setup)"
    pd = out / "plots"
    pd.mkdir(exist_ok=True)
    scripts = []
    gp = []

    # Latency distributions: every round's histogram of a job merged.
    gp.append('set terminal pngcairo size 1400,1000 font "sans,11"')
    gp.append(f'set output "{out / "latency-cdf.png"}"')
    gp.append('set multiplot layout 2,2 title "fio 4 KiB direct I/O: latency distribution '
              '(all rounds merged; CDF)"')
    gp.append("set logscale x; set grid; set key bottom right; set yrange [0:1]")
    gp.append('set xlabel "latency (µs, log scale)"; set ylabel "fraction of I/Os ≤ x"')
    for job in FIO_JOBS:
        plots = []
        if not any(r["phases"].get(job) for r in runs):
            continue
        for s in systems:
            merged = {}
            for r in runs:
                ph = r["phases"].get(job)
                if r["system"] == s and ph:
                    for k, v in ph["bins"].items():
                        merged[k] = merged.get(k, 0) + v
            if not merged:
                continue
            dat = pd / f"cdf-{job}-{s}.dat"
            dat.write_text("".join(f"{x:.3f} {y:.6f}\n" for x, y in cdf_points(merged)))
            plots.append(f'"{dat}" using 1:2 with lines lw 2 lc rgb "{COLORS.get(s, "black")}" '
                         f'title "{LABEL.get(s, s)}"')
        gp.append(f'set title "{JOB_LABEL[job]}"')
        if plots:
            gp.append("plot " + ", ".join(plots))
    gp.append("unset multiplot")
    scripts.append(("latency-cdf", gp))

    def bars(name, title, ylabel, metrics, logy=False):
        gp = []
        dat = pd / f"{name}.dat"
        rows = []
        metrics = [m for m in metrics if any((s, m.id) in summary for s in systems)]
        psys = [s for s in systems if any((s, m.id) in summary for m in metrics)]
        if not metrics:
            return
        for m in metrics:
            row = [f'"{m.label}"']
            for s in psys:
                e = summary.get((s, m.id))
                row += [f"{e['median']:.6g}", f"{e['min']:.6g}", f"{e['max']:.6g}"] if e else ["NaN"] * 3
            rows.append(" ".join(row))
        dat.write_text("\n".join(rows) + "\n")
        gp.append('set terminal pngcairo size 1200,600 font "sans,11"')
        gp.append(f'set output "{out / (name + ".png")}"')
        gp.append(f'set title "{title} (median over rounds, bars: min–max)"')
        gp.append("set style data histogram; set style histogram errorbars gap 1 lw 1")
        gp.append("set style fill solid 0.8 border -1; set boxwidth 0.9; set grid ytics")
        gp.append(f'set ylabel "{ylabel}"; set key top left; set xtics nomirror')
        gp.append("set logscale y" if logy else "unset logscale y")
        gp.append("set yrange [*:*]" if logy else "set yrange [0:*]")
        cols = [f'"{dat}" using {2 + 3 * i}:{3 + 3 * i}:{4 + 3 * i}'
                + (":xtic(1)" if i == 0 else "")
                + f' lc rgb "{COLORS.get(s, "black")}" title "{LABEL.get(s, s)}"'
                for i, s in enumerate(psys)]
        gp.append("plot " + ", ".join(cols))
        scripts.append((name, gp))

    bars("throughput", "fio 4 KiB direct I/O throughput", "IOPS (log scale)",
         [Metric(j, "iops", JOB_LABEL[j].replace("4K ", ""), "", "higher") for j in FIO_JOBS],
         logy=True)
    bars("latency-p50-p99", "fio 4 KiB QD1 latency", "µs (log scale)",
         [Metric(j, k, f"{JOB_LABEL[j].replace('4K random ', '').replace(', QD1', '')} {n}", "", "lower")
          for j in ("randread-qd1", "randwrite-qd1")
          for k, n in (("lat_p50_us", "p50"), ("lat_p99_us", "p99"), ("lat_p999_us", "p99.9"))],
         logy=True)
    bars("swap", "swap: pageverify, random-order verify", "seconds",
         [Metric("swap", "fill_s", "fill (s)", "", "lower"),
          Metric("swap", "verify_s", "verify in random order (s)", "", "lower")])
    bars("swapins", "swap: swap-ins per second during the random verify", "swap-ins / s",
         [Metric("swap", "swapins_per_s", "swap-ins / s", "", "higher")])
    bars("cost-packets", "packets on the wire per 4 KiB page moved", "packets / page",
         [Metric(p, "wire_packets_per_page", JOB_LABEL[p].replace("4K random ", ""), "", "lower")
          for p in ["swap"] + FIO_JOBS])
    bars("cost-donor-cpu", "donor CPU time per 4 KiB page moved", "µs / page",
         [Metric(p, "donor_cpu_us_per_page", JOB_LABEL[p].replace("4K random ", ""), "", "lower")
          for p in ["swap"] + FIO_JOBS])

    # One script per plot: a plot without data must not cost the others.
    errors = []
    for name, lines in scripts:
        script = pd / f"{name}.gp"
        script.write_text("\n".join(lines) + "\n")
        r = subprocess.run(["gnuplot", str(script)], capture_output=True, text=True)
        if r.returncode != 0:
            errors.append(f"{name}: {r.stderr.strip()[-300:]}")
    return "; ".join(errors) or None


# --- the markdown -----------------------------------------------------------------

def load_summary(path):
    vals = []
    for line in Path(path).read_text().splitlines() if Path(path).exists() else []:
        p = line.split()
        if len(p) >= 2:
            try:
                vals.append(float(p[1]))
            except ValueError:
                pass
    if not vals:
        return "not sampled"
    return (f"min {min(vals):.2f}, median {statistics.median(vals):.2f}, max {max(vals):.2f} "
            f"({len(vals)} samples, every 30 s)")


def bed_results(path):
    """The bed's result lines (summed over the rounds' runs where that
    makes sense) and its verdict lines."""
    res = {"bed_udp_rcvbuf_errors": 0}
    verdicts = []
    for line in Path(path).read_text(errors="replace").splitlines() if Path(path).exists() else []:
        if line.startswith("result: "):
            p = line[8:].split(None, 1)
            if len(p) == 2 and p[0] == "bed_udp_rcvbuf_errors":
                res[p[0]] += int(p[1])
            elif len(p) == 2:
                res[p[0]] = p[1]
        if line.startswith(("PASS: ", "FAIL: ")):
            verdicts.append(line)
    return res, verdicts


def attempts(data):
    """run.sh's record of every round's attempts: 'rN-aM VERDICT | system
    running: S | first crash line: L'."""
    out = []
    for line in (data / "attempts.txt").read_text().splitlines() if (data / "attempts.txt").exists() else []:
        parts = [p.strip() for p in line.split("|")]
        if not parts[0]:
            continue
        tag, verdict = (parts[0].split(None, 1) + [""])[:2]
        out.append({"tag": tag, "verdict": verdict,
                    "running": parts[1].replace("system running: ", "") if len(parts) > 1 else "?",
                    "crash": parts[2].replace("first crash line: ", "") if len(parts) > 2 else "none"})
    return out


COMPARED = (
    [Metric("swap", k, l, u, b, f) for k, l, u, b, f in (
        ("fill_s", "time to fill", "s", "lower", "{:.1f}"),
        ("verify_s", "time to verify (random order)", "s", "lower", "{:.1f}"),
        ("swapins_per_s", "swap-ins / s", "/s", "higher", "{:.0f}"),
        ("seq_s", "time to verify (sequential order)", "s", "lower", "{:.1f}"))]
    + [Metric("sort", "sort_s", "time to sort", "s", "lower", "{:.1f}")]
    + [Metric(j, k, l, u, b, f) for j in FIO_JOBS for k, l, u, b, f in (
        ("iops", "IOPS", "", "higher", "{:.0f}"),
        ("lat_p50_us", "p50 latency", "µs", "lower", "{:.0f}"),
        ("lat_p99_us", "p99 latency", "µs", "lower", "{:.0f}"),
        ("lat_p999_us", "p99.9 latency", "µs", "lower", "{:.0f}"))]
    + [Metric(p, k, l, u, "lower", f) for p in ["swap"] + FIO_JOBS for k, l, u, f in (
        ("wire_packets_per_page", "packets / page", "", "{:.2f}"),
        ("donor_cpu_us_per_page", "donor CPU / page", "µs", "{:.0f}"),
        ("host_kcpu_us_per_page", "host kernel CPU / page", "µs", "{:.0f}"))]
    + [Metric("precondition", "mb_per_s", "MB/s", "", "higher", "{:.1f}")])


def comparison_section(summary, systems):
    """Where farswap is not ahead of NVMe-oF/RDMA, figure by figure."""
    lines = []
    pair = [s for s in ("farswap", "farswap-sync") if s in systems]
    if not pair or REFERENCE not in systems:
        return "NVMe-oF/RDMA or farswap missing from this run: no comparison.\n"
    counts = {s: {"behind": 0, "mixed": 0, "ahead": 0} for s in pair}
    lines.append("| workload | figure | NVMe-oF/RDMA | " + " | ".join(LABEL[s] for s in pair) + " |")
    lines.append("|---|---|---|" + "---|" * len(pair))
    for m in COMPARED:
        ref = summary.get((REFERENCE, m.id))
        if ref is None:
            continue
        cells = []
        for s in pair:
            e = summary.get((s, m.id))
            v = verdict(m, e, ref)
            if v is None:
                cells.append("–")
                continue
            counts[s][v] += 1
            word = {"behind": "**behind**", "mixed": "mixed", "ahead": "ahead"}[v]
            cells.append(f"{fmt(m, e['median'])} ×{e['ratio']:.2f} {word} "
                         f"({e['rounds_ahead']}/{e['rounds_paired']})")
        unit = f" ({m.unit})" if m.unit else ""
        lines.append(f"| {JOB_LABEL.get(m.phase, m.phase)} | {m.label}{unit} | "
                     f"{fmt(m, ref['median'])} | " + " | ".join(cells) + " |")
    lines.append("")
    for s in pair:
        c = counts[s]
        lines.append(f"- {LABEL[s]}: behind NVMe-oF/RDMA in every round on {c['behind']}, "
                     f"mixed on {c['mixed']}, ahead in every round on {c['ahead']} of these figures.")
    lines.append("")
    return "\n".join(lines)


OPTION_METRICS = [
    Metric("swap", "fill_s", "swap: time to fill", "s", "lower", "{:.1f}"),
    Metric("swap", "verify_s", "swap: time to verify (random)", "s", "lower", "{:.1f}"),
    Metric("swap", "swapins_per_s", "swap: swap-ins / s", "/s", "higher"),
    Metric("swap", "seq_s", "swap: time to verify (sequential)", "s", "lower", "{:.1f}"),
    Metric("sort", "sort_s", "sort: time", "s", "lower", "{:.1f}"),
    Metric("swap", "host_kcpu_us_per_page", "swap: host kernel CPU / page", "µs", "lower", "{:.1f}"),
    Metric("swap", "donor_cpu_us_per_page", "swap: donor CPU / page", "µs", "lower", "{:.1f}"),
    Metric("swap", "wire_packets_per_page", "swap: packets / page", "", "lower", "{:.2f}"),
    Metric("randread-qd1", "lat_p50_us", "4K rand read QD1 p50", "µs", "lower"),
    Metric("randwrite-qd1", "lat_p50_us", "4K rand write QD1 p50", "µs", "lower"),
    Metric("randread-qd16", "iops", "4K rand read QD16", "IOPS", "higher"),
    Metric("randwrite-qd16", "iops", "4K rand write QD16", "IOPS", "higher")]

OPTION_WHAT = {
    "farswap-sync": "`--sync-io`: swap-ins skip the swap cache and readahead",
    "farswap-nostage": "`--stage-kb 0`: no staging, every swap-out waits for its RDMA WRITEs "
                       "to complete (the default stages it in host memory and completes it "
                       "once copied)",
    "farswap-crc32c": "`--integrity crc32c`: an unkeyed check of every page read back, "
                      "instead of the default keyed siphash",
    "farswap-nocheck": "`--integrity off`: no check of the pages read back",
    "farswap-encrypt": "`--encrypt`: every page sealed on the host with ChaCha20-Poly1305 "
                       "(its tag is the page check; writes go through bounce pages, "
                       "requests of at most 64 KiB): the donor holds ciphertext",
    "farswap-dmcrypt": "dm-crypt in plain mode with a random key (aes-xts-plain64, 512-bit key) "
                       "over /dev/farswapN, as crypttab's `swap` option sets it up: the donor "
                       "holds ciphertext; fio and swap run on the mapping",
    "farswap-r2": "`--replicas 2` over two farswapd on the donor guest (two ports, their own "
                  "donor ids and failure domains): every page written to both, read from one",
}


# Variants named by their form (tests/vm/scenarios/bench/host.sh):
# farswap-wifN, farswap with write_inflight_kb=N; farswap-qdN, with
# queue_depth=N; farswap-stageN, with stage_kb=N; SYSTEM-jumbo, SYSTEM
# over the link at MTU 9000.  Those of farswap are options.
VARIANT_COLORS = ["#e41a1c", "#377eb8", "#984ea3", "#ff7f00", "#a65628", "#f781bf"]


# The commit farswap-base's module was built from (binaries.txt's "base").
BASE_COMMIT = {}


def variant(s):
    """(base system, label, what) for a variant's name, else None."""
    if s == "farswap-base":
        c = BASE_COMMIT.get("commit", "?")[:12]
        return ("farswap", f"farswap at {c}",
                f"farswap.ko built from commit {c} (`BENCH_BASE`), with this run's farswapd "
                "and farswapctl: the module's change measured against its parent")
    m = re.fullmatch(r"farswap-wif(\d+)", s)
    if m:
        n = int(m.group(1))
        return ("farswap", f"farswap write_inflight_kb={n}",
                f"`write_inflight_kb={n}` (module parameter, also per device in sysfs): "
                + ("no cap on" if n == 0 else f"at most {n} KiB of")
                + " swap-out writes in flight per write queue (the default is 512)")
    m = re.fullmatch(r"farswap-stage(\d+)", s)
    if m:
        n = int(m.group(1))
        return ("farswap", f"farswap stage_kb={n}",
                f"`stage_kb={n}` (module parameter): {n} KiB of staging per write queue "
                "(the default is 4096)")
    m = re.fullmatch(r"farswap-qd(\d+)", s)
    if m:
        n = int(m.group(1))
        return ("farswap", f"farswap queue_depth={n}",
                f"`queue_depth={n}` (module parameter): requests per hardware queue, "
                "so at most that many swap-outs wait per write queue (the default is 64)")
    if s.endswith("-jumbo") and s[:-len("-jumbo")] in LABEL:
        base = s[:-len("-jumbo")]
        return (base, f"{LABEL[base]} at MTU 9000",
                "both guests' link at MTU 9000 (set before the system starts, put back after): "
                "Soft-RoCE's active and path MTU 4096, so one packet carries a 4 KiB page "
                "(four at the default MTU 1500, path MTU 1024)")
    return None


def add_variants(present):
    """Label the variants in this run; farswap's become options.  The
    systems in report order: each variant after the system it varies."""
    order = [s for s in SYSTEMS if s in present]
    for s in sorted(present - set(SYSTEMS)):
        v = variant(s)
        if v is None:
            order.append(s)
            continue
        base, LABEL[s], what = v
        COLORS.setdefault(s, VARIANT_COLORS[len(OPTION_WHAT) % len(VARIANT_COLORS)])
        if base == "farswap":
            OPTION_WHAT[s] = what
            OPTIONS.append(s)
        else:
            OTHER_WHAT[s] = f"{LABEL[base]} with {what}"
        after = max([i for i, o in enumerate(order) if o == base or o.startswith(base + "-")],
                    default=len(order) - 1)
        order.insert(after + 1, s)
    return order


# What a variant of a peer changes, for the report's setup section.
OTHER_WHAT = {}


def options_section(runs, summary, systems):
    """farswap's options against plain farswap in the same run: the
    median's ratio, and the same round's ratios."""
    opts = [s for s in ["farswap-sync"] + OPTIONS if s in systems]
    if not any(s in systems for s in OPTIONS):
        return None
    if "farswap" not in systems:
        return "Plain farswap did not run: no comparison of its options.\n"
    lines = ["Each option against plain farswap (its defaults: `--integrity siphash`, one "
             "donor, no encryption) in this same run. Cells: median, ×ratio to plain farswap's "
             "median, and with several rounds the range of the same round's ratios. ↓ lower is "
             "better, ↑ higher is better: ×1.10 on a ↓ figure costs 10 %.\n"]
    for s in opts:
        lines.append(f"- **{LABEL[s]}**: {OPTION_WHAT[s]}")
    lines.append("")
    lines.append("| figure | farswap | " + " | ".join(LABEL[s] for s in opts) + " |")
    lines.append("|---|---|" + "---|" * len(opts))
    for m in OPTION_METRICS:
        base = summary.get(("farswap", m.id))
        if base is None:
            continue
        base_rounds = by_round(runs, "farswap", m)
        cells = []
        for s in opts:
            e = summary.get((s, m.id))
            if e is None:
                cells.append("–")
                continue
            c = fmt(m, e["median"])
            if base["median"]:
                c += f" ×{e['median'] / base['median']:.2f}"
            mine = by_round(runs, s, m)
            paired = [mine[k] / base_rounds[k] for k in sorted(mine)
                      if k in base_rounds and base_rounds[k]]
            if len(paired) > 1:
                c += f" (×{min(paired):.2f}–×{max(paired):.2f})"
            cells.append(c)
        unit = f" ({m.unit})" if m.unit else ""
        better = {"lower": " ↓", "higher": " ↑"}.get(m.better, "")
        lines.append(f"| {m.label}{unit}{better} | {fmt(m, base['median'])} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)


def write_markdown(out, args, info, runs, summary, systems, plot_error, profiled=False,
                   traced=False):
    host, donor = info["host"], info["donor"]
    res, verdicts = bed_results(args.bed_log)
    tries = attempts(args.data)
    crashes = [a for a in tries if a["crash"] != "none"]
    verdict_line = verdicts[-1] if verdicts else ""
    problems = [f"round {r['round']} {r['system']}: {p}" for r in runs for p in r["problems"]]
    incomplete = [f"round {r['round']} {r['system']}" for r in runs if not r["complete"]]
    rounds = sorted({r["round"] for r in runs if r["complete"]})
    ok = args.bed_rc == 0 and not problems and not incomplete

    md = []
    md.append(f"# farswap benchmark: {info['date']}, kernel {host.get('kernel', '?')}\n")
    if not ok:
        md.append("> **THIS RUN FAILED OR IS INCOMPLETE**: "
                  + "; ".join(([verdict_line] if args.bed_rc else []) + problems
                              + ([f"incomplete: {', '.join(incomplete)}"] if incomplete else []))
                  + ". The figures below are only what was measured before that.\n")
    if profiled:
        md.append("> **Profiled run** (BENCH_PROFILE=1): perf sampled both guests during every "
                  "measured run, which slows them; see [profiles.md](profiles.md). Use an "
                  "unprofiled run for the figures.\n")
    if traced:
        md.append("> **Traced run** (BENCH_TRACE=1): farswap's trace events were on during its "
                  "swap runs, which slows them; see [traces.md](traces.md). Use an untraced run "
                  "for the figures.\n")
    md.append(f"- date (UTC): {args.started}; {args.elapsed // 60} min {args.elapsed % 60} s "
              f"including the guests' boot")
    bins = {}
    local = []
    for line in (args.data / "binaries.txt").read_text().splitlines() if (args.data / "binaries.txt").exists() else []:
        p = line.split()
        if p[0] == "local-change":
            local.append(" ".join(p[1:]))
        elif p[0] == "sha256" and len(p) == 3:
            bins[p[1]] = p[2][:12]
        elif len(p) == 2:
            bins[p[0]] = p[1]
    md.append(f"- kernel (both guests): {host.get('kernel', '?')}; farswap built from "
              + ("the working tree at " if bins.get("source") == "worktree" else "commit ")
              + f"{bins.get('git', '?')[:12]}"
              + (f" with local changes in {len(local)} file(s) under kmod/ daemon/ tools/ common/ include/ "
                 "tests/workload/" if local else "")
              + f"; farswap.ko srcversion {bins.get('srcversion', '?')} (sha256 "
              f"{bins.get('farswap-bench.ko', '?')}), built once and used by every round")
    md.append(f"- mode: {args.mode}, {len(rounds)} round(s) of {', '.join(LABEL.get(s, s) for s in systems)}; "
              "each round boots fresh guests and runs the systems one after the other, the order "
              "rotated by one each round")
    md.append(f"- machine: 2 cores, TCG guests (no KVM), shared with other test runs; "
              f"load average during the run: {load_summary(args.load_log)}")
    md.append(f"- test bed: {len(tries) or '?'} guest boot(s) for {len(rounds)} round(s), "
              f"{len(crashes)} ended by a guest kernel crash (see *Guest kernel crashes* below); "
              f"last verdict `{verdict_line or '?'}`; UDP receive-buffer drops on the machine during "
              f"the run: {res.get('bed_udp_rcvbuf_errors', '?')} (machine-wide)")
    md.append("")
    refsys = reference(systems)
    md.append("Figures: **median** (min–max) over the rounds, and ×N = the median divided by "
              + (f"{LABEL.get(refsys, refsys)}'s median in this same run" if refsys else
                 "(no reference system ran: no ratios)")
              + ". ↓ lower is better, ↑ higher is better. "
              "Under TCG every absolute number is slow and noisy; the ratios are what carries over.\n")

    md.append("## Summary\n")
    key = [Metric("swap", "machine_load1", "machine load while it ran", "", "info", "{:.1f}"),
           Metric("randread-qd1", "lat_p50_us", "4K rand read QD1 p50", "µs", "lower"),
           Metric("randread-qd1", "lat_p99_us", "4K rand read QD1 p99", "µs", "lower"),
           Metric("randwrite-qd1", "lat_p50_us", "4K rand write QD1 p50", "µs", "lower"),
           Metric("randread-qd16", "iops", "4K rand read QD16", "IOPS", "higher"),
           Metric("randwrite-qd16", "iops", "4K rand write QD16", "IOPS", "higher"),
           Metric("swap", "fill_s", "swap: time to fill", "s", "lower", "{:.1f}"),
           Metric("swap", "verify_s", "swap: time to verify (random)", "s", "lower", "{:.1f}"),
           Metric("swap", "swapins_per_s", "swap: swap-ins / s", "/s", "higher"),
           Metric("swap", "seq_s", "swap: time to verify (sequential)", "s", "lower", "{:.1f}"),
           Metric("sort", "sort_s", "sort: time", "s", "lower", "{:.1f}"),
           Metric("swap", "wire_packets_per_page", "swap: packets / page", "", "lower", "{:.2f}"),
           Metric("swap", "donor_cpu_us_per_page", "swap: donor CPU / page", "µs", "lower", "{:.1f}")]
    md.append(table(key, systems, summary))
    md.append("")
    raw = raw_section(load_raw(args.data), summary, systems)
    if raw:
        md.append("## The bed's raw RDMA latency\n")
        md.append(raw)
    md.append("## Where farswap is not ahead of NVMe-oF/RDMA\n")
    if REFERENCE in systems and {"farswap", "farswap-sync"} & set(systems):
        md.append("Each round's farswap run is paired with the same round's NVMe-oF/RDMA run (minutes "
                  "apart, so under much the same machine load, though not the same: see the load rows "
                  "below). Cells: median, ×ratio to NVMe-oF/RDMA's median, and the verdict over the "
                  "pairs: **behind** = worse in every round, ahead = better in every round, mixed = "
                  "this run cannot tell (k/n = rounds ahead). Costs count too: fewer packets or CPU "
                  "per page is ahead.\n")
    md.append(comparison_section(summary, systems))
    opts = options_section(runs, summary, systems)
    if opts:
        md.append("## farswap's options\n")
        md.append(opts)
    md.append("<!-- analysis: written by hand after a full run, see the end of this file -->\n")

    md.append("## Swap: page-verifying workload in a memory cgroup\n")
    md.append(f"`pageverify --bench --mb {host.get('BENCH_SWAP_MB', '?')} --procs "
              f"{host.get('BENCH_SWAP_PROCS', '?')} --passes 1` in a cgroup with memory.high="
              f"{host.get('BENCH_SWAP_LIMIT', '?')} (reclaim and throttling past it; memory.max at "
              "twice that only as a backstop: a hard limit OOM-kills the workload while a slow "
              "device still has swap writes in flight): the workers fill their pages with a pattern, "
              "then verify every page once in random order, in lock-step; every page must verify "
              "(a failure fails the bench). Swap-ins / s = pswpin during the verify / its wall time "
              "(readahead pages count). Per-page costs divide by all pages moved (pswpin + pswpout) "
              "over the whole workload.\n")
    md.append(table(SWAP_METRICS, systems, summary))
    md.append("")
    if any("sort" in r["phases"] for r in runs):
        md.append("## Sort: a program larger than its memory limit\n")
        md.append(f"GNU sort of {host.get('BENCH_SORT_LINES', '?')} ten-byte lines (zero-padded numbers "
                  "in a shuffled order, made once per round in the host guest's tmpfs, outside the "
                  f"cgroup) in a cgroup with memory.high={host.get('BENCH_SORT_LIMIT', '?')} "
                  "(memory.max twice that): `LC_ALL=C sort --parallel=1 -S 512M` (one buffer, no "
                  "temporary files), after the swap workload on the same device. Its output must be "
                  "the numbers in order (sha256 against seq's) and it must have swapped out at least "
                  "half its limit, else the bench fails. Per-page costs divide by the pages moved "
                  "(pswpin + pswpout) during the sort.\n")
        md.append(table(SORT_METRICS, systems, summary))
        md.append("")
    for job in FIO_JOBS:
        md.append(f"## fio: {JOB_LABEL[job]}\n")
        md.append(table(fio_metrics(job), systems, summary))
        md.append("")
    md.append("## fio: precondition\n")
    md.append(table([m for m in ALL_METRICS if m.phase == "precondition"], systems, summary))
    md.append("")

    md.append("## Plots\n")
    if plot_error:
        md.append(f"No plots: {plot_error}\n")
    else:
        for png, what in (("latency-cdf.png", "latency distributions (CDF)"),
                          ("latency-p50-p99.png", "QD1 latency percentiles"),
                          ("throughput.png", "IOPS"), ("swap.png", "swap workload times"),
                          ("swapins.png", "swap-ins per second"),
                          ("cost-packets.png", "packets per page"),
                          ("cost-donor-cpu.png", "donor CPU per page")):
            if (out / png).exists():
                md.append(f"![{what}]({png})")
        md.append("")

    md.append("## Guest kernel crashes\n")
    if not crashes:
        md.append("No guest kernel crashed during this run.\n")
    else:
        md.append(f"{len(crashes)} of {len(tries)} boots ended with a guest kernel crash; run.sh then "
                  "ran the round again on fresh guests (the figures above come from the completed "
                  "attempts only). The crashes seen while building this bench were all in Soft-RoCE's "
                  "workqueue (`rxe_wq do_work`) allocating an skb, on the host guest and on the donor "
                  "guest (which does not load farswap.ko), with impossible saved EFLAGS (reserved bits "
                  "and the trap flag set): corrupted CPU state under QEMU 7.2 TCG or a stray write by "
                  "rxe; not explained yet. Which system ran when each happened:\n")
        md.append("| attempt | system running | verdict | first crash line |")
        md.append("|---|---|---|---|")
        for a in tries:
            if a["crash"] != "none":
                md.append(f"| {a['tag']} | {a['running']} | {a['verdict'].replace('|', '/')} | "
                          f"`{a['crash'][:160]}` |")
        md.append("\nConsole logs of every attempt: `build/bench/attempts/<round>-<attempt>/` "
                  "on the machine that ran the bench.\n")

    md.append("## Setup\n")
    options_setup = "".join(f"  - **{LABEL[s]}**: the same with {OPTION_WHAT[s]}"
                            + (" (donor: `farswapd ... --donor-id bench-a --failure-domain bench-a` "
                               "and a second `farswapd ... --listen ADDR:7472 --donor-id bench-b "
                               "--failure-domain bench-b`, each donating as above; host `farswapctl "
                               "attach --donor ADDR --donor ADDR:7472 --replicas 2 ...`)"
                               if s == "farswap-r2" else "") + ".\n"
                            for s in OPTIONS if s in systems)
    other_setup = "".join(f"  - **{LABEL[s]}**: {OTHER_WHAT[s]}.\n"
                          for s in systems if s in OTHER_WHAT)
    md.append(f"""- Two QEMU guests under TCG on this machine, one point-to-point link (QEMU UDP socket
  netdev, virtio-net, MTU {host.get('mtu', '?')}; Soft-RoCE `rxe0` on top, active MTU {host.get('rxe_active_mtu', '?')}),
  host guest {host.get('cpus', '?')} vCPUs / {int(host.get('mem_total_kb', 0)) // 1024} MiB,
  donor guest {donor.get('cpus', '?')} vCPU / {int(donor.get('mem_total_kb', 0)) // 1024} MiB
  (MemTotal). Kernel command line: `{host.get('cmdline', '?')}` (zswap off:
  `{host.get('zswap_enabled', '?')}`), vm.page-cluster {host.get('page_cluster', '?')}, swappiness {host.get('swappiness', '?')}.
- Every system serves the same device size, {host.get('BENCH_DEV_MB', '?')} MiB, from RAM; only one
  runs at a time and each is torn down (modules removed, memory freed) before the next:
  - **farswap**: donor `farswapd --key-file KEY --listen ADDR --donate {int(host.get('BENCH_DEV_MB', 0)) + 32}M
    --slab-size {host.get('BENCH_SLAB', '?')} --headroom 64M --hysteresis 32M`; host `insmod farswap.ko;
    farswapctl attach --donor ADDR --size {host.get('BENCH_DEV_MB', '?')}M --key farswap:bed` (defaults:
    one read and one write queue per vCPU, depth 64, write in-flight cap 512 KiB per queue,
    `--integrity siphash`).
  - **farswap --sync-io**: the same with `--sync-io` (BLK_FEAT_SYNCHRONOUS: swap-ins skip the swap
    cache and readahead; on 6.12 swap-outs also wait for completion).
{options_setup}  - **NVMe-oF/RDMA**: donor `modprobe brd rd_nr=1 rd_size=...; nvmet, nvmet-rdma`, configfs subsystem
    `farswap-bench` with namespace 1 on /dev/ram0, RDMA port ADDR:4420; host `modprobe nvme-rdma`,
    connect by writing `transport=rdma,traddr=ADDR,trsvcid=4420,nqn=farswap-bench` to
    /dev/nvme-fabrics (defaults: one I/O queue per vCPU, queue size 128, native multipath head).
  - **NBD/TCP**: donor `nbd-server` with one export of /dev/ram0 (brd as above); host
    `modprobe nbd nbds_max=1; nbd-client -N bench -b 4096 -C {host.get('cpus', '?')} ADDR 10809 /dev/nbd0`
    (one TCP connection per vCPU).
  - **zram**: host `modprobe zram num_devices=1`, disksize {host.get('BENCH_DEV_MB', '?')} MiB,
    default compressor; pageverify's and fio's data do not compress, so zram stores full pages.
{other_setup}- fio ({host.get('fio', '?')}), each job on the raw device: `--direct=1 --ioengine=libaio
  --size={host.get('BENCH_FIO_MB', '?')}M --lat_percentiles=1 --output-format=json+`; first a
  precondition `--rw=write --bs=1M --iodepth=4` over the whole region (so reads never hit
  never-written blocks, which farswap answers locally with zeros; checked: farswap's zero_reads do
  not move during the read jobs), then `--rw=randread|randwrite --bs=4k --iodepth=1|{host.get('BENCH_FIO_QD', '?')}
  --time_based --runtime={host.get('BENCH_FIO_SECONDS', '?')}`. Latency is fio's total latency
  (submission + completion).
- Cost: both guests snapshot /proc/stat, /sys/class/net/eth0/statistics, the Soft-RoCE hw_counters,
  /proc/vmstat and /proc/net/snmp before and after each measured run (the donor's window encloses
  the host's). Packets and bytes count both directions of the host's link. CPU is USER_HZ ticks:
  user(+nice), system, irq+softirq; µs per page = CPU time / pages moved (fio: I/Os of 4 KiB;
  swap: pswpin + pswpout). Soft-RoCE's own work runs in kernel threads and softirq: on a real RNIC
  the donor's share of one-sided RDMA would be zero, here it is not.
""")
    md.append("## Commands\n")
    md.append("```")
    md.append(f"{args.command}")
    md.append("# which runs: scripts/setup.sh; make -C tests/workload;")
    md.append("#   tests/vm/bed.py run build/bench/scenario/bench --timeout N   (tests/vm/scenarios/bench,")
    md.append("#   scenario.conf + the overrides below); tests/bench/report.py ...")
    md.append("```\n")
    md.append("Parameters (the host guest's environment; each round is its own boot):\n")
    md.append("```")
    md.append(f"rounds={len(rounds)}")
    for k in sorted(host):
        if k.startswith("BENCH_") and k not in ("BENCH_ROUNDS", "BENCH_FIRST_ROUND"):
            md.append(f"{k}={host[k]}")
    md.append("```\n")
    md.append("## Raw data\n")
    md.append("- `runs.csv`: every figure of every round, system and workload (`position` = place in "
              "its round)")
    md.append("- `summary.csv`: min / median / max / ratio per system and figure, with the values")
    md.append("- `raw.json`: all of it, plus the counter deltas of both guests and the fio latency "
              "histograms (ns → count) behind the CDF plot")
    md.append("- `plots/`: the plots' data and gnuplot script; `bed.log`: the test bed's output")
    md.append("")
    order = {}
    for r in runs:
        order.setdefault(r["round"], []).append((int(r["meta"].get("position", 0)), r["system"]))
    md.append("Order of the systems per round: " + "; ".join(
        f"round {k}: " + ", ".join(s for _, s in sorted(v)) for k, v in sorted(order.items())) + "\n")
    (out / "results.md").write_text("\n".join(md))
    return ok


def perf_top(path, n):
    """The top N lines of a flat perf report: (percent, comm, dso, sym)."""
    rows = []
    for line in Path(path).read_text(errors="replace").splitlines():
        m = re.match(r"^\s*([\d.]+)%\s+(\S+)\s+(.+?)\s+\[[.kKgu]\]\s+(.*)$", line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(3), m.group(4).strip()))
    return rows[:n]


def write_profiles(out, runs, systems):
    """profiles.md and the raw flat profiles, when the run was profiled."""
    if not any(r.get("profiles") for r in runs):
        return False
    pdir = out / "profiles"
    pdir.mkdir(exist_ok=True)
    md = ["# Profiles (BENCH_PROFILE=1)\n",
          "`perf record -a -e cpu-clock -F 249` on each guest around each measured run, "
          "`perf report --no-children --sort comm,dso,sym`; the share of all samples on the "
          "guest's CPUs (idle included: `swapper`). Sampling perturbs the figures of a profiled run. "
          "Whole reports: `profiles/`.\n"]
    for phase in ["randread-qd1", "randread-qd16", "randwrite-qd16", "swap"]:
        md.append(f"## {JOB_LABEL.get(phase, phase)}\n")
        for s in systems:
            for r in runs:
                if r["system"] != s or phase not in r.get("profiles", {}):
                    continue
                for role in ("host", "donor"):
                    pf = r["profiles"][phase].get(role)
                    if not pf:
                        continue
                    shutil.copy(pf, pdir / f"r{r['round']}-{s}-{phase}-{role}.txt")
                    md.append(f"**{LABEL.get(s, s)}, {role}** (round {r['round']})\n")
                    md.append("| % | comm | dso | symbol |\n|---|---|---|---|")
                    for pct, comm, dso, sym in perf_top(pf, 12):
                        md.append(f"| {pct:.1f} | {comm} | {dso} | `{sym}` |")
                    md.append("")
    (out / "profiles.md").write_text("\n".join(md) + "\n")
    return True


def write_traces(out, runs, systems):
    """traces.md and the breakdowns, when farswap's swap runs were traced."""
    if not any(r.get("trace_breakdown") for r in runs):
        return False
    tdir = out / "traces"
    tdir.mkdir(exist_ok=True)
    md = ["# Trace breakdowns (BENCH_TRACE=1)\n",
          "farswap's trace events (`events/farswap/enable`) during the swap workload, turned "
          "into per-phase latencies by `tests/bench/tracebreak`: per op, count and p50/p90/p99 "
          "in µs of queue->post, post->complete (the RDMA round trip), complete->end and total. "
          "Tracing perturbs the figures of a traced run. JSON beside each table in `traces/`.\n"]
    for s in systems:
        for r in runs:
            tb = r.get("trace_breakdown")
            if r["system"] != s or not tb:
                continue
            name = f"r{r['round']}-{s}-swap"
            shutil.copy(tb, tdir / f"{name}.txt")
            js = tb.with_name("swap.trace-breakdown.json")
            if js.exists():
                shutil.copy(js, tdir / f"{name}.json")
            md.append(f"## {LABEL.get(s, s)} (round {r['round']})\n")
            md.append("```\n" + tb.read_text(errors="replace").rstrip() + "\n```\n")
    (out / "traces.md").write_text("\n".join(md) + "\n")
    return True


def write_latest(path, out, args, info, summary, systems):
    host = info["host"]
    key = [Metric("randread-qd1", "lat_p50_us", "4K random read QD1, p50", "µs", "lower"),
           Metric("randread-qd1", "lat_p99_us", "4K random read QD1, p99", "µs", "lower"),
           Metric("randwrite-qd1", "lat_p50_us", "4K random write QD1, p50", "µs", "lower"),
           Metric("randread-qd16", "iops", "4K random read QD16", "IOPS", "higher"),
           Metric("randwrite-qd16", "iops", "4K random write QD16", "IOPS", "higher"),
           Metric("swap", "verify_s", f"swap {host.get('BENCH_SWAP_MB', '?')} MiB in "
                  f"{host.get('BENCH_SWAP_LIMIT', '?')}: random verify", "s", "lower", "{:.1f}"),
           Metric("swap", "swapins_per_s", "swap-ins / s", "/s", "higher"),
           Metric("swap", "wire_packets_per_page", "swap: packets on the wire / page", "", "lower", "{:.2f}"),
           Metric("swap", "donor_cpu_us_per_page", "swap: donor CPU / page", "µs", "lower", "{:.1f}")]
    rel = os.path.relpath(out, Path(path).parent)
    rounds = max(e["n"] for e in summary.values())
    txt = [f"## Benchmark: farswap vs NVMe-oF/RDMA, NBD and zram ({info['date']})\n",
           f"Measured by `make bench` on the QEMU + Soft-RoCE test bed (two TCG guests on a shared "
           f"2-core machine, kernel {host.get('kernel', '?')}), {rounds} rounds, systems alternated. "
           f"Median (min–max) over the rounds; ×N is the ratio to "
           f"{LABEL.get(reference(systems), 'NVMe-oF/RDMA')}'s median in the same "
           "run. Soft-RoCE does in software what an RNIC does in hardware, so absolute numbers are "
           f"far from real hardware; compare the ratios. Details: [{rel}/results.md]({rel}/results.md).\n",
           table(key, systems, summary), ""]
    Path(path).write_text("\n".join(txt) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--bed-log", type=Path, default=Path("/nonexistent"))
    ap.add_argument("--load-log", type=Path, default=Path("/nonexistent"))
    ap.add_argument("--mode", default="full")
    ap.add_argument("--command", default="make bench")
    ap.add_argument("--started", default="?")
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--bed-rc", type=int, default=0)
    ap.add_argument("--latest", type=Path)
    args = ap.parse_args()

    host = read_kv(args.data / "host-info.txt")
    donor = read_kv(args.data / "donor-info.txt")
    runs = load_runs(args.data, args.load_log)
    if not runs:
        sys.exit(f"report: no runs under {args.data}")
    present = {r["system"] for r in runs}
    binaries = args.data / "binaries.txt"
    for line in binaries.read_text().splitlines() if binaries.exists() else []:
        if line.startswith("base "):
            BASE_COMMIT["commit"] = line.split()[1]
    systems = add_variants(present)
    info = {"date": args.started[:10], "host": host, "donor": donor, "command": args.command,
            "mode": args.mode, "started": args.started, "elapsed_s": args.elapsed}
    # A run that failed part-way still has whole phases: the report shows
    # them, under the banner that says the run failed.
    summary = summarize(runs, systems)

    args.out.mkdir(parents=True, exist_ok=True)
    write_csvs(args.out, runs, summary, systems)
    write_raw(args.out, runs, info, {f"{k[0]}|{k[1]}": v for k, v in summary.items()} and summary)
    plot_error = write_plots(args.out, runs, summary, systems)
    profiled = write_profiles(args.out, runs, systems)
    traced = write_traces(args.out, runs, systems)
    ok = write_markdown(args.out, args, info, runs, summary, systems, plot_error, profiled,
                        traced)
    if args.bed_log.exists():
        shutil.copy(args.bed_log, args.out / "bed.log")
    if args.latest and ok and not profiled and not traced:
        write_latest(args.latest, args.out, args, info, summary, systems)
    print(f"report: {args.out}/results.md" + ("" if ok else " (the run FAILED: see its top)"))
    if plot_error:
        print(f"report: {plot_error}", file=sys.stderr)


if __name__ == "__main__":
    main()
