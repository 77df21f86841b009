"""Fixtures of the optimizers (issue 24): torch.optim's trajectories on a small least-squares
problem, for tree/optim_test.cc to replay with ft's functional optimizers.

The problem: params {w: [3, 2], b: [2]}, loss = sum((x @ w + b - y)^2) / n over fixed x [5, 3]
and y [5, 2]. Each case saves the starting w and b (w0, b0), x and y, and the parameters after
every step (w1, b1, ..., w<steps>, b<steps>). float64 throughout.
"""
import torch

from common import rand, save

STEPS = 6

CASES = {
    "sgd": lambda p: torch.optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "sgd_nesterov_decay": lambda p: torch.optim.SGD(
        p, lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01),
    "sgd_dampening": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.5, dampening=0.3),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01),
    "adam_decay": lambda p: torch.optim.Adam(
        p, lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01),
    "adamw_decay": lambda p: torch.optim.AdamW(
        p, lr=0.05, betas=(0.85, 0.95), eps=1e-7, weight_decay=0.3),
}


def main():
    x = rand(5, 3, seed=1)
    y = rand(5, 2, seed=2)
    for case, make in CASES.items():
        w = rand(3, 2, seed=3).requires_grad_()
        b = rand(2, seed=4).requires_grad_()
        arrays = {"x": x, "y": y, "w0": w.detach().clone(), "b0": b.detach().clone()}
        opt = make([w, b])
        for step in range(1, STEPS + 1):
            opt.zero_grad()
            loss = ((x @ w + b - y) ** 2).sum() / x.shape[0]
            loss.backward()
            opt.step()
            arrays[f"w{step}"] = w.detach().clone()
            arrays[f"b{step}"] = b.detach().clone()
        save(case, **arrays)


if __name__ == "__main__":
    main()
