#!/usr/bin/python3
"""The functorch column of ft's comparison: ft's benchmark workloads, run in PyTorch functorch.

ft is a C++ rebuild of functorch; this script times the same workloads (same names, shapes,
input recipes and op chains) in the real thing, Debian's python3-torch 1.13 with its bundled
functorch, on the CPU. It needs Debian's interpreter, which is where python3-torch installs:

    /usr/bin/python3 benchmarks/functorch_peer.py --out peer.json
    /usr/bin/python3 benchmarks/functorch_peer.py --out peer.json --threads 2 --filter '^matmul/'
    /usr/bin/python3 benchmarks/functorch_peer.py --out smoke.json --smoke   # tiny sizes, 1 rep

Options: --threads N (torch.set_num_threads(N), inter-op threads 1; default 1), --smoke (tiny
sizes, one repetition of one call: only proves each workload runs), --filter REGEX (only the
workloads whose name re.search-matches), --repetitions R (default 7).

Output (--out): a JSON list with one object per workload run, in the order run:
    {"workload": "per_op/grad", "threads": 1, "functorch": 1.1e-05, "note": "..."}
"functorch" is the median over the repetitions of the seconds per call, or seconds per op for
per_op/* (a call runs a 100-op chain, so call time / 100); it is null when functorch cannot
run the workload, and then "note" holds the first line of the exception. "note" is present
only when there is something to say (e.g. the */jit workloads: functorch 1.13 has no tracing
jit that composes with its transforms, so they carry the eager figure and say so). One line
per workload (median and spread) goes to stdout as each finishes; the exit status is 0 even
when workloads fail, so that a null figure never stops a comparison.

Timing: float32, inputs built once per workload outside the timed region (torch.manual_seed(0)
before each workload, so its inputs do not depend on --filter); 2 warm-up calls, then
an iteration count chosen so a repetition lasts about MIN_REP_S (at least one call), then the
repetitions, each timed with time.perf_counter. "*/once" workloads instead time a single
call per repetition after gc.collect(), i.e. a call whose outputs are allocated afresh.

How ft uses it: `./bazelw run -c opt //benchmarks:compare` (benchmarks/compare.py) runs ft's
suites, then this script once per thread count with --filter '^(w1|w2|...)$' (and --smoke when
the comparison is a smoke run), reads --out and puts "functorch" (and "note") beside ft's own
figure and the hand-written Eigen limit for the same workload name. The workload names here
must therefore match compare.py's MAPPING.
"""

import argparse
import gc
import json
import math
import re
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import functorch
from functorch import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

MIN_REP_S = 0.05      # a repetition should last at least this long...
MAX_CALIBRATION = 6   # ...found in at most this many calibration rounds
NO_JIT_NOTE = "functorch has no jit; eager figure"
SEED = 0              # torch.manual_seed before each workload builds its inputs


# ----------------------------------------------------------------------------- op chains
def chain100(x):
    """100 elementwise ops: 25 rounds of sin, * 0.9, + 0.1, * x."""
    y = x
    for _ in range(25):
        y = torch.sin(y)
        y = y * 0.9
        y = y + 0.1
        y = y * x
    return y


def chain10(x):
    """10 elementwise ops, ending in -sqrt(|exp(tanh(sin(x) * 0.9 + 0.1) * x) - 1|)."""
    y = torch.sin(x)
    y = y * 0.9
    y = y + 0.1
    y = torch.tanh(y)
    y = y * x
    y = torch.exp(y)
    y = y - 1.0
    y = torch.abs(y)
    y = torch.sqrt(y)
    return -y


def uniform(*shape):
    return torch.rand(*shape, dtype=torch.float32)


# ----------------------------------------------------------- custom autograd.Function
# SinStep(x) = sin(x) * 0.9 + 0.1; both styles below share its derivative rules.
def _sin_step_backward(ctx, g):
    (x,) = ctx.saved_tensors
    return g * torch.cos(x) * 0.9


def _sin_step_jvp(ctx, t):
    (x,) = ctx.saved_tensors
    return t * torch.cos(x) * 0.9


