"""prof.torch - PyTorch helpers: module regions, memory at steps, device syncs.

    import prof, prof.torch
    prof.start("run.prof")
    prof.torch.instrument(model)        # "fc1.forward", "fc1.backward", ... nested
    prof.torch.instrument(optimizer)    # "optimizer.step"
    prof.torch.track_syncs()            # .item(), .cpu(), ... of GPU tensors as SYNC
    for x, y in prof.data(loader):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        prof.torch.step()               # + gpu.allocated / gpu.reserved

Or with no change to the program: prof.torch.auto() (which `prof record --
python3 train.py` runs when the program imports torch) hooks every
optimizer, top-level module (and its submodules down to N levels with
hooks "modules=N"), DataLoader and device sync; see auto().

Works on CPU-only PyTorch and on CUDA (device memory is sampled only once
CUDA is initialized, so a CPU run never initializes it). Regions opened by
hooks are kept on a per-thread stack and closed by name, so a forward that
raises, or a backward that never reaches a module's inputs, cannot leave
the profile's nesting wrong: what is left open is closed at the end of the
backward pass, at the next step, or by the enclosing module.
"""
from prof._torch_auto import HOOKS, auto
from prof._torch_base import (cuda_waits, instrument, sample_memory, step, tensor_waits,
                              track_syncs, uninstrument, untrack_syncs)

__all__ = ["instrument", "uninstrument", "step", "sample_memory", "track_syncs",
           "untrack_syncs", "tensor_waits", "cuda_waits", "auto", "HOOKS"]
