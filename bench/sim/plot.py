#!/usr/bin/env python3
"""Draws the figures of a `copse bench sim` run from DIR/results.json.

Usage: python3 bench/sim/plot.py DIR
Writes DIR/metrics.png (Figures 6 and 8: SNP, slowdown norms, unfairness,
makespan, data transferred per policy), DIR/jobs.png (Figures 5 and 9: each
instance's mean running time per policy beside its ideal time) and
DIR/utilisation-POLICY.png (Figure 7: running workers per instance over time,
first seed). For `scale`: DIR/scale-latency-cdf.png (Firmament Fig. 14).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def mean(xs):
    return sum(xs) / len(xs)


def width_bin(w):
    return "narrow (1-10)" if w <= 10 else ("medium (11-50)" if w <= 50 else "wide (>50)")


def plot_cfq(out, by, policies):
    """CFQ paper Figs. 5, 6 and 8: response-time CDF, mean slowdown per width
    bin, CFQ-naive response time normalised by CFQ's, per width bin."""
    fig, ax = plt.subplots(figsize=(7, 4))
    for p in policies:
        rt = sorted(j["finish_s"] - j["submit_s"] for r in by[p] for j in r["jobs"])
        ax.plot(rt, [(i + 1) / len(rt) for i in range(len(rt))], label=p)
    ax.set_xscale("log")
    ax.set_xlabel("job response time (s)")
    ax.set_ylabel("CDF")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cfq-response-cdf.png"), dpi=90)
    plt.close(fig)
    bins = ["narrow (1-10)", "medium (11-50)", "wide (>50)"]
    shown = [p for p in policies if p != "FIFO"]
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(shown)
    for i, p in enumerate(shown):
        vals = []
        for b in bins:
            s = [1 / j["anp"] for r in by[p] for j in r["jobs"] if width_bin(j["vertices"]) == b]
            vals.append(mean(s) if s else 0)
        ax.bar([k + i * width for k in range(len(bins))], vals, width, label=p)
    ax.set_xticks([k + 0.4 for k in range(len(bins))])
    ax.set_xticklabels(bins)
    ax.set_ylabel("mean slowdown")
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "cfq-slowdown-by-width.png"), dpi=90)
    plt.close(fig)
    if "CFQ" in by and "CFQ-naive" in by:
        fig, ax = plt.subplots(figsize=(6, 4))
        vals = []
        for b in bins:
            ratios = []
            for ra, rn in zip(by["CFQ"], by["CFQ-naive"]):
                for ja, jn in zip(ra["jobs"], rn["jobs"]):
                    if width_bin(ja["vertices"]) == b:
                        ratios.append((jn["finish_s"] - jn["submit_s"]) /
                                      (ja["finish_s"] - ja["submit_s"]))
            vals.append(mean(ratios) if ratios else 0)
        ax.bar(bins, vals)
        ax.axhline(1, color="k", lw=0.5)
        ax.set_ylabel("response time, naive / accurate profiles")
        fig.tight_layout()
        fig.savefig(os.path.join(out, "cfq-naive-vs-accurate.png"), dpi=90)
        plt.close(fig)


def plot_scale(out, res):
    """Firmament Fig. 14: CDF of task placement latency per solver, from the
    raw latencies in DIR/runs/SOLVER-sSEED.json (first seed)."""
    fig, ax = plt.subplots(figsize=(7, 4))
    seed = res["runs"][0]["seed"]
    for r in res["runs"]:
        if r["seed"] != seed:
            continue
        with open(os.path.join(out, "runs", "%s-s%d.json" % (r["solver"], seed))) as f:
            lat = sorted(x / 1e3 for x in json.load(f)["latency_ms"])
        if lat:
            ax.plot(lat, [(i + 1) / len(lat) for i in range(len(lat))], label=r["solver"])
    ax.set_xscale("log")
    ax.set_xlabel("task placement latency (s)")
    ax.set_ylabel("CDF")
    ax.set_title("%d computers, %d slots, policy %s" % (
        res["runs"][0]["computers"], res["runs"][0]["slots"], res["runs"][0]["policy"]))
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scale-latency-cdf.png"), dpi=100)
    plt.close(fig)


def main():
    out = sys.argv[1]
    with open(os.path.join(out, "results.json")) as f:
        res = json.load(f)
    if res["experiment"] == "scale":
        plot_scale(out, res)
        return
    runs = res["runs"]
    policies = []
    for r in runs:
        if r["label"] not in policies:
            policies.append(r["label"])
    by = {p: [r for r in runs if r["label"] == p] for p in policies}
    if res["experiment"] == "cfq":
        plot_cfq(out, by, policies)

    fig, axes = plt.subplots(2, 3, figsize=(14, 7))
    panels = [("snp", "SNP"), ("slowdown_l1", "slowdown l1"), ("slowdown_linf", "slowdown l∞"),
              ("unfairness", "Unfairness"), ("makespan_s", "Makespan (s)")]
    for ax, (key, title) in zip(axes.flat, panels):
        ax.bar(policies, [mean([r[key] for r in by[p]]) for p in policies])
        ax.set_title(title)
        ax.tick_params(axis="x", rotation=60)
    ax = axes.flat[5]
    bottom = [0.0] * len(policies)
    for key, label in [("dt_local_bytes", "local"), ("dt_rack_bytes", "within rack"),
                       ("dt_core_bytes", "across core")]:
        vals = [mean([r[key] for r in by[p]]) / 1e12 for p in policies]
        ax.bar(policies, vals, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_title("Data transferred (TB)")
    ax.legend(fontsize=7)
    ax.tick_params(axis="x", rotation=60)
    fig.suptitle("copse bench sim --experiment %s" % res["experiment"])
    fig.tight_layout()
    fig.savefig(os.path.join(out, "metrics.png"), dpi=90)
    plt.close(fig)

    names = [j["name"] for j in runs[0]["jobs"]]
    fig, ax = plt.subplots(figsize=(max(8, len(names) * 0.5), 5))
    width = 0.8 / (len(policies) + 1)
    xs = range(len(names))
    ax.bar(list(xs), [res["ideal_s"][n] for n in names], width, label="ideal", color="k")
    for i, p in enumerate(policies):
        vals = [mean([r["jobs"][k]["finish_s"] - r["jobs"][k]["start_s"] for r in by[p]])
                for k in range(len(names))]
        ax.bar([x + (i + 1) * width for x in xs], vals, width, label=p)
    ax.set_yscale("log")
    ax.set_xticks([x + 0.4 for x in xs])
    ax.set_xticklabels(names, rotation=90, fontsize=7)
    ax.set_ylabel("running time (s)")
    ax.legend(fontsize=7, ncol=4)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "jobs.png"), dpi=90)
    plt.close(fig)

    for p in policies:
        r = by[p][0]
        util = r["utilisation"]
        if not util or res["experiment"] == "cfq":
            continue
        step = r["utilisation_step_s"]
        t = [i * step for i in range(len(util))]
        series = [[row[k] for row in util] for k in range(len(names))]
        fig, ax = plt.subplots(figsize=(10, 4))
        ax.stackplot(t, series, labels=names)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("running workers")
        ax.set_title("Cluster utilisation, %s, seed %d" % (p, r["seed"]))
        fig.tight_layout()
        fig.savefig(os.path.join(out, "utilisation-%s.png" % p), dpi=80)
        plt.close(fig)


if __name__ == "__main__":
    main()
