"""Frontends: each door a model comes in through, side by side, all producing the same IR.

| folder | door | how |
|---|---|---|
| `python/` | a live `nn.Module` + example inputs (the Python API) | a `TorchFunctionMode` records each PyTorch API call as one operator; standard `nn` modules are leaves |
| `torchscript/` | a TorchScript `.pt` (upstream's drop-in) | rebuilds the file as an `nn.Module` whose forward replays its graph through `aten/`, then `python/` captures it |
| `aten/` | (shared) | the one `aten::` rule table: an aten call back to the Python API, for every frontend that reads aten graphs |
"""
