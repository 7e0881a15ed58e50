"""The torchvision sweep: more networks users feed the converter, full tier only.

Random weights from the case's seed (`weights=None, weights_backbone=None`: nothing is
downloaded); inputs as small as each network allows, so a route converts in seconds to a
minute on two cores. The default run (`pnnx-conformance run --tier smoke --zoo`) leaves these
out; `python -m pnnx_model_zoo.run --models 'sweep'` or `--tier full --zoo` runs them.
"""
from __future__ import annotations

from pnnx_op_cases.case import InputSpec

# name -> (constructor, input shapes, expression of the network's output `y` returned)
TV = "torchvision.models."
CLASSIFIERS = {
    "alexnet": (f"{TV}alexnet(weights=None)", (1, 3, 224, 224)),
    # the convolutional stack only: the 4096-wide classifier (102M weights) makes 5 routes x 2
    # precisions write over 10 GB of artefacts
    "vgg11_bn_features": (f"{TV}vgg11_bn(weights=None).features", (1, 3, 64, 64)),
    "googlenet": (f"{TV}googlenet(weights=None, aux_logits=False, init_weights=True)", (1, 3, 224, 224)),
    "inception_v3": (f"{TV}inception_v3(weights=None, aux_logits=False, init_weights=True)", (1, 3, 299, 299)),
    "densenet121": (f"{TV}densenet121(weights=None)", (1, 3, 160, 160)),
    "mnasnet0_5": (f"{TV}mnasnet0_5(weights=None)", (1, 3, 224, 224)),
    "resnext50_32x4d": (f"{TV}resnext50_32x4d(weights=None)", (1, 3, 160, 160)),
    "wide_resnet50_2": (f"{TV}wide_resnet50_2(weights=None)", (1, 3, 128, 128)),
    "efficientnet_v2_s": (f"{TV}efficientnet_v2_s(weights=None)", (1, 3, 160, 160)),
    "mobilenet_v3_large": (f"{TV}mobilenet_v3_large(weights=None)", (1, 3, 224, 224)),
    "regnet_y_400mf": (f"{TV}regnet_y_400mf(weights=None)", (1, 3, 224, 224)),
    "shufflenet_v2_x0_5": (f"{TV}shufflenet_v2_x0_5(weights=None)", (1, 3, 224, 224)),
    "maxvit_t": (f"{TV}maxvit_t(weights=None)", (1, 3, 224, 224)),
    "swin_v2_t": (f"{TV}swin_v2_t(weights=None)", (1, 3, 224, 224)),
    "vit_tiny": (f"{TV}vision_transformer.VisionTransformer(image_size=64, patch_size=8, num_layers=2, num_heads=4,"
                 " hidden_dim=64, mlp_dim=128, num_classes=10)", (1, 3, 64, 64)),
}
SEGMENTERS = {
    "fcn_resnet50": ("fcn_resnet50", (1, 3, 128, 128)),
    "lraspp_mobilenet_v3_large": ("lraspp_mobilenet_v3_large", (1, 3, 224, 224)),
}
VIDEO = ("r3d_18", "mc3_18", "r2plus1d_18")
CLIP = (1, 3, 8, 64, 64)


def cases() -> list[tuple[str, str, tuple[InputSpec, ...], str, bool]]:
    """(name, constructor, inputs, output expression, whether a training-mode pass runs without
    targets, so batch-norm statistics can be calibrated) per network of the sweep."""
    out = [(n, ctor, (InputSpec(shape),), "", True) for n, (ctor, shape) in CLASSIFIERS.items()]
    for name, (fn, shape) in SEGMENTERS.items():
        aux = ", aux_loss=False" if fn != "lraspp_mobilenet_v3_large" else ""
        out.append((name, f"{TV}segmentation.{fn}(weights=None, weights_backbone=None{aux})", (InputSpec(shape),),
                    "['out']", True))
    for name in VIDEO:
        out.append((name, f"{TV}video.{name}(weights=None)", (InputSpec(CLIP),), "", True))
    out.append(("raft_small", f"{TV}optical_flow.raft_small(weights=None)",
                (InputSpec((1, 3, 128, 128)), InputSpec((1, 3, 128, 128))), "[-1]", True))
    for name in ("ssdlite320_mobilenet_v3_large", "fasterrcnn_mobilenet_v3_large_320_fpn"):
        out.append((name, f"{TV}detection.{name}(weights=None, weights_backbone=None)", (InputSpec((1, 3, 320, 320)),),
                    "[0]['boxes']", False))  # training mode wants targets
    return out
