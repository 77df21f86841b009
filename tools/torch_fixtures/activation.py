"""Fixtures of the activations family (issue 21): for each op and argument mode, the input x,
the output y, a cotangent gy and the vjp gx, and a tangent tx and the jvp ty (common.jvp, by
the double-vjp trick; hardsigmoid, without a double backward in torch 1.13, has a vjp only). float64 throughout; a few KB per case."""
import torch
import torch.nn.functional as F

from common import rand, save, jvp, vjp

# x drawn from [low, high]: wide enough to cross each op's kinks and thresholds.
CASES = {
    "gelu": (lambda x: F.gelu(x), -4.0, 4.0),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), -4.0, 4.0),
    "silu": (F.silu, -6.0, 6.0),
    "mish": (F.mish, -6.0, 6.0),
    "softplus": (F.softplus, -5.0, 5.0),
    "softplus_beta": (lambda x: F.softplus(x, beta=2.0, threshold=3.0), -3.0, 3.0),
    "elu": (F.elu, -3.0, 3.0),
    "elu_alpha": (lambda x: F.elu(x, alpha=0.5), -3.0, 3.0),
    "selu": (F.selu, -3.0, 3.0),
    "celu": (F.celu, -3.0, 3.0),
    "celu_alpha": (lambda x: F.celu(x, alpha=2.5), -3.0, 3.0),
    "leaky_relu": (F.leaky_relu, -2.0, 2.0),
    "leaky_relu_slope": (lambda x: F.leaky_relu(x, negative_slope=0.2), -2.0, 2.0),
    "hardtanh": (F.hardtanh, -2.0, 2.0),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, min_val=-0.5, max_val=1.5), -2.0, 2.0),
    "hardswish": (F.hardswish, -5.0, 5.0),
    "hardsigmoid": (F.hardsigmoid, -5.0, 5.0),
    "logsigmoid": (F.logsigmoid, -8.0, 8.0),
    "softsign": (F.softsign, -3.0, 3.0),
    "erf": (torch.erf, -3.0, 3.0),
    "erfc": (torch.erfc, -3.0, 5.0),
    "erfinv": (torch.erfinv, -0.999, 0.999),
    "lgamma": (torch.lgamma, -4.5, 6.0),
    "digamma": (torch.digamma, -4.5, 6.0),
    "polygamma1": (lambda x: torch.polygamma(1, x), -4.5, 6.0),
    "polygamma2": (lambda x: torch.polygamma(2, x), -4.5, 6.0),
    "polygamma3": (lambda x: torch.polygamma(3, x), 0.1, 30.0),
}

for seed, (case, (fn, low, high)) in enumerate(CASES.items()):
    x = rand(3, 4, seed=100 + seed, low=low, high=high)
    gy = rand(3, 4, seed=200 + seed)
    arrays = dict(x=x, y=fn(x), gy=gy, gx=vjp(fn, (x,), gy)[0])
    tx = rand(3, 4, seed=300 + seed)
    try:
        arrays.update(tx=tx, ty=jvp(fn, (x,), (tx,)))
    except RuntimeError:  # no double backward in torch 1.13 (hardsigmoid): a vjp only
        pass
    save(case, **arrays)
