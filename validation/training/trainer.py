"""One seeded training loop for R replicate networks at once (:mod:`validation.training.networks`).

Each replicate r has its own data order (a permutation per epoch from the stream
``(seed, *label, "order", epoch, r)``), its own learning rate and its own optimiser state; the batched
optimisers below apply, per replicate, exactly the update of ``torch.optim.SGD`` / ``torch.optim.Adam``
(default hyper-parameters), so R replicates trained together give what R separate runs give.

A replicate whose loss becomes NaN or ±inf is **diverged**: it is frozen from that update on (its
gradients are zeroed, never averaged into anything), counted, and its accuracy is that of its
non-finite outputs, which count as wrong.

Early stopping (``stop_loss`` ε, ``stop_rule``), per replicate; a stopped replicate is frozen like a diverged one
(its later updates are skipped, its data order is drawn all the same, so the others' numbers do not depend on it):

* ``stop_rule="batch"`` (the default): a replicate stops right after the first update whose mini-batch loss
  (computed before that update) is below ε, even in the middle of an epoch;
* ``stop_rule="epoch"`` (Cohen et al.'s code, instadeepai/scaling-resnets ``train_final_net``): at the end of
  each epoch, the mean of that epoch's mini-batch losses (each computed before its update) decides. The replicate
  stops when the mean is below ε (strictly), or on a **plateau**: a counter is reset to 0 whenever the epoch mean
  is below (1 − ``plateau_tolerance``) × the best epoch mean so far (which it then becomes; the first epoch always
  is), and otherwise grows by 1; the replicate stops when it reaches ``plateau_patience``, i.e. after that many
  epochs in a row without a gain of more than ``plateau_tolerance`` on the best epoch mean. An epoch cut short by
  ``max_updates`` is judged on the batches it ran.

Either way :class:`History` records, per replicate, the epochs and updates it ran, the mean loss of its last
epoch and why it stopped (``loss``, ``plateau``, ``budget`` — the epochs or ``max_updates`` ran out — or
``diverged``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch
import torch.nn.functional as F

from limits.seeding import generator

from .data import Dataset
from .networks import Network

__all__ = ["BatchedOptimizer", "History", "train", "evaluate", "per_replicate_loss", "STOP_RULES", "STOP_REASONS"]

#: the early-stopping rules of :func:`train` (module docstring)
STOP_RULES = ("batch", "epoch")
#: why a replicate stopped (:attr:`History.stop_reason`)
STOP_REASONS = ("loss", "plateau", "budget", "diverged")


class BatchedOptimizer:
    """SGD or Adam on parameters with a leading replicate axis, one learning rate per replicate.

    ``lrs`` has shape (R,); ``step(active)`` updates only the replicates where ``active`` (R,) is True.
    ``scales`` multiplies the learning rate of the named parameters (a depth-dependent rule for the hidden
    weights, say; the others keep ``lrs``).
    Adam: m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − lr·m̂/(√v̂ + ε) with bias-corrected m̂, v̂ and
    (β₁, β₂, ε) = (0.9, 0.999, 1e-8), torch's defaults.
    SGD with ``momentum`` μ and ``weight_decay`` λ (``torch.optim.SGD``'s rule, no dampening): d ← g + λθ,
    b ← d at a replicate's first update and μb + d after, θ ← θ − lr·b (μ = λ = 0: plain SGD, θ ← θ − lr·g).
    """

    def __init__(self, params: dict[str, torch.Tensor], kind: str, lrs: torch.Tensor,
                 scales: dict[str, float] | None = None, *, momentum: float = 0.0, weight_decay: float = 0.0) -> None:
        if kind not in ("sgd", "adam"):
            raise ValueError(f"optimiser {kind!r} unknown (allowed: sgd, adam)")
        if (momentum or weight_decay) and kind != "sgd":
            raise ValueError(f"momentum={momentum}, weight_decay={weight_decay}: only for sgd")
        unknown = sorted(set(scales or {}) - set(params))
        if unknown:
            raise ValueError(f"learning-rate scales for {unknown}, which are not parameters ({', '.join(params)})")
        self.params, self.kind, self.lrs, self.scales = params, kind, lrs, dict(scales or {})
        self.count = 0
        self.momentum, self.weight_decay = momentum, weight_decay
        self.state = {k: (torch.zeros_like(p), torch.zeros_like(p)) for k, p in params.items()} if kind == "adam" else {}
        #: SGD's momentum buffers, and whether each replicate has made its first update (b ← d then)
        self.buffers = {k: torch.zeros_like(p) for k, p in params.items()} if momentum else {}
        self.started = torch.zeros_like(lrs, dtype=torch.bool)

    @torch.no_grad()
    def step(self, active: torch.Tensor, factor: float = 1.0) -> None:
        self.count += 1
        for name, p in self.params.items():
            view = (-1,) + (1,) * (p.dim() - 1)
            lr = (self.lrs * factor * active).view(view)
            if name in self.scales:
                lr = lr * self.scales[name]
            g = torch.where(active.view(view), p.grad, torch.zeros_like(p.grad))
            if self.kind == "sgd":
                if self.weight_decay:
                    g = g + self.weight_decay * p * active.view(view)
                if self.momentum:
                    buffer = self.buffers[name]
                    first = (active & ~self.started).view(view)
                    buffer.copy_(torch.where(first, g, torch.where(active.view(view), self.momentum * buffer + g,
                                                                    buffer)))
                    g = buffer
                p.sub_(lr * g)
                continue
            m, v = self.state[name]
            m.mul_(0.9).add_(g, alpha=0.1)
            v.mul_(0.999).addcmul_(g, g, value=0.001)
            m_hat = m / (1 - 0.9 ** self.count)
            v_hat = v / (1 - 0.999 ** self.count)
            p.sub_(lr * m_hat / (v_hat.sqrt() + 1e-8))
        self.started |= active


def per_replicate_loss(outputs: torch.Tensor, targets: torch.Tensor, task: str) -> torch.Tensor:
    """Mean loss of each replicate, (R,): cross-entropy for classification, mean squared error otherwise."""
    R, B = outputs.shape[:2]
    if task == "classification":
        return F.cross_entropy(outputs.reshape(R * B, -1), targets.reshape(-1), reduction="none").view(R, B).mean(1)
    return (outputs - targets).pow(2).mean(dim=(1, 2))


@torch.no_grad()
def evaluate(net: Network, x: torch.Tensor, y: torch.Tensor, task: str, chunk: int = 1024,
             forward: Callable[[torch.Tensor], torch.Tensor] | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """(loss, accuracy) of every replicate on (x, y); accuracy is None for regression. Non-finite outputs
    count as wrong."""
    forward = forward or net.forward
    R = net.replicates
    total = torch.zeros(R, dtype=torch.float64)
    correct = torch.zeros(R, dtype=torch.float64)
    for start in range(0, len(x), chunk):
        xb, yb = x[start:start + chunk], y[start:start + chunk]
        out = forward(xb.unsqueeze(0).expand(R, *xb.shape))
        target = yb.unsqueeze(0).expand(R, *yb.shape)
        total += per_replicate_loss(out, target, task).double().cpu() * len(xb)
        if task == "classification":
            good = (out.argmax(-1) == target) & torch.isfinite(out).all(-1)
            correct += good.sum(1).double().cpu()
    loss = (total / len(x)).numpy()
    return loss, ((correct / len(x)).numpy() if task == "classification" else None)


@dataclass
class History:
    """What a training run records, per replicate (arrays have a last axis R).

    Attributes:
        train_loss: mean training loss over each epoch's updates, (epochs, R).
        test_loss, test_accuracy: after each epoch, (epochs, R) (accuracy None for regression).
        step_loss: the loss of every update, (updates, R) (only with ``record_steps``).
        final_train_loss, final_train_accuracy: on the whole training set after training, (R,).
        diverged: (R,) bool; updates: SGD updates made by each replicate, (R,).
        stop_rule: the early-stopping rule trained with (``batch`` or ``epoch``, module docstring).
        epochs_run: the epochs each replicate started while still training, (R,).
        last_epoch_loss: the mean of the mini-batch losses of the last of those epochs (the quantity the
            ``epoch`` rule compares with ε; Cohen et al.'s recorded training loss), (R,).
        stop_reason: why each replicate stopped: ``loss`` (below ε), ``plateau`` (``epoch`` rule only),
            ``budget`` (the epochs or ``max_updates`` ran out) or ``diverged``, (R,).
    """

    train_loss: list[list[float]] = field(default_factory=list)
    test_loss: list[list[float]] = field(default_factory=list)
    test_accuracy: list[list[float]] | None = None
    step_loss: list[list[float]] | None = None
    final_train_loss: list[float] = field(default_factory=list)
    final_train_accuracy: list[float] | None = None
    diverged: list[bool] = field(default_factory=list)
    updates: list[int] = field(default_factory=list)
    stop_rule: str = "batch"
    epochs_run: list[int] = field(default_factory=list)
    last_epoch_loss: list[float] = field(default_factory=list)
    stop_reason: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def train(net: Network, data: Dataset, *, epochs: int, batch_size: int, optimizer: str, lrs: torch.Tensor,
          seed: int, label: tuple, lr_drop_epoch: int | None = None, max_updates: int | None = None,
          stop_loss: float | None = None, record_steps: bool = False,
          on_epoch: Callable[[], None] | None = None, lr_scales: dict[str, float] | None = None,
          momentum: float = 0.0, weight_decay: float = 0.0, schedule: str = "constant",
          test_every_epoch: bool = True, stop_rule: str = "batch", plateau_patience: int | None = 5,
          plateau_tolerance: float = 0.01) -> History:
    """Train the R replicates of ``net`` on ``data`` (see the module docstring).

    Args:
        epochs: passes over the training set (each replicate its own order).
        batch_size: examples per update (the last, smaller batch of an epoch is dropped).
        optimizer: ``sgd`` or ``adam``; ``lrs``: the learning rate of each replicate, (R,).
        lr_drop_epoch: from this epoch on the learning rates are divided by 10 (Marion et al.).
        max_updates: stop after this many updates.
        stop_loss: ε, a replicate stops when its loss is below this (None: never); which loss, and when, is
            ``stop_rule``'s: ``batch`` (the default) the loss of one mini-batch, at once; ``epoch`` (Cohen et al.'s
            code) the epoch mean of the mini-batch losses, at the end of each epoch (module docstring).
        plateau_patience: ``epoch`` rule: stop a replicate after this many epochs in a row without an epoch mean
            below (1 − ``plateau_tolerance``) × its best so far (None: no plateau rule); ignored by ``batch``.
        plateau_tolerance: the relative gain on the best epoch mean that counts as progress (0.01: 1%).
        record_steps: keep every update's loss (learning curves).
        on_epoch: called after each epoch (progress bars).
        lr_scales: multipliers of the learning rate of named parameters (:class:`BatchedOptimizer`).
        momentum, weight_decay: SGD's (:class:`BatchedOptimizer`).
        test_every_epoch: False evaluates the test set after the last epoch only (``test_loss`` and
            ``test_accuracy`` then have one row).
        schedule: ``constant``, or ``cosine``: epoch e (from 0) trains at lr·½(1 + cos(πe/epochs)) —
            ``torch.optim.lr_scheduler.CosineAnnealingLR`` with T_max = epochs, stepped once per epoch.
    """
    if schedule not in ("constant", "cosine"):
        raise ValueError(f"schedule {schedule!r} unknown (allowed: constant, cosine)")
    _check_stopping(stop_rule, stop_loss, plateau_patience, plateau_tolerance)
    R = net.replicates
    device = lrs.device
    opt = BatchedOptimizer(net.params, optimizer, lrs, lr_scales, momentum=momentum, weight_decay=weight_decay)
    active = torch.ones(R, dtype=torch.bool, device=device)
    diverged = torch.zeros(R, dtype=torch.bool, device=device)
    updates = torch.zeros(R, dtype=torch.long)
    n = len(data.x_train)
    per_epoch = max(1, n // batch_size)
    history = History(test_accuracy=[] if data.task == "classification" else None,
                      step_loss=[] if record_steps else None, stop_rule=stop_rule)
    epochs_run = np.zeros(R, dtype=int)
    last_epoch_loss = np.full(R, np.nan)
    reason = np.full(R, "", dtype=object)
    best = np.full(R, np.inf)        # the epoch rule's best epoch mean and plateau counter
    bad = np.zeros(R, dtype=int)
    done = 0
    for epoch in range(epochs):
        started = active.cpu().numpy().copy()
        orders = torch.stack([torch.randperm(n, generator=generator(seed, *label, "order", epoch, r))
                              for r in range(R)]).to(device)
        factor = 0.1 if lr_drop_epoch is not None and epoch >= lr_drop_epoch else 1.0
        if schedule == "cosine":
            factor *= 0.5 * (1.0 + math.cos(math.pi * epoch / epochs))
        losses = []
        for i in range(per_epoch):
            if max_updates is not None and done >= max_updates:
                break
            index = orders[:, i * batch_size:(i + 1) * batch_size]
            loss = per_replicate_loss(net.forward(data.x_train[index]), data.y_train[index], data.task)
            finite = torch.isfinite(loss)
            newly = active & ~finite
            diverged |= newly
            active &= finite
            for p in net.params.values():
                p.grad = None
            torch.where(active, loss, torch.zeros_like(loss)).sum().backward()
            opt.step(active, factor)
            updates += active.cpu().long()
            if stop_loss is not None and stop_rule == "batch":
                below = active & (loss.detach() < stop_loss)
                reason[below.cpu().numpy()] = "loss"
                active &= ~below
            value = loss.detach().double().cpu().tolist()
            losses.append(value)
            if record_steps:
                history.step_loss.append(value)
            done += 1
        if losses:
            mean = np.mean(np.asarray(losses), axis=0)
            history.train_loss.append(mean.tolist())
            epochs_run += started
            last_epoch_loss[started] = mean[started]
            if stop_rule == "epoch":
                running = active.cpu().numpy()     # started the epoch and did not diverge during it
                improved = running & (mean < (1.0 - plateau_tolerance) * best)   # NaN: not improved
                best[improved] = mean[improved]
                bad[improved] = 0
                bad[running & ~improved] += 1
                converged = running & (mean < stop_loss) if stop_loss is not None else np.zeros(R, dtype=bool)
                plateau = running & ~converged & (bad >= plateau_patience if plateau_patience is not None else False)
                reason[converged] = "loss"
                reason[plateau] = "plateau"
                active &= ~torch.as_tensor(converged | plateau, device=device)
        last = epoch == epochs - 1 or (max_updates is not None and done >= max_updates) or not bool(active.any())
        if test_every_epoch or last:
            test_loss, test_acc = evaluate(net, data.x_test, data.y_test, data.task)
            history.test_loss.append(test_loss.tolist())
            if history.test_accuracy is not None:
                history.test_accuracy.append(test_acc.tolist())
        if on_epoch is not None:
            on_epoch()
        if last and epoch < epochs - 1:
            break
    train_loss, train_acc = evaluate(net, data.x_train, data.y_train, data.task)
    history.final_train_loss = train_loss.tolist()
    history.final_train_accuracy = None if train_acc is None else train_acc.tolist()
    history.diverged = diverged.cpu().tolist()
    history.updates = updates.tolist()
    reason[diverged.cpu().numpy()] = "diverged"
    reason[reason == ""] = "budget"
    history.epochs_run = epochs_run.tolist()
    history.last_epoch_loss = last_epoch_loss.tolist()
    history.stop_reason = reason.tolist()
    return history


def _check_stopping(stop_rule: Any, stop_loss: Any, patience: Any, tolerance: Any) -> None:
    """Refuse, in one line each, early-stopping arguments :func:`train` cannot use."""
    if stop_rule not in STOP_RULES:
        raise ValueError(f"stop_rule {stop_rule!r} unknown (allowed: {', '.join(STOP_RULES)})")
    if stop_loss is not None and (isinstance(stop_loss, bool) or not isinstance(stop_loss, (int, float))
                                  or not math.isfinite(stop_loss) or stop_loss <= 0):
        raise ValueError(f"stop_loss={stop_loss!r}: give a finite number > 0, or None for no loss threshold")
    if patience is not None and (isinstance(patience, bool) or not isinstance(patience, (int, np.integer))
                                 or patience < 1):
        raise ValueError(f"plateau_patience={patience!r}: give an integer ≥ 1 (epochs), or None for no plateau rule")
    if (isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not math.isfinite(tolerance)
            or not 0 <= tolerance < 1):
        raise ValueError(f"plateau_tolerance={tolerance!r}: give a number in [0, 1) (0.01: a gain of 1% on the best "
                         "epoch mean)")
