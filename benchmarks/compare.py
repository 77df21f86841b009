#!/usr/bin/env python3
"""ft beside PyTorch functorch and the hand-written Eigen limit, in one run on one machine.

Run through its Bazel target, which builds ft's suites with the flags given to Bazel:

    ./bazelw run -c opt //benchmarks:compare                  # the whole comparison
    ./bazelw run -c opt //benchmarks:compare -- --smoke       # every workload once, tiny sizes

Steps: (1) ft's benchmark suites (//benchmarks:eager, vmap, grad, custom_function), each
writing its medians as JSON (FT_BENCH_JSON, benchmarks/side_by_side.h); their "/baseline" side
is the hand-written limit where the workload has one (Eigen, or for the elementwise chains
one pass over SLEEF's vector functions, benchmarks/roofline.h); (2) the same workloads in PyTorch
functorch (benchmarks/functorch_peer.py, run with Debian's /usr/bin/python3 and its
python3-torch; skipped with a message when torch cannot be imported); (3) one table
(workload, threads, ft, functorch, limit, ft/functorch, ft/limit, roofline, ft/roofline) on
stdout, `compare.json` (a list of {"workload", "threads", "ft", "functorch", "limit",
"roofline"}: seconds per call, or per op for per_op/*, null where absent; the roofline is the
workload's compulsory traffic at a STREAM triad's bandwidth, ROOFLINE_BYTES) and `compare.png` (log-scale bars; needs python3-matplotlib)
in the results folder (default: benchmarks/results/ in the source tree).

Threads: every workload runs with 1 thread; the workloads in THREADED also with 2 (ft reads
FT_NUM_THREADS, functorch gets torch.set_num_threads), so the 2-thread speed-up of the same
binary can be read off the table.

Rounds (--rounds N): on a shared host the load can change between ft's half of a run and
functorch's, which moves a ratio by itself (per-op ratios moved 1.6x between two runs of the
same build). With N > 1 the two sides alternate, ft first in even rounds and functorch first
in odd ones; each figure is the median over the rounds, and each ratio ft/functorch the
median of the rounds' ratios ("ratios" in compare.json lists them).
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

# workload -> (ft suite, ft figure, whether the figure's baseline is the Eigen limit).
# The figures are registered in benchmarks/<suite>.cc; functorch_peer.py uses the same
# workload names.
MAPPING = {
    "per_op/eager": ("eager", "chain100_n1", True),
    "per_op/vmap": ("vmap", "vmap_chain100_B8", False),
    "per_op/vmap3": ("vmap", "vmap3_chain100_2x2x2", False),
    "per_op/grad": ("grad", "grad_chain100_n1", False),
    "per_op/vjp": ("grad", "vjp_chain100_n1", False),
    "per_op/vmap_grad": ("grad", "vmap_grad_chain100_B8", False),
    "per_op/grad_grad": ("grad", "grad_grad_chain100_n1", False),
    "per_op/jvp": ("grad", "jvp_chain100_n1", False),
    "jvp_chain10/1e6": ("grad", "jvp_chain10_1e6", True),
    "vmap_matmul_chain/B256": ("vmap", "vmap_matmul_chain64_B256", True),
    "custom_function/grad/n1": ("custom_function", "function_grad_n1", False),
    "custom_function/jvp/n1": ("custom_function", "function_jvp_n1", False),
    "custom_function/vmap/n1": ("custom_function", "function_vmap_B8_n1", False),
    "custom_function/vmap_grad/n1": ("custom_function", "function_vmap_grad_B8_n1", False),
    "matmul/1024": ("eager", "matmul_1024", True),
    "elementwise/chain10_1e6": ("eager", "chain10_1e6", True),
    "reduction/sum_1e6": ("eager", "sum_1e6", True),
    "reduction/sum_rows_1000x1000": ("eager", "sum_rows_1000x1000", True),
}
# Issue 21's model workloads (benchmarks/models.cc): the conv figures' limit is oneDNN.
for _conv in ("conv2d_3x3_64c_56_B8", "conv2d_1x1_256c_56_B8", "conv2d_3x3_1to32_28_B64",
              "conv2d_3x3_32to64_26_B64"):
    MAPPING[f"models/{_conv}_fwd_bwd"] = ("models", f"{_conv}_fwd_bwd", True)
for _b in (64, 256):
    MAPPING[f"models/cnn_per_sample/B{_b}"] = ("models", f"cnn_per_sample_B{_b}", False)
MAPPING["models/ntk_cnn/N20_M5_S32"] = ("models", "ntk_cnn_N20_M5_S32", False)
MAPPING["models/transformer_per_sample/B32"] = ("models", "transformer_per_sample_B32", False)
for _mlp in ("32-64-64-10", "784-128-10"):
    for _b in (64, 1024):
        # once: a cold call, ft's caches emptied first (limit: Eigen allocating fresh);
        # loop: repeated calls (limit: Eigen reusing its buffers across calls).
        MAPPING[f"per_sample/{_mlp}/B{_b}/once"] = ("grad", f"per_sample_once_{_mlp}_B{_b}", True)
        MAPPING[f"per_sample/{_mlp}/B{_b}/loop"] = ("grad", f"per_sample_loop_{_mlp}_B{_b}", True)
for _t in ("jacrev", "jacfwd"):
    for _n in (16, 128, 512):
        MAPPING[f"{_t}/n{_n}/eager"] = ("grad", f"{_t}_sinWx_n{_n}", True)
        MAPPING[f"{_t}/n{_n}/jit"] = ("grad", f"jit_{_t}_sinWx_n{_n}", True)
for _n in (16, 128):
    MAPPING[f"hessian/n{_n}/eager"] = ("grad", f"hessian_tanh2_n{_n}", True)
    MAPPING[f"hessian/n{_n}/jit"] = ("grad", f"jit_hessian_tanh2_n{_n}", True)

# The chains under ft::jit (traced once, replayed fused). Their functorch column is functorch's
# eager figure for the same chain (PEER_OF): the "<= 0.35x functorch eager".
MAPPING["elementwise/chain10_1e6/jit"] = ("eager", "jit_chain10_1e6", True)
MAPPING["jvp_chain10/1e6/jit"] = ("grad", "jit_jvp_chain10_1e6", True)
PEER_OF = {
    "elementwise/chain10_1e6/jit": "elementwise/chain10_1e6",
    "jvp_chain10/1e6/jit": "jvp_chain10/1e6",
}

# The roofline column: each workload's compulsory memory traffic (bytes it must read and
# write once) at the bandwidth of a STREAM triad on 1e6 floats per array, measured in the
# same run at the same thread count (benchmarks/roofline.h). For these sizes the arrays sit
# in the last-level cache, and so does the triad's: the bandwidth is the one they see.
ROOFLINE_BYTES = {
    "elementwise/chain10_1e6": 8e6,        # read x, write y (float32)
    "elementwise/chain10_1e6/jit": 8e6,
    "jvp_chain10/1e6": 16e6,               # read x and t, write y and its tangent
    "jvp_chain10/1e6/jit": 16e6,
    "reduction/sum_1e6": 4e6,              # read x
    "reduction/sum_rows_1000x1000": 4e6,
}
TRIAD = ("eager", "triad_1e6", 12e6)       # suite, figure, bytes as STREAM counts them

# The workloads also measured with 2 threads.
THREADED = [
    "matmul/1024",
    "per_sample/784-128-10/B1024/loop",
    "vmap_matmul_chain/B256",
    "elementwise/chain10_1e6",
    "elementwise/chain10_1e6/jit",
    "reduction/sum_1e6",
    "reduction/sum_rows_1000x1000",
    "per_op/eager",
    "models/cnn_per_sample/B64",
    "models/cnn_per_sample/B256",
    "models/ntk_cnn/N20_M5_S32",
    "models/transformer_per_sample/B32",
]

SUITES = ("eager", "vmap", "grad", "custom_function", "models")
SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's, where python3-torch installs


def log(*parts):
    print(*parts, file=sys.stderr, flush=True)


def run_ft_suite(binary, threads, figures, smoke):
    """Runs one ft suite for `figures` and returns {figure: (ft_s, baseline_s, per_units)}."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    env = dict(os.environ, FT_BENCH_JSON=out, FT_NUM_THREADS=str(threads))
    # Google Benchmark's filter is a POSIX regex, which rejects Python's escapes of '-'; the
    # figure names are letters, digits, '_' and '-' only.
    assert all(re.fullmatch(r"[\w-]+", x) for x in figures), figures
    args = [binary, "--benchmark_filter=^(" + "|".join(figures) + ")/"]
    if smoke:
        env["FT_BENCH_SMOKE"] = "1"
        args += ["--benchmark_min_time=0.0001", "--benchmark_repetitions=1"]
    log(f"== ft {os.path.basename(binary)}, {threads} thread(s), {len(figures)} figures")
    subprocess.run(args, env=env, check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = json.load(f)
    os.unlink(out)
    got = {r["figure"]: (r["ft"], r["baseline"], r["per_units"]) for r in rows}
    absent = sorted(set(figures) - set(got))
    if absent:  # expected in --smoke, where the largest sizes shrink
        log(f"   not measured by {os.path.basename(binary)}: {', '.join(absent)}")
    return got


def functorch_available():
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import torch, functorch"],
                           capture_output=True, text=True)
    return probe.returncode == 0


