"""Draw tools/bench_mcmc.py's JSON (`--out`): min bulk ESS per second, per sampler and target.

    python tools/plot_bench_mcmc.py docs/bench_mcmc_1024.json docs/bench_mcmc.png
    python tools/plot_bench_mcmc.py docs/bench_mcmc_1024.json --markdown   # the tables only

One group of bars per target (and chain count, when the file has several),
one bar per sampler, the ESS per second on a log scale; a pair that was
skipped or not measured has no bar.  Needs matplotlib (the `bench` extra).
`--markdown` prints the figures as Markdown tables instead (docs/sampler.md's),
ours' ratios to the peers taken only between rows of the same run.
"""

import argparse
import json

SAMPLERS = ["ours", "ours-jax", "tfp", "blackjax", "numpyro"]
LABELS = {
    "ours": "ours, TF XLA",
    "ours-jax": "ours, JAX",
    "tfp": "TFP",
    "blackjax": "blackjax",
    "numpyro": "numpyro",
}


def plot(rows, runs, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    measured = [row for row in rows if not row.get("skipped")]
    groups = []
    for row in measured:
        key = (row["target"], row["chains"])
        if key not in groups:
            groups.append(key)
    samplers = [s for s in SAMPLERS if any(row["sampler"] == s for row in measured)]
    samplers += sorted({row["sampler"] for row in measured} - set(samplers))
    rate = {(r["target"], r["chains"], r["sampler"]): r["ess_per_s"] for r in measured}
    several_counts = len({chains for _, chains in groups}) > 1

    width = 0.8 / max(len(samplers), 1)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.4 * len(groups) + 2), 4.2))
    for i, sampler in enumerate(samplers):
        xs, ys = [], []
        for g, (target, chains) in enumerate(groups):
            value = rate.get((target, chains, sampler))
            if value is not None and value > 0:
                xs.append(g + (i - (len(samplers) - 1) / 2) * width)
                ys.append(value)
        ax.bar(xs, ys, width, label=LABELS.get(sampler, sampler))
    ax.set_yscale("log")
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{t}\n{c} chains" if several_counts else t for t, c in groups], fontsize=9)
    ax.set_ylabel("min bulk ESS per second (log scale)")
    chains = sorted({c for _, c in groups})
    lengths = sorted({(run["warmup"], run["draws"]) for run in runs})
    ax.set_title(
        f"NUTS, {', '.join(map(str, chains))} chains, "
        + ", ".join(f"{w} warm-up + {d} draws" for w, d in lengths)
        + "; time of the second call",
        fontsize=10,
    )
    ax.grid(axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(samplers), loc="upper center", bbox_to_anchor=(0.5, -0.14))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _number(value):
    """1,234 / 56.7 / 0.12: three significant figures, thousands separated."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def markdown(rows, runs):
    """Two Markdown tables: ESS per second with ours' ratios, then each row's figures."""
    measured = [row for row in rows if not row.get("skipped")]
    targets = []
    for row in measured:
        if (row["target"], row["chains"]) not in targets:
            targets.append((row["target"], row["chains"]))
    samplers = [s for s in SAMPLERS if any(row["sampler"] == s for row in measured)]
    by = {(r["target"], r["chains"], r["sampler"]): r for r in measured}
    skipped = {
        (r["target"], r["chains"], r["sampler"]): r["skipped"] for r in rows if r.get("skipped")
    }
    pairs = [
        (o, p) for o in ("ours", "ours-jax") for p in ("tfp", "blackjax") if {o, p} <= set(samplers)
    ]
    several = len({chains for _, chains in targets}) > 1

    def name(target, chains):  # the chain count too, when the file has several
        return f"{target}, {chains} chains" if several else target

    out = []
    head = ["target (dims)"] + [f"{LABELS[s]}" for s in samplers]
    head += [f"{LABELS[o].replace(', ', ' ')} / {LABELS[p]}" for o, p in pairs]
    out.append("| " + " | ".join(head) + " |")
    out.append("| " + " | ".join(["---"] * len(head)) + " |")
    for target, chains in targets:
        dims = next(by[k]["dims"] for k in by if k[:2] == (target, chains))
        cells = [f"{name(target, chains)} ({dims})"]
        for s in samplers:
            row = by.get((target, chains, s))
            cells.append(_number(row["ess_per_s"]) if row else "not run")
        for o, p in pairs:
            mine, peer = by.get((target, chains, o)), by.get((target, chains, p))
            if mine and peer and mine["run"] == peer["run"] and peer["ess_per_s"] > 0:
                cells.append(f"{mine['ess_per_s'] / peer['ess_per_s']:.2f}x")
            else:
                cells.append("")
        out.append("| " + " | ".join(cells) + " |")
    out.append("")
    head = ["target", "sampler", "first call s", "run s", "min bulk ESS", "ESS/s", "divergences"]
    out.append("| " + " | ".join(head) + " |")
    out.append("| " + " | ".join(["---"] * len(head)) + " |")
    for target, chains in targets:
        for s in samplers:
            row = by.get((target, chains, s))
            if row is None:
                if (target, chains, s) in skipped:
                    reason = skipped[(target, chains, s)]
                    out.append(
                        f"| {name(target, chains)} | {LABELS[s]} | skipped: {reason} | | | | |"
                    )
                continue
            out.append(
                f"| {name(target, chains)} | {LABELS[s]} | {row['first_s']:.1f} | {row['run_s']:.1f} | "
                f"{row['min_ess']:,.0f} | {_number(row['ess_per_s'])} | {row['divergences']:,} |"
            )
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", help="tools/bench_mcmc.py --out's file")
    parser.add_argument("png", nargs="?", help="where the plot goes")
    parser.add_argument("--markdown", action="store_true", help="print the tables")
    args = parser.parse_args(argv)
    with open(args.json) as f:
        data = json.load(f)
    if args.markdown:
        print(markdown(data["rows"], data["runs"]))
    if args.png:
        plot(data["rows"], data["runs"], args.png)
    elif not args.markdown:
        parser.error("give a PNG path, --markdown, or both")


if __name__ == "__main__":
    main()
