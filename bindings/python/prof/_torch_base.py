"""prof._torch_base - what prof.torch's explicit helpers are made of: the
per-thread stack of regions that hooks open, the backward hooks at a
module's boundary, instrument(), steps with memory, and the device syncs
(prof.torch documents them; prof._torch_auto builds auto() on them).
"""

import functools
import threading
import weakref

import torch

import prof as _prof

_begin_id = _prof._begin_id
_end = _prof.end
_intern = _prof.intern


# ---- regions opened by hooks: a per-thread stack, closed by id ---------------------

class _Open:
    """The regions hooks opened on one thread, innermost last, by id."""
    __slots__ = ("ids", "callback", "stale")

    def __init__(self):
        self.ids = []
        self.callback = False  # a close-all is queued for the running backward pass
        self.stale = False     # that pass ended on another thread: close at the next


class _Local(threading.local):
    def __init__(self):
        self.open = _Open()


_local = _Local()


def _push(rid):
    _begin_id(rid, _prof.COMPUTE)
    _local.open.ids.append(rid)


def _close(rid):
    """Closes the innermost open region rid and whatever was left open inside it."""
    ids = _local.open.ids
    if ids and ids[-1] == rid:  # the usual case: properly nested
        ids.pop()
        _end()
        return
    for i in range(len(ids) - 2, -1, -1):
        if ids[i] == rid:
            for _ in range(len(ids) - i):
                _end()
            del ids[i:]
            return


def _close_all():
    ids = _local.open.ids
    for _ in ids:
        _end()
    ids.clear()


def _backward_done(state):
    # Runs on the thread that called backward(); on CUDA the hooks ran on
    # the device's autograd thread, whose regions only it can close.
    state.callback = False
    if state is _local.open:
        _close_all()
    else:
        state.stale = True


def _push_backward(rid):
    state = _local.open
    if state.stale:
        state.stale = False
        _close_all()
    if not state.callback:
        try:  # closes what is still open when this backward pass ends
            torch.autograd.Variable._execution_engine.queue_callback(
                functools.partial(_backward_done, state))
            state.callback = True
        except (AttributeError, RuntimeError):
            pass
    _push(rid)


# ---- backward regions: hooks on the tensors at a module's boundary ------------------
#
# A module's backward begins when the gradient of its output is ready and
# ends when the gradients of its inputs are. One gradient hook per tensor
# dispatches for every module that has the tensor at its boundary (a
# Sequential returns its last child's output tensor itself): ends first,
# innermost module first, then begins, outermost first, so that the regions
# nest as the modules do. A module whose inputs need no gradient (the first
# layer, fed data) ends when the gradients of its first layer's parameters
# are ready.

def _slot(t):
    slot = getattr(t, "_prof_backward", None)
    if slot is None:
        slot = ([], [])  # ends, begins: backward region ids, in registration order
        t._prof_backward = slot
        t.register_hook(functools.partial(_fire, slot))
    return slot


def _fire(slot, grad):
    ends, begins = slot
    for rid in reversed(ends):
        _close(rid)
    for rid in reversed(begins):
        _push_backward(rid)
    del ends[:], begins[:]  # a tensor kept across steps (a leaf) is registered again
    return None


def _tensors(value):
    if isinstance(value, torch.Tensor):
        return [value] if value.requires_grad else []
    if isinstance(value, (tuple, list)):
        return [t for t in value if isinstance(t, torch.Tensor) and t.requires_grad]
    if isinstance(value, dict):
        return [t for t in value.values() if isinstance(t, torch.Tensor) and t.requires_grad]
    return []


class _ParamEnd:
    """Ends a module's backward region once each of its parameters has its
    gradient, then removes its hooks."""
    __slots__ = ("owner", "left", "handles")

    def __init__(self, owner, params):
        self.owner = owner
        self.left = len(params)
        self.handles = [p.register_hook(self._one) for p in params]

    def cancel(self):
        for h in self.handles:
            h.remove()
        self.handles = []
        if self.owner.pending is self:
            self.owner.pending = None

    def _one(self, grad):
        self.left -= 1
        if self.left == 0:
            self.cancel()
            _close(self.owner.bwd)
        return None


def _last_gradients(module):
    """The parameters whose gradients end the module's backward when its
    inputs need none: those of its first submodule that has parameters of
    its own (the first layer: its gradients are computed last). Hooking
    every parameter would cost more than the region."""
    for m in module.modules():
        own = [p for p in m.parameters(recurse=False) if p.requires_grad]
        if own:
            return own
    return []


