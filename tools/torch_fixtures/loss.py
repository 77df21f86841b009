"""Loss fixtures: for each op and argument mode, the inputs, the output, and the vjp (plus a
jvp where torch 1.13 has forward AD for the op), float64, fixed seeds."""
import torch
import torch.nn.functional as F

from common import jvp, rand, save, vjp



def rand_of(shape, seed):
    """rand for any shape, 0-dim included."""
    return rand(*shape, seed=seed) if len(shape) else rand(1, seed=seed).reshape(())


REDUCTIONS = ["none", "mean", "sum"]


def pointwise(name, fn, x, t, differentiable_target=True, extra="", **consts):
    """One case per reduction: inputs, output, vjp w.r.t. input (and target), jvp."""
    for red in REDUCTIONS + (["batchmean"] if name == "kl_div" else []):
        case = f"{name}{extra}_{red}"
        f = lambda a, b: fn(a, b, red)
        out = f(x, t)
        g = rand_of(out.shape, 99)
        if differentiable_target:
            gx, gt = vjp(f, (x, t), g)
            tx, tt = rand_of(x.shape, 7), rand_of(t.shape, 8)
            save(case, input=x, target=t, output=out, grad_out=g, grad_input=gx,
                 grad_target=gt, tangent_input=tx, tangent_target=tt,
                 jvp=jvp(f, (x, t), (tx, tt)), **consts)
        else:
            (gx,) = vjp(lambda a: f(a, t), (x,), g)
            tx = rand_of(x.shape, 7)
            save(case, input=x, target=t, output=out, grad_out=g, grad_input=gx,
                 tangent_input=tx, jvp=jvp(lambda a: f(a, t), (x,), (tx,)), **consts)


x = rand(3, 4, seed=1)
t = rand(3, 4, seed=2)
pointwise("mse", lambda a, b, r: F.mse_loss(a, b, reduction=r), x, t)
pointwise("l1", lambda a, b, r: F.l1_loss(a, b, reduction=r), x, t)
pointwise("smooth_l1", lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5), x, t)
pointwise("smooth_l1", lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r), x * 3, t,
          extra="_default")
pointwise("huber", lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=0.5), x, t)
pointwise("huber", lambda a, b, r: F.huber_loss(a, b, reduction=r), x * 3, t,
          extra="_default")
# Broadcasting: input [3, 1] against target [4].
pointwise("mse", lambda a, b, r: F.mse_loss(a.expand(3, 4), b.expand(3, 4), reduction=r),
          rand(3, 1, seed=3), rand(4, seed=4), extra="_bcast")

logits = rand(3, 4, seed=5, low=-3, high=3)
probs = rand(3, 4, seed=6, low=0.05, high=0.95)
w = rand(4, seed=10, low=0.5, high=2.0)
pw = rand(4, seed=11, low=0.5, high=2.0)
pointwise("bce_logits", lambda a, b, r: F.binary_cross_entropy_with_logits(a, b, reduction=r),
          logits, probs)
pointwise("bce_logits", lambda a, b, r: F.binary_cross_entropy_with_logits(
    a, b, weight=w, pos_weight=pw, reduction=r), logits, probs, extra="_weighted", weight=w,
          pos_weight=pw)
p_in = rand(3, 4, seed=12, low=0.05, high=0.95)
pointwise("bce", lambda a, b, r: F.binary_cross_entropy(a, b, reduction=r), p_in, probs,
          differentiable_target=False)
pointwise("bce", lambda a, b, r: F.binary_cross_entropy(a, b, weight=w, reduction=r), p_in,
          probs, differentiable_target=False, extra="_weighted", weight=w)
# The log clamp: exact 0 and 1 probabilities against both labels.
save("bce_clamp", input=torch.tensor([0.0, 1.0, 0.0, 1.0]),
     target=torch.tensor([0.0, 0.0, 1.0, 1.0]),
     output=F.binary_cross_entropy(torch.tensor([0.0, 1.0, 0.0, 1.0]),
                                   torch.tensor([0.0, 0.0, 1.0, 1.0]), reduction="none"))

