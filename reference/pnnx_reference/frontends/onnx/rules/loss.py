"""Training losses that inference graphs sometimes keep: NegativeLogLikelihoodLoss ->
`F.nll_loss`, SoftmaxCrossEntropyLoss -> `F.cross_entropy` (and its log-probabilities)."""
from __future__ import annotations

import torch.nn.functional as F

from .registry import RULES

rule = RULES.register


def _options(ctx) -> dict:
    options = {"reduction": ctx.attr("reduction", "mean")}
    if ctx.attr("ignore_index") is not None:
        options["ignore_index"] = int(ctx.attr("ignore_index"))
    if ctx.has(2):
        options["weight"] = ctx.tensor(2)
    return options


@rule("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(ctx):
    return F.nll_loss(ctx.tensor(0), ctx.tensor(1), **_options(ctx))


@rule("SoftmaxCrossEntropyLoss", produces=("F.log_softmax",))
def softmax_cross_entropy_loss(ctx):
    scores, labels = ctx.tensor(0), ctx.tensor(1)
    options = _options(ctx)
    if len(ctx.node.outputs) > 1 and ctx.node.outputs[1]:
        log_prob = F.log_softmax(scores, dim=1)
        return [F.nll_loss(log_prob, labels, **options), log_prob]
    return F.cross_entropy(scores, labels, **options)