class _Hooks:
    """The hooks of one module: its forward and backward region ids, whose
    names get the module's class (torch.nn.Linear, or the program's own)."""

    def __init__(self, path, module, backward):
        cls = _prof.class_name(module)
        self.fwd = _intern(path + "forward")
        _prof.name_class(path + "forward", cls)
        self.bwd = _intern(path + "backward") if backward else 0
        if backward:
            _prof.name_class(path + "backward", cls)
        self.params = _last_gradients(module)
        self.inputs_need_grad = False
        self.pending = None  # the _ParamEnd of the last forward, until its backward

    def pre(self, module, inputs):
        _push(self.fwd)
        self.inputs_need_grad = False
        if self.bwd and torch.is_grad_enabled():
            try:
                ins = _tensors(inputs)
                for t in ins:
                    ends = _slot(t)[0]
                    if self.bwd not in ends:
                        ends.append(self.bwd)
                self.inputs_need_grad = bool(ins)
            except (RuntimeError, AttributeError, TypeError) as e:  # a tensor that takes no hook
                _prof._report_once("prof.torch: no backward region for a module: %s" % e)

    def post(self, module, inputs, output):
        _close(self.fwd)
        if self.bwd and torch.is_grad_enabled():
            try:
                self._backward_begins(output)
            except (RuntimeError, AttributeError, TypeError) as e:
                _prof._report_once("prof.torch: no backward region for a module: %s" % e)
        return None

    def _backward_begins(self, output):
        outs = _tensors(output)
        for t in outs:
            ends, begins = _slot(t)
            if self.bwd in ends:  # an input passed through: no backward of its own
                ends.remove(self.bwd)
            elif self.bwd not in begins:
                begins.append(self.bwd)
        if outs and not self.inputs_need_grad and self.params:
            if self.pending is not None:  # its backward never ran: drop its hooks
                self.pending.cancel()
            self.pending = _ParamEnd(self, self.params)


_instrumented = weakref.WeakKeyDictionary()  # module or optimizer -> hook handles
_give_way = None  # set by auto() with modules=N: drops its hooks of a model instrument() takes


def _forward_hook(module, hook):
    try:  # torch >= 2.1 calls it also when forward raises
        return module.register_forward_hook(hook, always_call=True)
    except TypeError:
        return module.register_forward_hook(hook)


def _hook_module(path, module, backward):
    """Records module's forward (and backward) as path + "forward" (and
    path + "backward"); returns what _unhook takes to undo it."""
    hooks = _Hooks(path, module, backward)
    handles = [module.register_forward_pre_hook(hooks.pre)]
    try:
        handles.append(_forward_hook(module, hooks.post))
    except Exception:
        handles[0].remove()
        raise
    handles.append(hooks)
    return handles


def _unhook(handles):
    for h in handles:
        if isinstance(h, _Hooks):
            if h.pending is not None:
                h.pending.cancel()
        else:
            h.remove()


def instrument(obj, name=None, depth=None, backward=True):
    """Records regions for a model or an optimizer; returns obj.

    A torch.nn.Module: every submodule's forward and backward, named by
    its path ("encoder.layers.3.attn.forward", "...backward"; the model
    itself "forward" and "backward", or NAME.forward with name=), nested
    as the modules nest, each name with its module's class
    (prof.name_class: "torch.nn.Linear", so that the analysis advises by
    what a module is). depth=N stops N levels below the model (0: the
    model alone); backward=False records forwards only. Each instrumented
    module costs a few microseconds a step, most of it PyTorch's own hook
    dispatch: limit depth on models of thousands of small modules.
    An optimizer: each step as "optimizer.step" (or NAME.step), with the
    optimizer's class ("torch.optim.Adam").
    Instrumenting twice does nothing; uninstrument(obj) undoes it.
    """
    if obj in _instrumented:
        return obj
    if isinstance(obj, torch.optim.Optimizer):
        _instrument_optimizer(obj, name or "optimizer")
        return obj
    if not isinstance(obj, torch.nn.Module):
        raise TypeError("prof.torch.instrument: a torch.nn.Module or torch.optim.Optimizer, "
                        "not %s" % type(obj).__name__)
    if _give_way is not None:  # auto()'s modules=N hooks of its submodules
        _give_way(obj)
    handles = []
    for path, module in obj.named_modules():
        if depth is not None and path and path.count(".") >= depth:
            continue
        if name:
            path = name + "." + path if path else name
        handles.extend(_hook_module(path + "." if path else "", module, backward))
    _instrumented[obj] = handles
    return obj


def _instrument_optimizer(opt, name):
    rid = _intern(name + ".step")
    _prof.name_class(name + ".step", _prof.class_name(opt))
    original = opt.step  # the bound method, with whatever wraps it already

    @functools.wraps(original)
    def recorded_step(*args, **kwargs):
        _begin_id(rid, _prof.COMPUTE)
        try:
            return original(*args, **kwargs)
        finally:
            _end()
    opt.step = recorded_step
    _instrumented[opt] = [("step", original)]


def uninstrument(obj):
    """Removes what instrument(obj) added."""
    handles = _instrumented.pop(obj, None)
    if handles is None:
        return obj
    if isinstance(obj, torch.optim.Optimizer):
        if "step" in vars(obj):
            del obj.step
        return obj
    _unhook(handles)
    return obj


