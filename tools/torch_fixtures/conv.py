"""Convolution and pooling fixtures: inputs, outputs, vjps and jvps (float64)."""
import torch
import torch.nn.functional as F

from common import jvp, rand, save, vjp

_seed = [100]


def r(*shape):
    _seed[0] += 1
    return rand(*shape, seed=_seed[0])


def case(name, fn, inputs, extra=None):
    """Saves inputs a0.., output, a cotangent g with the vjp v0.., tangents t0.. with jvp."""
    inputs = tuple(inputs)
    out = fn(*inputs)
    g = r(*out.shape)
    grads = vjp(fn, inputs, g)
    tangents = tuple(r(*a.shape) for a in inputs)
    jout = jvp(fn, inputs, tangents)
    arrays = {"out": out, "g": g, "jvp": jout}
    for i, a in enumerate(inputs):
        arrays[f"a{i}"] = a
        arrays[f"v{i}"] = grads[i]
        arrays[f"t{i}"] = tangents[i]
    if extra:
        arrays.update(extra)
    save(name, **arrays)


case("conv2d_basic", lambda x, w, b: F.conv2d(x, w, b), [r(2, 3, 5, 5), r(4, 3, 3, 3), r(4)])
case("conv2d_args",
     lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1), groups=2),
     [r(2, 4, 7, 6), r(6, 2, 3, 2), r(6)])
case("conv2d_same", lambda x, w: F.conv2d(x, w, padding="same", dilation=(1, 2)),
     [r(1, 2, 5, 6), r(3, 2, 2, 3)])
case("conv2d_unbatched", lambda x, w: F.conv2d(x, w, stride=2, padding=1),
     [r(3, 5, 5), r(2, 3, 3, 3)])
case("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1, dilation=2, groups=2),
     [r(2, 4, 9), r(6, 2, 3), r(6)])
case("conv3d", lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=(1, 0, 1)),
     [r(1, 2, 4, 5, 4), r(2, 2, 2, 3, 2), r(2)])
case("conv_transpose2d",
     lambda x, w, b: F.conv_transpose2d(x, w, b, stride=(2, 1), padding=(1, 0),
                                        output_padding=(1, 0), groups=2, dilation=(1, 2)),
     [r(2, 4, 3, 4), r(4, 3, 3, 2), r(6)])
case("conv_transpose1d",
     lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
     [r(2, 3, 5), r(3, 2, 3), r(2)])
x = r(2, 3, 6, 7)
_, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
case("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), [x], {"indices": idx})
x = r(2, 3, 7, 8)
_, idx = F.max_pool2d(x, (3, 2), (2, 3), (1, 1), (2, 1), ceil_mode=True, return_indices=True)
case("max_pool2d_ceil",
     lambda x: F.max_pool2d(x, (3, 2), (2, 3), (1, 1), (2, 1), ceil_mode=True), [x],
     {"indices": idx})
x = r(2, 3, 9)
_, idx = F.max_pool1d(x, 3, 2, 1, ceil_mode=True, return_indices=True)
case("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, 1, ceil_mode=True), [x], {"indices": idx})
case("avg_pool2d", lambda x: F.avg_pool2d(x, 2), [r(2, 3, 6, 7)])
case("avg_pool2d_args",
     lambda x: F.avg_pool2d(x, (3, 2), 2, 1, ceil_mode=True, count_include_pad=False),
     [r(2, 3, 6, 7)])
case("avg_pool2d_pad", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True), [r(1, 2, 6, 6)])
case("avg_pool2d_divisor", lambda x: F.avg_pool2d(x, 3, 2, 1, divisor_override=5),
     [r(3, 6, 7)])
case("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1, ceil_mode=True), [r(2, 3, 10)])
case("avg_pool1d_nopad",
     lambda x: F.avg_pool1d(x, 4, 3, 2, ceil_mode=False, count_include_pad=False), [r(2, 3, 10)])
case("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, (3, 4)), [r(2, 3, 7, 5)])
case("adaptive_avg_pool1d", lambda x: F.adaptive_avg_pool1d(x, 4), [r(2, 3, 7)])
x = r(2, 3, 7, 5)
_, idx = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
case("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (3, 2)), [x], {"indices": idx})
case("unfold", lambda x: F.unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     [r(2, 3, 5, 6)])
case("fold", lambda x: F.fold(x, (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
     [r(2, 18, 12)])

# interpolate (after every other case: the seeds above stay as they were). Sizes that shrink,
# grow, keep (out == in) and double (out == 2 * in) a dim; scale factors that are not in / out
# (the kernels then read 1 / scale); recompute_scale_factor; align_corners both ways.
I = F.interpolate
case("interpolate_nearest1d", lambda x: I(x, size=7), [r(2, 3, 5)])
case("interpolate_nearest2d_scale", lambda x: I(x, scale_factor=(1.5, 2.3)), [r(1, 2, 4, 5)])
case("interpolate_nearest3d", lambda x: I(x, size=(3, 5, 2)), [r(1, 2, 2, 3, 4)])
case("interpolate_nearest2d_keep_double", lambda x: I(x, size=(4, 3)), [r(1, 1, 2, 3)])
case("interpolate_exact2d", lambda x: I(x, size=(5, 3), mode="nearest-exact"), [r(2, 2, 3, 4)])
case("interpolate_exact1d_scale", lambda x: I(x, scale_factor=1.7, mode="nearest-exact"),
     [r(1, 2, 5)])
case("interpolate_linear1d", lambda x: I(x, size=9, mode="linear"), [r(2, 3, 4)])
case("interpolate_linear1d_scale", lambda x: I(x, scale_factor=1.7, mode="linear"),
     [r(1, 2, 6)])
case("interpolate_linear1d_to1",
     lambda x: I(x, size=1, mode="linear", align_corners=True), [r(1, 1, 4)])
case("interpolate_bilinear_align",
     lambda x: I(x, size=(5, 7), mode="bilinear", align_corners=True), [r(2, 2, 3, 4)])
case("interpolate_bilinear_scale",
     lambda x: I(x, scale_factor=(0.6, 1.5), mode="bilinear"), [r(1, 2, 5, 4)])
case("interpolate_bilinear_recompute",
     lambda x: I(x, scale_factor=1.7, mode="bilinear", recompute_scale_factor=True),
     [r(1, 2, 3, 4)])
case("interpolate_bilinear_keep_w", lambda x: I(x, size=(6, 4), mode="bilinear"),
     [r(1, 2, 3, 4)])
case("interpolate_trilinear", lambda x: I(x, size=(3, 4, 5), mode="trilinear"),
     [r(1, 2, 2, 3, 3)])
case("interpolate_trilinear_align",
     lambda x: I(x, scale_factor=2, mode="trilinear", align_corners=True), [r(1, 1, 2, 2, 3)])