log_q = torch.log_softmax(rand(3, 4, seed=13), 1)
p = torch.softmax(rand(3, 4, seed=14), 1)
pointwise("kl_div", lambda a, b, r: F.kl_div(a, b, reduction=r), log_q, p)
pointwise("kl_div", lambda a, b, r: F.kl_div(a, b, reduction=r, log_target=True), log_q,
          torch.log(p), extra="_logt")


def classes(name, fn, x, target, **kw):
    for red in REDUCTIONS:
        case = f"{name}_{red}"
        f = lambda a: fn(a, target, reduction=red, **kw)
        out = f(x)
        g = rand_of(out.shape, 99)
        (gx,) = vjp(f, (x,), g)
        arrays = dict(input=x, target=target, output=out, grad_out=g, grad_input=gx)
        if "weight" in kw:
            arrays["weight"] = kw["weight"]
        try:
            tx = rand_of(x.shape, 7)
            arrays["tangent_input"] = tx
            arrays["jvp"] = jvp(f, (x,), (tx,))
        except RuntimeError:
            del arrays["tangent_input"]
        save(case, **arrays)


lsm = torch.log_softmax(rand(4, 3, seed=20), 1)
tgt = torch.tensor([0, 2, 1, 2])
tgt_ign = torch.tensor([0, -100, 1, 2])
wc = torch.tensor([0.5, 2.0, 1.5])
classes("nll", F.nll_loss, lsm, tgt)
classes("nll_weighted", F.nll_loss, lsm, tgt, weight=wc)
classes("nll_ignore", F.nll_loss, lsm, tgt_ign, weight=wc)
classes("nll_ignore1", F.nll_loss, lsm, tgt, ignore_index=1)
classes("nll_1d", F.nll_loss, lsm[0], torch.tensor(2))
lsm4 = torch.log_softmax(rand(2, 3, 2, 2, seed=21), 1)
tgt4 = torch.tensor([[[0, 1], [2, 2]], [[1, 0], [-100, 2]]])
classes("nll_4d", F.nll_loss, lsm4, tgt4, weight=wc)

logits = rand(4, 3, seed=22, low=-2, high=2)
classes("ce", F.cross_entropy, logits, tgt)
classes("ce_weighted", F.cross_entropy, logits, tgt, weight=wc)
classes("ce_ignore_smooth", F.cross_entropy, logits, tgt_ign, weight=wc, label_smoothing=0.2)
classes("ce_smooth", F.cross_entropy, logits, tgt, label_smoothing=0.3)
classes("ce_1d", F.cross_entropy, logits[0], torch.tensor(1), label_smoothing=0.1)
logits4 = rand(2, 3, 2, 2, seed=23, low=-2, high=2)
classes("ce_4d", F.cross_entropy, logits4, tgt4, weight=wc, label_smoothing=0.1)
probs_t = torch.softmax(rand(4, 3, seed=24), 1)
for extra, kw in [("", {}), ("_weighted", dict(weight=wc)), ("_smooth", dict(label_smoothing=0.2)),
                  ("_weighted_smooth", dict(weight=wc, label_smoothing=0.2))]:
    for red in REDUCTIONS:
        case = f"ce_prob{extra}_{red}"
        f = lambda a, b: F.cross_entropy(a, b, reduction=red, **kw)
        out = f(logits, probs_t)
        g = rand_of(out.shape, 99)
        gx, gt = vjp(f, (logits, probs_t), g)
        tx, tt = rand(4, 3, seed=7), rand(4, 3, seed=8)
        save(case, input=logits, target=probs_t, output=out, grad_out=g, grad_input=gx,
             grad_target=gt, tangent_input=tx, tangent_target=tt,
             jvp=jvp(f, (logits, probs_t), (tx, tt)), **({"weight": wc} if kw.get("weight") is not None else {}))
