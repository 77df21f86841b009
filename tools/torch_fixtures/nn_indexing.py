"""Fixtures of the indexing and shape ops for models (ops/nn_indexing.h).

Each case saves its inputs, the output, a cotangent `ct` with the vjp (`g_<input>`), and a
tangent per differentiable input (`t_<input>`) with the jvp (`jvp`). float64 throughout.
"""
import torch
import torch.nn.functional as F

from common import jvp, rand, save, vjp


def rnd(shape, seed):
    """rand of any shape, 0-dim included."""
    return rand(*shape, seed=seed) if len(shape) else rand(1, seed=seed).reshape(())


def case(name, fn, diff, const=None, seed=0):
    """fn(*diff) with the differentiable inputs `diff` (a dict name -> tensor)."""
    names = list(diff)
    inputs = tuple(diff[n] for n in names)
    out = fn(*inputs)
    ct = rnd(out.shape, seed + 100)
    grads = vjp(fn, inputs, ct)
    tangents = tuple(rnd(x.shape, seed + 200 + i) for i, x in enumerate(inputs))
    arrays = dict(diff)
    arrays.update(const or {})
    arrays.update(out=out, ct=ct, jvp=jvp(fn, inputs, tangents))
    for n, g, t in zip(names, grads, tangents):
        arrays["g_" + n] = g
        arrays["t_" + n] = t
    save(name, **arrays)


idx = torch.tensor([[1, 3, 1], [0, 2, 1]])
case("embedding", lambda w: F.embedding(idx, w), {"weight": rand(4, 3, seed=1)},
     {"input": idx}, seed=1)
case("embedding_padding", lambda w: F.embedding(idx, w, padding_idx=1),
     {"weight": rand(4, 3, seed=2)}, {"input": idx}, seed=2)
case("embedding_padding_neg", lambda w: F.embedding(idx, w, padding_idx=-1),
     {"weight": rand(4, 3, seed=3)}, {"input": idx}, seed=3)

mask = torch.tensor([True, False, False, True])
case("masked_fill", lambda x, v: torch.masked_fill(x, mask, v),
     {"x": rand(3, 4, seed=4), "value": rnd((), 5)}, {"mask": mask}, seed=4)
mask2 = torch.tensor([[True], [False]])
case("masked_fill_broadcast", lambda x: torch.masked_fill(x, mask2, 0.5),
     {"x": rand(3, seed=6)}, {"mask": mask2}, seed=6)

aidx = torch.tensor([2, 0, 2])
case("index_add", lambda x, s: torch.index_add(x, 1, aidx, s, alpha=1.5),
     {"x": rand(3, 4, seed=7), "source": rand(3, 3, seed=8)}, {"index": aidx}, seed=7)
case("index_add_dim0", lambda x, s: torch.index_add(x, 0, aidx, s),
     {"x": rand(4, 2, seed=9), "source": rand(3, 2, seed=10)}, {"index": aidx}, seed=9)

for d in (-1, 0, 2):
    tag = f"m{-d}" if d < 0 else str(d)
    case(f"tril_{tag}", lambda x: torch.tril(x, d), {"x": rand(2, 3, 4, seed=11)}, seed=11)
    case(f"triu_{tag}", lambda x: torch.triu(x, d), {"x": rand(2, 3, 4, seed=12)}, seed=12)

case("roll_dims", lambda x: torch.roll(x, (1, -3), (0, 1)), {"x": rand(3, 4, seed=13)}, seed=13)
case("roll_flat", lambda x: torch.roll(x, 5), {"x": rand(3, 4, seed=14)}, seed=14)
case("roll_repeat", lambda x: torch.roll(x, (2, 3), (1, -1)), {"x": rand(2, 5, seed=15)},
     seed=15)

case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), {"x": rand(1, 8, 2, 3, seed=16)}, seed=16)
case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), {"x": rand(1, 2, 4, 6, seed=17)},
     seed=17)

# Advanced indexing: adjacent indexed dims (B takes their place), non-adjacent (B first),
# negative and repeated indices (the gradient accumulates).
ii = torch.tensor([[0, 2, -1], [1, 1, 3]])
jj = torch.tensor([4, -2, 0])
case("index_adjacent", lambda x: x[:, ii, jj], {"x": rand(2, 4, 5, 3, seed=18)},
     {"i": ii, "j": jj}, seed=18)
ni = torch.tensor([2, 0, 2])
nj = torch.tensor([-1])
case("index_nonadjacent", lambda x: x[ni, :, nj], {"x": rand(3, 4, 2, seed=19)},
     {"i": ni, "j": nj}, seed=19)
# index_put with accumulate (repeated places add up) and without (distinct places, where
# torch's gradient is defined); values broadcast over the kept dim.
# (torch.index_put takes no None entries in 1.13; aten::index_put does.)
pi = torch.tensor([1, 0, 1, -1])
case("index_put_accumulate",
     lambda x, v: torch.ops.aten.index_put(x, [None, pi], v, True),
     {"x": rand(3, 4, 2, seed=20), "values": rand(4, 2, seed=21)}, {"i": pi}, seed=20)
qi = torch.tensor([[2], [0]])
qj = torch.tensor([1, 3])
case("index_put", lambda x, v: torch.ops.aten.index_put(x, [qi, None, qj], v, False),
     {"x": rand(3, 2, 4, seed=22), "values": rand(2, 1, 2, seed=23)}, {"i": qi, "j": qj},
     seed=22)
