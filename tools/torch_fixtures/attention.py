"""Fixtures of the attention and contractions family: addmm, baddbmm, einsum.

Each case saves its inputs (in0, in1, ...), the output (out), a cotangent (ct) and the vjp
(g0, g1, ...), and tangents (t0, ...) with the jvp (jv). torch 1.13 has no
scaled_dot_product_attention: its test compares with the definition written in ft ops.
"""
import torch

from common import jvp, rand, save, vjp


def rand_of(shape, seed):
    """rand of any shape, rank 0 included."""
    return rand(*shape, seed=seed) if len(shape) else rand(1, seed=seed)[0]


def case(name, fn, inputs, seed):
    inputs = tuple(inputs)
    out = fn(*inputs)
    ct = rand_of(out.shape, seed + 100)
    grads = vjp(fn, inputs, ct)
    tangents = tuple(rand_of(x.shape, seed + 200 + i) for i, x in enumerate(inputs))
    jv = jvp(fn, inputs, tangents)
    arrays = {f"in{i}": x for i, x in enumerate(inputs)}
    arrays.update({f"g{i}": g for i, g in enumerate(grads)})
    arrays.update({f"t{i}": t for i, t in enumerate(tangents)})
    save(name, out=out, ct=ct, jv=jv, **arrays)


# addmm(input, mat1, mat2, beta, alpha) and baddbmm.
case("addmm_default", lambda i, a, b: torch.addmm(i, a, b),
     [rand(3, seed=1), rand(2, 4, seed=2), rand(4, 3, seed=3)], 10)
case("addmm_scaled", lambda i, a, b: torch.addmm(i, a, b, beta=0.5, alpha=-2.0),
     [rand(2, 3, seed=4), rand(2, 4, seed=5), rand(4, 3, seed=6)], 20)
case("addmm_beta0", lambda i, a, b: torch.addmm(i, a, b, beta=0.0, alpha=1.5),
     [rand(2, 1, seed=7), rand(2, 2, seed=8), rand(2, 3, seed=9)], 30)
case("baddbmm_default", lambda i, a, b: torch.baddbmm(i, a, b),
     [rand(3, 2, 4, seed=11), rand(3, 2, 5, seed=12), rand(3, 5, 4, seed=13)], 40)
case("baddbmm_scaled", lambda i, a, b: torch.baddbmm(i, a, b, beta=2.0, alpha=0.3),
     [rand(4, seed=14), rand(2, 3, 2, seed=15), rand(2, 2, 4, seed=16)], 50)

# einsum: one case per equation form.
EINSUM = [
    ("einsum_matmul", "ij,jk->ik", [(2, 3), (3, 4)]),
    ("einsum_implicit", "ij,jk", [(2, 3), (3, 4)]),
    ("einsum_implicit_order", "ba", [(2, 3)]),
    ("einsum_trace", "ii", [(3, 3)]),
    ("einsum_diag", "ii->i", [(3, 3)]),
    ("einsum_diag_contract", "iij,jk->ik", [(2, 2, 3), (3, 2)]),
    ("einsum_batch", "bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    ("einsum_ellipsis", "...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
    ("einsum_ellipsis_sum", "i...->i", [(2, 3, 2)]),
    ("einsum_ellipsis_implicit", "...ij", [(2, 2, 3)]),
    ("einsum_outer", "i,j->ij", [(3,), (4,)]),
    ("einsum_sum_all", "ijk->", [(2, 3, 2)]),
    ("einsum_chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
    ("einsum_bilinear", "bn,anm,bm->ba", [(2, 3), (2, 3, 4), (2, 4)]),
    ("einsum_upper", "Aa,aB->AB", [(2, 3), (3, 2)]),
    ("einsum_broadcast_one", "ij,ij->ij", [(2, 1), (2, 3)]),
    ("einsum_spaces", " i j , j -> i", [(2, 3), (3,)]),
    ("einsum_unused", "ij,k->i", [(2, 3), (2,)]),
]
for n, (name, eq, shapes) in enumerate(EINSUM):
    case(name, lambda *xs, eq=eq: torch.einsum(eq, *xs),
         [rand(*s, seed=100 + 10 * n + i) for i, s in enumerate(shapes)], 1000 + 10 * n)
