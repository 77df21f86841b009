"""Helpers shared by the family scripts: save arrays under a case name, vjp and jvp."""
import os
import sys

import numpy as np
import torch

torch.set_default_dtype(torch.float64)
OUT = sys.argv[1] if len(sys.argv) > 1 else "."


def save(case, **arrays):
    """Writes <case>.<name>.npy for each array (torch tensors, numpy arrays or numbers)."""
    for name, value in arrays.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().cpu().numpy()
        np.save(os.path.join(OUT, f"{case}.{name}.npy"), np.asarray(value))


def rand(*shape, seed, low=-1.0, high=1.0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=g, dtype=torch.float64) * (high - low) + low


def vjp(fn, inputs, cotangent):
    """The vjp of fn at inputs (a tuple of float64 tensors) along cotangent."""
    _, grads = torch.autograd.functional.vjp(fn, inputs, cotangent)
    return grads if isinstance(grads, tuple) else (grads,)


def jvp(fn, inputs, tangents):
    """The jvp of fn at inputs along tangents (forward mode by the double-vjp trick)."""
    _, out = torch.autograd.functional.jvp(fn, inputs, tangents)
    return out