def _sin_step_new_api():
    """SinStep in the torch 2.0 style (forward without ctx, setup_context, vmap rule)."""

    class SinStep(torch.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return torch.sin(x) * 0.9 + 0.1

        @staticmethod
        def setup_context(ctx, inputs, output):
            (x,) = inputs
            ctx.save_for_backward(x)
            if hasattr(ctx, "save_for_forward"):
                ctx.save_for_forward(x)

        backward = staticmethod(_sin_step_backward)
        jvp = staticmethod(_sin_step_jvp)

    return SinStep


def _sin_step_classic_api():
    """SinStep in the classic style (forward(ctx, x)), the one torch 1.13 knows."""

    class SinStep(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            if hasattr(ctx, "save_for_forward"):
                ctx.save_for_forward(x)
            return torch.sin(x) * 0.9 + 0.1

        backward = staticmethod(_sin_step_backward)
        jvp = staticmethod(_sin_step_jvp)

    return SinStep


def _chain20_of(step):
    def chain20(x):
        y = x
        for _ in range(20):
            y = step.apply(y)
        return y
    return chain20


class Unsupported(Exception):
    """functorch refused a workload; the message is already the note to record."""


def first_line(exc):
    if isinstance(exc, Unsupported):
        return str(exc)
    lines = str(exc).strip().splitlines()
    text = lines[0].strip() if lines else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# --------------------------------------------------------------------------- workloads
# Each workload is (name, build) where build(smoke) makes the inputs and returns a dict:
#   fn: the zero-argument call to time; per: divisor of the call time (100 for per_op/*);
#   once: time one cold call per repetition; note: attached to a successful figure;
#   min_rep_s: overrides MIN_REP_S.
# build may raise; the workload is then null with the exception's first line as its note.

def _per_op(make_call):
    def build(smoke):
        return dict(fn=make_call(), per=100)
    return build


def _per_op_workloads():
    def eager():
        x = torch.full([1], 0.5, dtype=torch.float32)
        return lambda: chain100(x)

    def vmap1():
        x = uniform(8, 1) + 0.5
        f = vmap(chain100)
        return lambda: f(x)

    def vmap3():
        x = uniform(2, 2, 2, 1) + 0.5
        f = vmap(vmap(vmap(chain100)))
        return lambda: f(x)

    def grad1():
        x = uniform(1) + 0.5
        f = grad(lambda t: chain100(t).sum())
        return lambda: f(x)

    def vjp1():
        x = uniform(1) + 0.5

        def call():
            out, pullback = vjp(chain100, x)
            return pullback(torch.ones_like(out))
        return call

    def vmap_grad():
        x = uniform(8, 1) + 0.5
        f = vmap(grad(lambda t: chain100(t).sum()))
        return lambda: f(x)

    def grad_grad():
        x = uniform(1) + 0.5
        inner = grad(lambda t: chain100(t).sum())
        f = grad(lambda u: inner(u).sum())
        return lambda: f(x)

    def jvp1():
        x = uniform(1) + 0.5
        t = torch.ones_like(x)
        return lambda: jvp(chain100, (x,), (t,))

    return [
        ("per_op/eager", _per_op(eager)),
        ("per_op/vmap", _per_op(vmap1)),
        ("per_op/vmap3", _per_op(vmap3)),
        ("per_op/grad", _per_op(grad1)),
        ("per_op/vjp", _per_op(vjp1)),
        ("per_op/vmap_grad", _per_op(vmap_grad)),
        ("per_op/grad_grad", _per_op(grad_grad)),
        ("per_op/jvp", _per_op(jvp1)),
    ]


def mlp_loss(params, x, y):
    """Softmax cross-entropy of a tanh MLP on one example; params = (W0, b0, W1, b1, ...)."""
    h = x
    layers = len(params) // 2
    for l in range(layers):
        h = F.linear(h, params[2 * l], params[2 * l + 1])
        if l + 1 < layers:
            h = torch.tanh(h)
    return -(y * F.log_softmax(h, dim=-1)).sum()


def _per_sample(sizes, batch, once):
    def build(smoke):
        b = min(batch, 64) if smoke else batch
        params = []
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
            params.append((uniform(fan_out, fan_in) - 0.5) * 0.3)
            params.append((uniform(fan_out) - 0.5) * 0.1)
        params = tuple(params)
        x = uniform(b, sizes[0]) - 0.5
        y = F.one_hot(torch.randint(0, sizes[-1], [b]), sizes[-1]).to(torch.float32)
        per_sample_grads = vmap(grad(mlp_loss), in_dims=(None, 0, 0))
        return dict(fn=lambda: per_sample_grads(params, x, y), once=once)
    return build


def _square_problem(n):
    w = uniform(n, n) - 0.5
    x = uniform(n) - 0.5
    return w, x


def _jacobian(transform, n, jit):
    def build(smoke):
        w, x = _square_problem(16 if smoke else n)
        jac = transform(lambda v: torch.sin(w @ v) + v)
        return dict(fn=lambda: jac(x), note=NO_JIT_NOTE if jit else None)
    return build


def _hessian(n, jit):
    def build(smoke):
        w, x = _square_problem(16 if smoke else n)
        hess = hessian(lambda v: (torch.tanh(w @ v) ** 2).sum())
        return dict(fn=lambda: hess(x), note=NO_JIT_NOTE if jit else None)
    return build


def _jvp_chain10(smoke):
    x = uniform(1000 if smoke else 1_000_000) + 0.5
    t = torch.ones_like(x)
    return dict(fn=lambda: jvp(chain10, (x,), (t,)))


def _vmap_matmul_chain(smoke):
    a = uniform(16 if smoke else 256, 64, 64) + 0.5
    w1 = uniform(64, 64) + 0.5
    w2 = uniform(64, 64) + 0.5
    f = vmap(lambda m: torch.tanh(m @ w1) @ w2)
    return dict(fn=lambda: f(a))


def _custom_function(kind):
    def make(step, smoke):
        chain20 = _chain20_of(step)
        if kind == "grad":
            x = uniform(1) + 0.5
            f = grad(lambda t: chain20(t).sum())
            return lambda: f(x)
        if kind == "jvp":
            x = uniform(1) + 0.5
            t = torch.ones_like(x)
            return lambda: jvp(chain20, (x,), (t,))
        if kind == "vmap":
            x = uniform(8, 1) + 0.5
            f = vmap(chain20)
            return lambda: f(x)
        if kind == "vmap_grad":
            x = uniform(8, 1) + 0.5
            f = vmap(grad(lambda t: chain20(t).sum()))
            return lambda: f(x)
        raise ValueError(kind)

    def build(smoke):
        # The 2.0-style Function first; torch 1.13 may reject it, then the classic one.
        errors = []
        for make_step in (_sin_step_new_api, _sin_step_classic_api):
            seed_state = torch.get_rng_state()
            try:
                fn = make(make_step(), smoke)
                fn()  # probe: does functorch accept this Function under this transform?
                return dict(fn=fn)
            except Exception as e:  # noqa: BLE001 -- any refusal makes the figure null
                errors.append(first_line(e))
                torch.set_rng_state(seed_state)
        unique = list(dict.fromkeys(errors))
        if len(unique) == 1:
            raise Unsupported(unique[0])
        raise Unsupported(f"setup_context API: {errors[0]} / classic API: {errors[1]}")
    return build


def _plain(kind):
    def build(smoke):
        if kind == "matmul":
            n = 64 if smoke else 1024
            a, b = uniform(n, n), uniform(n, n)
            return dict(fn=lambda: a @ b)
        if kind == "chain10":
            x = uniform(1000 if smoke else 1_000_000) + 0.5
            return dict(fn=lambda: chain10(x))
        if kind == "sum":
            x = uniform(1000 if smoke else 1_000_000)
            return dict(fn=lambda: x.sum())
        if kind == "sum_rows":
            n = 32 if smoke else 1000
            x = uniform(n, n)
            return dict(fn=lambda: x.sum(1))
        raise ValueError(kind)
    return build


# ----------------------------------------------------------------- model workloads
# The same shapes as ft's //benchmarks:models (benchmarks/models.cc).
CONV_SHAPES = {  # name -> (N, C, H, W, O, k, padding)
    "conv2d_3x3_64c_56_B8": (8, 64, 56, 56, 64, 3, 1),
    "conv2d_1x1_256c_56_B8": (8, 256, 56, 56, 256, 1, 0),
    "conv2d_3x3_1to32_28_B64": (64, 1, 28, 28, 32, 3, 0),
    "conv2d_3x3_32to64_26_B64": (64, 32, 26, 26, 64, 3, 0),
}
CONV_SMOKE = {
    "conv2d_3x3_64c_56_B8": (1, 4, 8, 8, 4, 3, 1),
    "conv2d_1x1_256c_56_B8": (1, 8, 8, 8, 8, 1, 0),
    "conv2d_3x3_1to32_28_B64": (2, 1, 8, 8, 4, 3, 0),
    "conv2d_3x3_32to64_26_B64": (2, 4, 8, 8, 8, 3, 0),
}


def _conv_fwd_bwd(name):
    """torch eager: conv2d forward and the gradients of input, weight and bias."""
    def build(smoke):
        n, c, h, w, o, k, pad = (CONV_SMOKE if smoke else CONV_SHAPES)[name]
        x = torch.randn(n, c, h, w, requires_grad=True)
        wt = (torch.randn(o, c, k, k) * 0.05).requires_grad_()
        b = torch.zeros(o, requires_grad=True)

        def call():
            y = F.conv2d(x, wt, b, padding=pad)
            return torch.autograd.grad(y, (x, wt, b), torch.ones_like(y))
        return dict(fn=call)
    return build


def _tutorial_cnn_params():
    """functorch's tutorial CNN, initialized like torch.nn's layers (examples/tutorial_cnn.h)."""
    shapes = [(32, 1, 3, 3), (32,), (64, 32, 3, 3), (64,), (128, 9216), (128,), (10, 128), (10,)]
    fan_in = [9, 9, 288, 288, 9216, 9216, 128, 128]
    return tuple((torch.rand(*s) * 2 - 1) / math.sqrt(f) for s, f in zip(shapes, fan_in))


def _tutorial_cnn_loss(params, x, y):
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    h = F.relu(F.conv2d(x, w1, b1))
    h = F.relu(F.conv2d(h, w2, b2))
    h = torch.flatten(F.max_pool2d(h, 2), 1)
    h = F.relu(F.linear(h, w3, b3))
    return F.nll_loss(F.log_softmax(F.linear(h, w4, b4), 1), y)


def _cnn_per_sample(batch):
    def build(smoke):
        b = 2 if smoke else batch
        params = _tutorial_cnn_params()
        x = torch.randn(b, 1, 28, 28)
        y = torch.randint(0, 10, (b,))

        def example_loss(p, xi, yi):
            return _tutorial_cnn_loss(p, xi.unsqueeze(0), yi.unsqueeze(0))
        f = vmap(grad(example_loss), in_dims=(None, 0, 0))
        return dict(fn=lambda: f(params, x, y))
    return build


# The NTK tutorial's CNN (examples/ntk_cnn.h): name -> (N images x1, M images x2, size S).
NTK_SHAPES = {"N20_M5_S32": (20, 5, 32)}
NTK_SMOKE = (2, 2, 9)


def _ntk_cnn_params(size):
    """The NTK tutorial's CNN for size x size images, initialized like torch.nn's layers."""
    flat = 32 * (size - 6) ** 2
    shapes = [(32, 3, 3, 3), (32,), (32, 32, 3, 3), (32,), (32, 32, 3, 3), (32,), (10, flat),
              (10,)]
    fan_in = [27, 27, 288, 288, 288, 288, flat, flat]
    return tuple((torch.rand(*s) * 2 - 1) / math.sqrt(f) for s, f in zip(shapes, fan_in))


def _ntk_cnn_forward(params, x):
    """One image x [3, S, S] -> outputs [10]."""
    w1, b1, w2, b2, w3, b3, w4, b4 = params
    h = F.relu(F.conv2d(x.unsqueeze(0), w1, b1))
    h = F.relu(F.conv2d(h, w2, b2))
    h = F.conv2d(h, w3, b3)
    return F.linear(torch.flatten(h, 1), w4, b4).squeeze(0)


def _ntk_by_jacobian_contraction(params, x1, x2):
    """The NTK [N, M, 10, 10] as functorch's tutorial computes it: vmap(jacrev) over each
    image set, then one einsum per parameter, summed (in ft's order: examples/ntk_cnn.h)."""
    batched_jacobian = vmap(jacrev(_ntk_cnn_forward), (None, 0))
    jac1, jac2 = batched_jacobian(params, x1), batched_jacobian(params, x2)
    ntk = None
    for j1, j2 in zip(jac1, jac2):
        term = torch.einsum("Naf,Mbf->NMab", j1.flatten(2), j2.flatten(2))
        ntk = term if ntk is None else ntk + term
    return ntk


def _ntk_cnn(name):
    def build(smoke):
        n, m, size = NTK_SMOKE if smoke else NTK_SHAPES[name]
        params = _ntk_cnn_params(size)
        x1 = torch.randn(n, 3, size, size)
        x2 = torch.randn(m, 3, size, size)
        return dict(fn=lambda: _ntk_by_jacobian_contraction(params, x1, x2))
    return build


# The transformer block (examples/transformer_block.h): name -> (d, heads, seq, batch).
TRANSFORMER_SHAPES = {"B32": (128, 4, 64, 32)}
TRANSFORMER_SMOKE = (16, 2, 6, 4)


def _transformer_params(d):
    """The block's 18 parameters in ft's order (transformer::Param), initialized like torch's
    LayerNorm and Linear, Linear biases 0."""
    h = 4 * d

    def uniform(shape, fan_in):
        return (torch.rand(*shape) * 2 - 1) / math.sqrt(fan_in)
    z, o = torch.zeros, torch.ones
    return (o(d), z(d), uniform((d, d), d), z(d),
            uniform((d, d), d), z(d), uniform((d, d), d), z(d),
            uniform((d, d), d), z(d), o(d), z(d),
            uniform((h, d), d), z(h), uniform((d, h), h), z(d),
            uniform((2, d), d), z(2))


def _transformer_logits(params, x, heads):
    """One sequence x [S, d] -> logits [2]: a pre-norm encoder block, mean over S, linear."""
    (ln1_w, ln1_b, wq, bq, wk, bk, wv, bv, wo, bo, ln2_w, ln2_b, w1, b1, w2, b2, wc,
     bc) = params
    s, d = x.shape

    def split(t):  # [S, d] -> [heads, S, d / heads]
        return t.reshape(s, heads, d // heads).transpose(0, 1)
    a = F.layer_norm(x, (d,), ln1_w, ln1_b)
    q, k, v = split(F.linear(a, wq, bq)), split(F.linear(a, wk, bk)), split(F.linear(a, wv, bv))
    # torch 1.13 has no F.scaled_dot_product_attention: its math, spelled out.
    weights = torch.softmax(q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d // heads)), dim=-1)
    h = x + F.linear((weights @ v).transpose(0, 1).reshape(s, d), wo, bo)
    h = h + F.linear(F.gelu(F.linear(F.layer_norm(h, (d,), ln2_w, ln2_b), w1, b1)), w2, b2)
    return F.linear(h.mean(0), wc, bc)


def _transformer_per_sample(name):
    def build(smoke):
        d, heads, seq, batch = TRANSFORMER_SMOKE if smoke else TRANSFORMER_SHAPES[name]
        params = _transformer_params(d)
        x = torch.randn(batch, seq, d)
        y = (x[:, :, 0].mean(1) > 0).long()  # the sign of the first feature's mean

        def example_loss(p, xi, yi):
            logits = _transformer_logits(p, xi, heads)
            return F.cross_entropy(logits.unsqueeze(0), yi.unsqueeze(0))
        f = vmap(grad(example_loss), in_dims=(None, 0, 0))
        return dict(fn=lambda: f(params, x, y))
    return build


def all_workloads():
    work = list(_per_op_workloads())
    for sizes in ((32, 64, 64, 10), (784, 128, 10)):
        tag = "-".join(str(s) for s in sizes)
        for batch in (64, 1024):
            work.append((f"per_sample/{tag}/B{batch}/loop", _per_sample(sizes, batch, False)))
            work.append((f"per_sample/{tag}/B{batch}/once", _per_sample(sizes, batch, True)))
    for name, transform in (("jacrev", jacrev), ("jacfwd", jacfwd)):
        for n in (16, 128, 512):
            work.append((f"{name}/n{n}/eager", _jacobian(transform, n, False)))
            work.append((f"{name}/n{n}/jit", _jacobian(transform, n, True)))
    for n in (16, 128):
        work.append((f"hessian/n{n}/eager", _hessian(n, False)))
        work.append((f"hessian/n{n}/jit", _hessian(n, True)))
    work.append(("jvp_chain10/1e6", _jvp_chain10))
    work.append(("vmap_matmul_chain/B256", _vmap_matmul_chain))
    for kind in ("grad", "jvp", "vmap", "vmap_grad"):
        work.append((f"custom_function/{kind}/n1", _custom_function(kind)))
    work.append(("matmul/1024", _plain("matmul")))
    work.append(("elementwise/chain10_1e6", _plain("chain10")))
    work.append(("reduction/sum_1e6", _plain("sum")))
    work.append(("reduction/sum_rows_1000x1000", _plain("sum_rows")))
    for name in CONV_SHAPES:
        work.append((f"models/{name}_fwd_bwd", _conv_fwd_bwd(name)))
    for batch in (64, 256):
        work.append((f"models/cnn_per_sample/B{batch}", _cnn_per_sample(batch)))
    for name in NTK_SHAPES:
        work.append((f"models/ntk_cnn/{name}", _ntk_cnn(name)))
    for name in TRANSFORMER_SHAPES:
        work.append((f"models/transformer_per_sample/{name}", _transformer_per_sample(name)))
    return work


# ------------------------------------------------------------------------------ timing
def _timed_loop(fn, iterations):
    start = time.perf_counter()
    for _ in range(iterations):
        fn()
    return time.perf_counter() - start


def measure(fn, repetitions, smoke, once=False, min_rep_s=MIN_REP_S):
    """Returns (per-call seconds of each repetition, calls per repetition)."""
    warmups = 1 if smoke else 2
    last = 0.0
    for _ in range(warmups):
        last = _timed_loop(fn, 1)
    if once:
        times = []
        for _ in range(repetitions):
            gc.collect()
            start = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - start)
            del result  # freed outside the timed region: only the cold call is measured
        return times, 1
    iterations = 1
    if not smoke and last < min_rep_s:
        # Grow the count from the last warm-up's duration until a repetition is long enough.
        iterations = max(1, int(math.ceil(min_rep_s / max(last, 1e-7))))
        for _ in range(MAX_CALIBRATION):
            elapsed = _timed_loop(fn, iterations)
            if elapsed >= min_rep_s:
                break
            iterations = max(iterations * 2,
                             int(math.ceil(iterations * 1.2 * min_rep_s / max(elapsed, 1e-7))))
    times = [_timed_loop(fn, iterations) / iterations for _ in range(repetitions)]
    return times, iterations


def human(seconds):
    for limit, unit, scale in ((1e-6, "ns", 1e9), (1e-3, "us", 1e6), (1.0, "ms", 1e3)):
        if seconds < limit:
            return f"{seconds * scale:.3g} {unit}"
    return f"{seconds:.3g} s"


# -------------------------------------------------------------------------------- main
def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="JSON file to write")
    parser.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repetition")
    parser.add_argument("--filter", default="", help="only workloads whose name matches (re.search)")
    parser.add_argument("--repetitions", type=int, default=7, help="repetitions (default 7)")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass  # already set, or inter-op work already started
    repetitions = 1 if args.smoke else max(1, args.repetitions)
    pattern = re.compile(args.filter) if args.filter else None
    selected = [(name, build) for name, build in all_workloads()
                if pattern is None or pattern.search(name)]
    if not selected:
        print(f"no workload matches --filter {args.filter!r}", file=sys.stderr)

    print(f"# torch {torch.__version__}, functorch {functorch.__version__}, "
          f"threads {torch.get_num_threads()}, {'smoke, ' if args.smoke else ''}"
          f"{repetitions} repetition(s), {len(selected)} workload(s)", flush=True)
    rows = []
    wall = time.perf_counter()
    for name, build in selected:
        row = {"workload": name, "threads": args.threads, "functorch": None}
        try:
            torch.manual_seed(SEED)  # the same inputs whatever --filter selects
            spec = build(args.smoke)
            times, iterations = measure(spec["fn"], repetitions, args.smoke,
                                        once=spec.get("once", False),
                                        min_rep_s=spec.get("min_rep_s", MIN_REP_S))
            per = spec.get("per", 1)
            median = statistics.median(times) / per
            low, high = min(times) / per, max(times) / per
            row["functorch"] = median
            if spec.get("note"):
                row["note"] = spec["note"]
            unit = "/op" if per != 1 else "/call"
            spread = (high - low) / median * 100 if median > 0 else 0.0
            print(f"{name:<36} {human(median):>10}{unit:<6} spread {spread:5.1f}% "
                  f"[{human(low)} .. {human(high)}]  {len(times)} x {iterations}"
                  + (f"  ({row['note']})" if "note" in row else ""), flush=True)
        except Exception as e:  # noqa: BLE001 -- one failing workload must not stop the rest
            row["note"] = first_line(e)[:500]
            print(f"{name:<36} {'null':>10}        {row['note']}", flush=True)
        rows.append(row)
        gc.collect()
        with open(args.out, "w") as f:  # rewritten as we go, so a partial run still has data
            json.dump(rows, f, indent=1)
            f.write("\n")
    if not rows:
        with open(args.out, "w") as f:
            f.write("[]\n")
    print(f"# {len(rows)} workload(s) in {time.perf_counter() - wall:.1f} s, "
          f"{sum(r['functorch'] is None for r in rows)} null; wrote {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