# ---- steps and memory -----------------------------------------------------------------

def _cuda_in_use():
    return torch.cuda.is_available() and torch.cuda.is_initialized()


def sample_memory():
    """Samples device memory ("gpu.allocated", "gpu.reserved" of the current
    device) when CUDA is in use. Host RSS is sampled by every step."""
    if _cuda_in_use():
        try:
            _prof.memory("gpu.allocated", torch.cuda.memory_allocated())
            _prof.memory("gpu.reserved", torch.cuda.memory_reserved())
        except RuntimeError as e:
            _prof._report_once("prof: cannot read CUDA memory: %s" % e)


def step():
    """Ends the training step, like prof.step(), with device memory sampled
    first; closes regions that hooks left open on this thread."""
    if _local.open.ids:
        _close_all()
    sample_memory()
    _prof.step()


# ---- calls that make the CPU wait for the device ----------------------------------
#
# Only a read of a value that an asynchronous device is still computing
# makes the CPU wait. CPU tensors are computed by the time they are read,
# and meta tensors hold no data (reading one raises): neither waits. Every
# other device (cuda, xpu, mps, xla, ...) runs asynchronously to the host,
# so a read of its tensors is a sync. The check costs two attribute reads
# (about 40 ns; tensor.device.type would cost 270 ns, more than .item()).

def tensor_waits(tensor):
    """Whether reading tensor on the host (.item(), .tolist(), .cpu(),
    .numpy()) waits for a device: true unless it is a CPU or meta tensor."""
    return not (tensor.is_cpu or tensor.is_meta)


def cuda_waits():
    """Whether torch.cuda.synchronize (or a Stream's or Event's) can wait
    for anything: only once CUDA is initialized, as work is queued then."""
    return torch.cuda.is_initialized()


def _sync_targets():
    """(owner, attribute, region name, wrapper) of every call that can wait."""
    targets = [(torch.Tensor, m, "Tensor." + m, _tensor_sync)
               for m in ("item", "tolist", "cpu", "numpy")]
    targets.append((torch.cuda, "synchronize", "cuda.synchronize", _cuda_sync))
    for cls in ("Stream", "Event"):
        owner = getattr(torch.cuda, cls, None)
        if isinstance(owner, type) and hasattr(owner, "synchronize"):
            targets.append((owner, "synchronize", "cuda.%s.synchronize" % cls, _cuda_sync))
    return targets


def _tensor_sync(original, rid):
    @functools.wraps(original)
    def recorded(self, *args, **kwargs):
        if self.is_cpu or self.is_meta:  # not tensor_waits(self), inlined: -60 ns a call
            return original(self, *args, **kwargs)
        _begin_id(rid, _prof.SYNC)
        try:
            return original(self, *args, **kwargs)
        finally:
            _end()
    return recorded


def _cuda_sync(original, rid):
    @functools.wraps(original)
    def recorded(*args, **kwargs):
        if not cuda_waits():
            return original(*args, **kwargs)
        _begin_id(rid, _prof.SYNC)
        try:
            return original(*args, **kwargs)
        finally:
            _end()
    return recorded


class track_syncs:
    """Records the calls that wait for the device (Tensor.item, .tolist,
    .cpu, .numpy, torch.cuda.synchronize, Stream/Event.synchronize) as SYNC
    regions named "Tensor.item" and so on, so that the sync rule has its data
    without CUDA tracing. Only calls that can wait are recorded: those on
    tensors of an asynchronous device (tensor_waits: not CPU, not meta), and
    the synchronize calls once CUDA is initialized (cuda_waits). A CPU-only
    run therefore records no SYNC region at all.

    Call it once (prof.torch.track_syncs()) or use it as a context manager;
    untrack_syncs() or leaving the block puts the original functions back.
    """
    _saved = None   # [(owner, attribute, had_own, original)] while tracking
    _depth = 0

    def __init__(self):
        cls = track_syncs
        cls._depth += 1
        if cls._saved is not None:
            return
        saved = []
        for owner, attr, name, wrap in _sync_targets():
            original = getattr(owner, attr)
            saved.append((owner, attr, attr in vars(owner), original))
            setattr(owner, attr, wrap(original, _intern(name)))
        cls._saved = saved

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        untrack_syncs()
        return False

    @staticmethod
    def restore():
        untrack_syncs()


def untrack_syncs():
    """Puts back the functions track_syncs() replaced (after as many calls
    as track_syncs had)."""
    cls = track_syncs
    if cls._depth == 0:
        return
    cls._depth -= 1
    if cls._depth > 0 or cls._saved is None:
        return
    for owner, attr, had_own, original in reversed(cls._saved):
        if had_own:
            setattr(owner, attr, original)
        else:
            delattr(owner, attr)
    cls._saved = None
