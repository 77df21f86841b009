"""Fixtures for the normalization family: layer_norm, rms_norm, normalize, group_norm,
batch_norm, instance_norm (inputs, outputs, vjp and jvp, float64)."""
import torch
import torch.nn.functional as F

from common import jvp, rand, save, vjp


def with_grads(case, fn, inputs, seed, **extra):
    """Saves inputs in0.., the output, vjp grads vjp0.. and jvp along tangents t0.."""
    out = fn(*inputs)
    cot = rand(*out.shape, seed=seed + 100)
    grads = vjp(fn, tuple(inputs), cot)
    tangents = tuple(rand(*t.shape, seed=seed + 200 + i) for i, t in enumerate(inputs))
    tan_out = jvp(fn, tuple(inputs), tangents)
    arrays = {f"in{i}": t for i, t in enumerate(inputs)}
    arrays.update({f"vjp{i}": g for i, g in enumerate(grads)})
    arrays.update({f"t{i}": t for i, t in enumerate(tangents)})
    save(case, out=out, cot=cot, jvp=tan_out, **arrays, **extra)


# layer_norm
x = rand(3, 4, 5, seed=1)
w = rand(5, seed=2, low=0.5, high=1.5)
b = rand(5, seed=3)
with_grads("layer_norm_affine", lambda x, w, b: F.layer_norm(x, [5], w, b), [x, w, b], 10)
with_grads("layer_norm_2d", lambda x: F.layer_norm(x, [4, 5], eps=1e-3), [x], 20)
with_grads("layer_norm_weight", lambda x, w: F.layer_norm(x, [5], w), [x, w], 30)


# rms_norm (torch 1.13 lacks it: its torch >= 2.4 definition)
def rms(x, shape, w=None, eps=None):
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    dims = tuple(range(-len(shape), 0))
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y * w if w is not None else y


x = rand(3, 4, seed=4)
w = rand(4, seed=5, low=0.5, high=1.5)
with_grads("rms_norm_weight", lambda x, w: rms(x, [4], w), [x, w], 40)
with_grads("rms_norm_eps", lambda x: rms(x, [3, 4], eps=1e-3), [x], 50)

# normalize
x = rand(3, 4, seed=6)
with_grads("normalize_default", lambda x: F.normalize(x), [x], 60)
with_grads("normalize_p1_dim0", lambda x: F.normalize(x, p=1.0, dim=0), [x], 70)
with_grads("normalize_p3_last", lambda x: F.normalize(x, p=3.0, dim=-1, eps=1e-6), [x], 80)
xz = x.clone()
xz[1] = 0.0
save("normalize_zero_row", in0=xz, out=F.normalize(xz))

# group_norm
x = rand(2, 6, 3, seed=7)
w = rand(6, seed=8, low=0.5, high=1.5)
b = rand(6, seed=9)
with_grads("group_norm_affine", lambda x, w, b: F.group_norm(x, 3, w, b), [x, w, b], 90)
x4 = rand(2, 4, 2, 2, seed=11)
with_grads("group_norm_4d", lambda x: F.group_norm(x, 2, eps=1e-3), [x4], 100)

# batch_norm (running stats copied: F.batch_norm updates them in place)
x = rand(4, 3, 2, seed=12)
w = rand(3, seed=13, low=0.5, high=1.5)
b = rand(3, seed=14)
rm = rand(3, seed=15)
rv = rand(3, seed=16, low=0.5, high=1.5)
for name, training in [("batch_norm_train", True), ("batch_norm_eval", False)]:
    m, v = rm.clone(), rv.clone()
    out = F.batch_norm(x, m, v, w, b, training=training, momentum=0.2, eps=1e-4)
    save(name, rm=rm, rv=rv, new_rm=m, new_rv=v)
    with_grads(name, lambda x, w, b: F.batch_norm(x, rm.clone(), rv.clone(), w, b,
                                                  training=training, momentum=0.2, eps=1e-4),
               [x, w, b], 110 if training else 120)
x2 = rand(5, 3, seed=17)
with_grads("batch_norm_nostats", lambda x: F.batch_norm(x, None, None, training=True), [x2], 130)

# instance_norm
x = rand(2, 3, 4, seed=18)
m, v = rm.clone(), rv.clone()
F.instance_norm(x, m, v, w, b, use_input_stats=True, momentum=0.3)
save("instance_norm_stats", rm=rm, rv=rv, new_rm=m, new_rv=v)
with_grads("instance_norm_stats",
           lambda x, w, b: F.instance_norm(x, rm.clone(), rv.clone(), w, b, momentum=0.3),
           [x, w, b], 140)
with_grads("instance_norm_plain", lambda x: F.instance_norm(x), [x], 150)
save("instance_norm_eval", rm=rm, rv=rv)
with_grads("instance_norm_eval",
           lambda x, w, b: F.instance_norm(x, rm, rv, w, b, use_input_stats=False), [x, w, b], 160)