def run_functorch(peer, threads, workloads, smoke):
    """Runs functorch_peer.py; returns {workload: (seconds_or_None, note)}."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    args = [SYSTEM_PYTHON, peer, "--out", out, "--threads", str(threads),
            "--filter", "^(" + "|".join(re.escape(w) for w in workloads) + ")$"]
    if smoke:
        args.append("--smoke")
    log(f"== functorch, {threads} thread(s), {len(workloads)} workloads")
    # Debian's torch calls the system BLAS (BLAS_INFO=generic), which is OpenBLAS or BLIS once
    # either is installed: they start their own threads and torch.set_num_threads does not
    # reach them, so the thread count is also given to them through their environment.
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               BLIS_NUM_THREADS=str(threads))
    subprocess.run(args, check=True, stdout=sys.stderr, env=env)
    with open(out) as f:
        rows = json.load(f)
    os.unlink(out)
    return {r["workload"]: (r["functorch"], r.get("note")) for r in rows}


def human(seconds):
    if seconds is None:
        return "-"
    for scale, unit in ((1e-6, "ns"), (1e-3, "us"), (1.0, "ms")):
        if seconds < scale:
            return f"{seconds / scale * 1e3:.3g} {unit}"
    return f"{seconds:.3g} s"


def ratio(a, b):
    return f"{a / b:.2f}x" if a is not None and b else "-"


def ft_over_functorch(row):
    """ft/functorch: the median of the rounds' ratios when there were rounds, else one run's."""
    if row.get("ratios"):
        return f"{statistics.median(row['ratios']):.2f}x"
    return ratio(row["ft"], row["functorch"])


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("compare.png skipped: matplotlib is not installed (apt-get install python3-matplotlib)")
        return False
    labels = [f"{r['workload']} ({r['threads']}T)" for r in rows]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(rows) + 1.5))
    height = 0.27
    for k, (key, color) in enumerate((("ft", "#1f77b4"), ("functorch", "#d62728"),
                                      ("limit", "#7f7f7f"))):
        ys = [i + (k - 1) * height for i in range(len(rows))]
        xs = [r[key] if r[key] else 0 for r in rows]
        ax.barh(ys, xs, height=height, color=color, label=key)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("seconds per call (per op for per_op/*), log scale; shorter is faster")
    ax.legend(loc="lower right")
    ax.set_title("ft vs PyTorch functorch 1.13 vs hand-written Eigen")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True, help="folder of ft's suite binaries")
    parser.add_argument("--peer", required=True, help="path of functorch_peer.py")
    parser.add_argument("--out", required=True, help="results folder")
    parser.add_argument("--smoke", action="store_true", help="every workload once, small sizes")
    parser.add_argument("--no-functorch", action="store_true", help="leave the column out")
    parser.add_argument("--filter", default="", help="only workloads matching this regex")
    parser.add_argument("--threads", default="1,2", help="thread counts (2+ for THREADED)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="alternate ft and functorch this many times (medians reported)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    thread_counts = [int(t) for t in args.threads.split(",") if t]
    plan = []  # (workload, threads)
    for workload in MAPPING:
        if args.filter and not re.search(args.filter, workload):
            continue
        for t in thread_counts:
            if t == 1 or workload in THREADED:
                plan.append((workload, t))

    with_functorch = not args.no_functorch
    if with_functorch and not functorch_available():
        log("functorch column skipped: /usr/bin/python3 cannot import torch and functorch "
            "(apt-get install python3-torch)")
        with_functorch = False

    def measure_ft():
        ft = {}
        for t in sorted({t for _, t in plan}):
            for suite in SUITES:
                figures = {MAPPING[w][1] for w, tt in plan if tt == t and MAPPING[w][0] == suite}
                if suite == TRIAD[0] and any(w in ROOFLINE_BYTES for w, tt in plan if tt == t):
                    figures.add(TRIAD[1])
                figures = sorted(figures)
                if figures:
                    medians = run_ft_suite(os.path.join(args.bin_dir, suite), t, figures,
                                           args.smoke)
                    for name, value in medians.items():
                        ft[(name, t)] = value
        return ft

    def measure_peer():
        peer = {}
        if with_functorch:
            for t in sorted({t for _, t in plan}):
                peer_workloads = sorted({PEER_OF.get(w, w) for w, tt in plan if tt == t})
                for w, value in run_functorch(args.peer, t, peer_workloads, args.smoke).items():
                    peer[(w, t)] = value
        return peer

    rounds = []  # (ft, peer) per round
    for r in range(args.rounds):
        if args.rounds > 1:
            log(f"== round {r + 1} of {args.rounds}")
        if r % 2 == 0:
            ft_round = measure_ft()
            peer_round = measure_peer()
        else:
            peer_round = measure_peer()
            ft_round = measure_ft()
        rounds.append((ft_round, peer_round))

    def median_of(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    # Each figure: its median over the rounds (the baseline and per-unit count with it).
    ft = {}
    for key in {k for ft_round, _ in rounds for k in ft_round}:
        got = [ft_round[key] for ft_round, _ in rounds if key in ft_round]
        ft[key] = (median_of([g[0] for g in got]), median_of([g[1] for g in got]), got[0][2])
    peer = {}
    for key in {k for _, peer_round in rounds for k in peer_round}:
        got = [peer_round[key] for _, peer_round in rounds if key in peer_round]
        peer[key] = (median_of([g[0] for g in got]), got[0][1])

    rows = []
    for workload, t in plan:
        _, figure, has_limit = MAPPING[workload]
        ft_s, base_s, per_units = ft.get((figure, t), (None, None, 1))
        per = per_units if workload.startswith("per_op/") else 1
        functorch_s, note = peer.get((PEER_OF.get(workload, workload), t), (None, None))
        triad_s = ft.get((TRIAD[1], t), (None,))[0]
        roofline_s = (triad_s * ROOFLINE_BYTES[workload] / TRIAD[2]
                      if workload in ROOFLINE_BYTES and triad_s is not None else None)
        # The ratio of each round, side by side in time, when both sides were measured.
        ratios = []
        for ft_round, peer_round in rounds:
            f = ft_round.get((figure, t), (None,))[0]
            g = peer_round.get((PEER_OF.get(workload, workload), t), (None,))[0]
            if f and g:
                ratios.append((f / per) / g)
        rows.append({
            "workload": workload,
            "threads": t,
            "ft": ft_s / per if ft_s is not None else None,
            "functorch": functorch_s,
            "limit": base_s / per if has_limit and base_s is not None else None,
            "roofline": roofline_s,
            **({"ratios": ratios} if len(rounds) > 1 else {}),
            **({"note": note} if note else {}),
        })

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "compare.json"), "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")
    print("| workload | threads | ft | functorch | limit | ft/functorch | ft/limit "
          "| roofline | ft/roofline |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['workload']} | {r['threads']} | {human(r['ft'])} | {human(r['functorch'])} "
              f"| {human(r['limit'])} | {ft_over_functorch(r)} "
              f"| {ratio(r['ft'], r['limit'])} | {human(r['roofline'])} "
              f"| {ratio(r['ft'], r['roofline'])} |")
    # The same binary with 2 threads against 1.
    by_key = {(r["workload"], r["threads"]): r for r in rows}
    speedups = [(w, by_key[(w, 1)]["ft"] / by_key[(w, t)]["ft"])
                for (w, t) in by_key if t > 1 and (w, 1) in by_key
                and by_key[(w, t)]["ft"] and by_key[(w, 1)]["ft"]]
    if speedups:
        print("\n| workload | ft 1 thread / ft 2 threads |\n|---|---|")
        for w, s in speedups:
            print(f"| {w} | {s:.2f}x |")
    png = os.path.join(args.out, "compare.png")
    if plot(rows, png):
        log(f"wrote {png}")
    log(f"wrote {os.path.join(args.out, 'compare.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
