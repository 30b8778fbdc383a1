"""prof._torch_auto - prof.torch.auto(): every model, optimizer and data
loader of a program profiled without a change to it (prof.torch
documents it), built on prof._torch_base.
"""
import atexit
import functools
import threading
import weakref

import torch

import prof as _prof
from prof import _torch_base as _base
from prof._torch_base import (_Hooks, _begin_id, _close_all, _end, _hook_module, _instrumented,
                              _intern, _last_gradients, _local, _unhook, instrument,
                              sample_memory, step, track_syncs, untrack_syncs)

# ---- auto(): every model, optimizer and data loader of the program ------------------
#
# The hooks are global: on classes (every optimizer class's step, the
# DataLoader iterator's __next__, GradScaler.step) and torch's global module
# hooks, so that a program that never names prof is profiled as it is.
# Debian's torch (1.13) has no global optimizer hooks, so the step of every
# Optimizer subclass is wrapped on the class: the classes that exist when
# auto() runs, and those defined later (Optimizer.__init_subclass__).

HOOKS = ("steps", "modules", "data", "syncs", "memory")
_DEPTH = "modules="  # modules=N: N levels of submodules below each top-level module


def _parse_hooks(hooks):
    """The hooks that auto() installs and the depth of modules=N (0
    without it): (frozenset of HOOKS' names, depth). hooks: None, "" or
    "all" for every one; else a comma-separated str or an iterable of
    HOOKS' names and "modules=N" (the deepest N given counts)."""
    if hooks is None or hooks == "" or hooks == "all":
        return frozenset(HOOKS), 0
    if isinstance(hooks, str):
        hooks = hooks.split(",")
    chosen, depth = set(), 0
    for h in hooks:
        h = str(h).strip()
        if h == "all":
            chosen.update(HOOKS)
        elif h in HOOKS:
            chosen.add(h)
        elif h.startswith(_DEPTH):
            n = h[len(_DEPTH):]
            chosen.add("modules")
            if n.isascii() and n.isdigit():
                depth = max(depth, int(n))
            else:
                _prof._report_once("prof.torch.auto: bad hook %r: the depth of modules=N is a "
                                   "whole number of levels from 0; top-level modules only" % h)
        elif h and h != "none":
            _prof._report_once("prof.torch.auto: unknown hook %r ignored (known: %s, modules=N, "
                               "all, none)" % (h, ", ".join(HOOKS)))
    return frozenset(chosen), depth


class _Steps:
    """Where a training step ends, learnt from the optimizers' steps.

    lead: the optimizer that stepped first in the run; closer: the last
    other optimizer that stepped before the lead stepped again (the lead
    itself when it steps alone). A step is due after the closer's step and
    ends at the next thing the loop does (a DataLoader fetch, a top-level
    forward, an optimizer step), so a loss logged after optimizer.step()
    stays in its step. A step never holds two steps of the lead: when the
    closer skips a cycle, the step ends before the lead steps again.
    """
    __slots__ = ("lead", "closer", "learned", "other", "pending", "due", "user", "inside",
                 "count", "memory", "native")

    def __init__(self, memory, native):
        self.lead = self.closer = self.other = None   # weak references
        self.learned = False   # the closer is known (after the lead's second step)
        self.pending = False   # the lead stepped, the closer has not since
        self.due = False       # a step ends at the loop's next event
        self.user = False      # the program ends its own steps: leave them to it
        self.inside = 0        # optimizer steps running (a subclass calling super().step())
        self.count = 0         # optimizer steps seen, for GradScaler's skipped ones
        self.memory = memory
        self.native = native   # prof.step as it was before auto() wrapped it


_steps = None           # the _Steps of the running auto(), or None
_auto_handle = None


class _TopLocal(threading.local):
    top = None          # the module whose forward runs at the top level on this thread
    hooks = None        # the _TopHooks that recorded its forward begin, if any


_top = _TopLocal()


def _end_step():
    s = _steps
    s.due = False
    _top.top = None     # a top-level forward that raised never ran its forward hook
    _top.hooks = None
    if _local.open.ids:
        _close_all()
    if s.memory:
        sample_memory()
    s.native()


def _step_if_due():
    s = _steps
    if s is not None and s.due:
        _end_step()


def _alive(ref):
    return ref() if ref is not None else None


def _optimizer_before(opt):
    s = _steps
    if s.user:
        return
    _top.top = None
    if s.due:
        _end_step()
    elif s.pending and _alive(s.lead) is opt:  # the closer skipped a cycle
        s.pending = False
        _end_step()
    if not s.learned and _alive(s.lead) is opt:
        s.learned = True
        if s.other is not None and _alive(s.other) is not None:
            s.closer = s.other


def _optimizer_after(opt):
    s = _steps
    s.count += 1
    if s.user:
        return
    if s.lead is None:
        s.lead = s.closer = weakref.ref(opt)
    lead = _alive(s.lead)
    if opt is not lead and not s.learned:
        s.other = weakref.ref(opt)
    if opt is _alive(s.closer):
        s.pending = False
        s.due = True
    elif opt is lead:
        s.pending = True


def _user_step(native):
    @functools.wraps(native)
    def step():
        s = _steps
        if s is not None:  # the program ends its own steps: auto() no longer does
            s.user = True
            s.due = False
        native()
    return step


def _stop_ends_step(native):
    @functools.wraps(native)
    def stop():
        _step_if_due()  # the last iteration is a whole step
        return native()
    return stop


class _AutoStep:
    """The wrapper of one optimizer class's step."""

    def __init__(self, cls, original, record):
        self.cls = cls
        self.original = original
        self.record = record

    def _id(self):
        # named at the class's first step: a profile names only the
        # optimizers the program uses
        name = self.cls.__name__ + ".step"
        _prof.name_class(name, _prof.class_name(self.cls))
        return _intern(name)

    def wrap(self):
        original, record, named = self.original, self.record, []

        @functools.wraps(original)
        def step(opt, *args, **kwargs):
            s = _steps
            if s is None or s.inside:  # a subclass's step calling super().step(): one step
                return original(opt, *args, **kwargs)
            _optimizer_before(opt)
            region = record and opt not in _instrumented  # instrument(opt) records it already
            s.inside += 1
            if region:
                if not named:
                    named.append(self._id())
                _begin_id(named[0], _prof.COMPUTE)
            try:
                result = original(opt, *args, **kwargs)
            finally:
                if region:
                    _end()
                s.inside -= 1
            _optimizer_after(opt)
            return result
        return step


def _optimizer_classes():
    seen, todo = [], list(torch.optim.Optimizer.__subclasses__())
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.append(cls)
            todo.extend(cls.__subclasses__())
    return seen


class _TopHooks(_Hooks):
    """The forward and backward regions of a module called at the top
    level, named by its class ("Net.forward", "Net.backward"), or by the
    name modules=N gave its tree ("Net#2")."""
    _names = {}  # (class, name) -> (forward id, backward id)

    def __init__(self, module, name=None):
        cls = type(module)
        name = name or cls.__name__
        ids = self._names.get((cls, name))
        if ids is None:
            kind = _prof.class_name(module)
            for part in ("forward", "backward"):
                _prof.name_class(name + "." + part, kind)
            ids = self._names[cls, name] = (_intern(name + ".forward"),
                                            _intern(name + ".backward"))
        self.fwd, self.bwd = ids
        self.params = _last_gradients(module)
        self.inputs_need_grad = False
        self.pending = None


_top_hooks = weakref.WeakKeyDictionary()  # module -> _TopHooks


class _Deep:
    """auto()'s modules=N: the submodules recorded below each top-level
    module, down to N levels under it, with instrument()'s hooks (forward
    and backward regions, each name with its module's class). They are
    named after the top-level module's own rows: "Net.forward" holds
    "Net.encoder.forward", which holds "Net.encoder.0.forward". Two
    top-level modules of one class and the same submodules (a model and
    its copy, a loss made anew each step) share their rows, as they do
    without modules=N; one whose submodules differ (a GAN's generator and
    discriminator, both nn.Sequential) gets rows of its own, "Net#2",
    so that no name stands for two layers of different classes.

    A top-level module's tree is hooked at its first top-level call, in
    the global forward pre-hook, before its forward runs, so that its
    first call is recorded whole. That is safe while PyTorch is calling
    hooks: only the submodules' own hook dicts change, and none of them
    is being iterated, since no submodule has been called yet; the
    global dicts and the top-level module's own, which Module._call_impl
    is going through (1.13 and later copy them into a tuple first, older
    versions iterated them live), are left alone.
    """
    __slots__ = ("depth", "roots", "hooked", "names")

    def __init__(self, depth):
        self.depth = depth
        self.roots = weakref.WeakKeyDictionary()   # top-level module -> True: tree hooked
        self.hooked = weakref.WeakKeyDictionary()  # submodule -> _hook_module's handles
        self.names = {}  # (class, its tree's paths and classes) -> the rows' name

    def _tree(self, root):
        """root's submodules down to depth, each once: [(path, module)]."""
        seen, found = {id(root)}, []
        todo = [(n, m, 1) for n, m in reversed(list(root.named_children()))]
        while todo:
            path, module, level = todo.pop()
            if id(module) in seen:  # a module shared in the tree: one path
                continue
            seen.add(id(module))
            found.append((path, module))
            if level < self.depth:
                todo.extend((path + "." + n, m, level + 1)
                            for n, m in reversed(list(module.named_children())))
        return found

    def install(self, root):
        """Hooks root's submodules; the name of root's rows."""
        self.roots[root] = True
        cls = type(root)
        try:
            tree = self._tree(root)
            shape = (cls, tuple((path, type(m)) for path, m in tree))
            name = self.names.get(shape)
            if name is None:
                taken = sum(1 for c, _ in self.names if c.__name__ == cls.__name__)
                name = cls.__name__ + ("#%d" % (taken + 1) if taken else "")
                self.names[shape] = name
            skip = None
            for path, module in tree:  # depth first: a module's subtree follows it
                # one given to instrument() is recorded by it, with its
                # submodules; one hooked already, under another top-level
                # module, keeps that name
                if skip is not None and path.startswith(skip):
                    continue
                if module in _instrumented:
                    skip = path + "."
                elif module not in self.hooked:
                    self._hook(name + "." + path + ".", module)
            return name
        except Exception as e:  # never into the program's forward
            _prof._report_once("prof.torch.auto: cannot record the submodules of %s: %s"
                               % (cls.__name__, e))
            return None

    def _hook(self, path, module):
        try:
            self.hooked[module] = _hook_module(path, module, True)
        except Exception as e:  # a module that takes no hook (a scripted one): its rows only
            _prof._report_once("prof.torch.auto: cannot record %sforward: %s" % (path, e),
                               key="prof.torch.auto: submodule hooks")

    def drop(self, module):
        """Unhooks module and its submodules (instrument() records them)."""
        for m in module.modules():
            handles = self.hooked.pop(m, None)
            if handles is not None:
                _unhook(handles)

    def remove(self):
        for handles in list(self.hooked.values()):
            _unhook(handles)
        for root in list(self.roots.keys()):  # their rows' names were modules=N's
            _top_hooks.pop(root, None)
        self.hooked.clear()
        self.roots.clear()


_deep = None            # the _Deep of the running auto() with modules=N, N > 0, or None


def _auto_pre(module, inputs):
    if _top.top is not None:  # a submodule: the cheap path, taken most often
        return None
    _top.top = module
    _top.hooks = None
    if _steps is not None and _steps.due:
        _end_step()
        _top.top = module
    if module in _instrumented:  # instrument(model) records it, with its submodules
        return None
    hooks = _top_hooks.get(module)
    deep = _deep
    if deep is not None:
        if module in deep.hooked:  # a submodule of another top-level module: hooked as one
            return None
        if module not in deep.roots:  # before the forward region: not counted in it
            hooks = _top_hooks[module] = _TopHooks(module, deep.install(module))
    if hooks is None:
        hooks = _top_hooks[module] = _TopHooks(module)
    _top.hooks = hooks
    hooks.pre(module, inputs)
    return None


def _auto_post(module, inputs, output):
    if _top.top is not module:
        return None
    _top.top = None
    hooks = _top.hooks
    if hooks is not None:
        _top.hooks = None
        hooks.post(module, inputs, output)
    return None


def _data_next(original, rid):
    @functools.wraps(original)
    def __next__(self):
        _step_if_due()
        if getattr(self, "_prof_data", False):  # inside prof.data(): recorded there
            return original(self)
        _begin_id(rid, _prof.DATA)
        try:
            return original(self)
        finally:
            _end()
    return __next__


def _scaler_step(original):
    @functools.wraps(original)
    def step(scaler, optimizer, *args, **kwargs):
        s = _steps
        before = s.count if s is not None else 0
        result = original(scaler, optimizer, *args, **kwargs)
        if s is not None and s is _steps and s.count == before and not s.inside:
            # inf/nan gradients: the scaler skipped optimizer.step(), the
            # iteration still happened
            _prof.mark("GradScaler.skipped_step")
            _optimizer_before(optimizer)
            _optimizer_after(optimizer)
        return result
    return step


def _scaler_classes():
    found = []
    for path in (("cuda", "amp"), ("amp",)):
        owner = torch
        for part in path:
            owner = getattr(owner, part, None)
        cls = getattr(owner, "GradScaler", None)
        if isinstance(cls, type) and "step" in vars(cls) and cls not in found:
            found.append(cls)
    return found


class _Auto:
    """What auto() installed; remove() undoes it."""

    def __init__(self, hooks, depth=0):
        self.hooks = hooks
        self.depth = depth if "modules" in hooks else 0  # modules=N's N
        self._undo = []   # callables, run last first

    def _set(self, owner, attr, value):
        had = attr in vars(owner)
        old = vars(owner).get(attr)
        setattr(owner, attr, value)

        def undo():
            if had:
                setattr(owner, attr, old)
            elif attr in vars(owner):
                delattr(owner, attr)
        self._undo.append(undo)

    def install(self):
        global _deep
        h = self.hooks
        if "steps" in h:
            self._install_steps()
        if "modules" in h:
            from torch.nn.modules import module as mm
            if self.depth > 0:
                _deep = _Deep(self.depth)
                _base._give_way = _deep.drop
                self._undo.append(self._forget_deep)
            self._undo.append(mm.register_module_forward_pre_hook(_auto_pre).remove)
            self._undo.append(mm.register_module_forward_hook(_auto_post).remove)
        if "data" in h:
            from torch.utils.data import dataloader
            base = dataloader._BaseDataLoaderIter
            _prof.name_class("data_loading", "torch.utils.data.DataLoader")
            self._set(base, "__next__", _data_next(base.__next__, _intern("data_loading")))
        if "syncs" in h:
            track_syncs()
            self._undo.append(untrack_syncs)

    def _install_steps(self):
        global _steps
        native = _prof.step
        _steps = _Steps("memory" in self.hooks, native)
        self._undo.append(self._forget_steps)
        self._set(_prof, "step", _user_step(native))
        self._set(_prof.Profiler, "step", staticmethod(_user_step(native)))
        self._set(_prof, "stop", _stop_ends_step(_prof.stop))  # prof.stop(), and at exit
        wrapped = {}

        def wrap(cls):
            own = vars(cls).get("step")
            if own is None or cls in wrapped:
                return
            wrapped[cls] = True
            self._set(cls, "step", _AutoStep(cls, own, True).wrap())
        for cls in _optimizer_classes():
            wrap(cls)
        base = torch.optim.Optimizer
        inherited = vars(base).get("__init_subclass__")

        def __init_subclass__(cls, **kwargs):
            if inherited is not None:
                inherited.__get__(None, cls)(**kwargs)
            else:
                super(base, cls).__init_subclass__(**kwargs)
            try:
                wrap(cls)
            except Exception as e:  # never into the program's class statement
                _prof._report_once("prof.torch.auto: cannot hook %s.step: %s" % (cls.__name__, e))
        self._set(base, "__init_subclass__", classmethod(__init_subclass__))
        for cls in _scaler_classes():
            self._set(cls, "step", _scaler_step(vars(cls)["step"]))

    @staticmethod
    def _forget_deep():
        global _deep
        if _deep is not None:
            _deep.remove()
        _deep = None
        _base._give_way = None

    @staticmethod
    def _forget_steps():
        global _steps
        if _steps is not None and _steps.due and not _steps.user:
            _end_step()  # the last iteration is a whole step
        _steps = None

    def remove(self):
        """Undoes what auto() installed (the last step due is ended first)."""
        global _auto_handle
        while self._undo:
            self._undo.pop()()
        _top.top = None
        _top.hooks = None
        if _auto_handle is self:
            _auto_handle = None

    def __repr__(self):
        return "prof.torch.auto(hooks=%r)" % ",".join(
            "modules=%d" % self.depth if x == "modules" and self.depth else x
            for x in HOOKS if x in self.hooks)


def _auto_at_exit():
    if _steps is not None and _steps.due and not _steps.user:
        _end_step()


def auto(hooks=None):
    """Profiles every model, optimizer and data loader of the program with
    no change to its code, as `prof record -- python3 train.py` does at
    the import of torch. Returns a handle whose remove() undoes it; while
    one is installed, auto() returns it again and installs nothing.

    hooks: "all" (None) or a comma list (or iterable) of
      steps    each optimizer step ends a training step (below) and is a
               region "CLASS.step" ("Adam.step"); device memory is
               sampled at each step boundary (host RSS always is)
      modules  forward and backward of each module called at the top
               level (while no other module's forward runs), named by
               its class: "Net.forward", "Net.backward",
               "CrossEntropyLoss.forward"; submodules are not recorded
      modules=N  the same, and the submodules down to N levels below
               each top-level module (modules=0 is modules), as
               instrument(model, depth=N) records them, named after
               their top-level module: "Net.encoder.forward" inside
               "Net.forward", "Net.encoder.0.backward", each with its
               class; hooked at the module's first call. Each recorded
               submodule costs a few microseconds a step
      data     each DataLoader fetch as a DATA region "data_loading"
      syncs    track_syncs(): reads that wait for an asynchronous device
      memory   device memory at step boundaries (without it, host RSS only)

    Steps. Every Optimizer subclass's step is hooked (no instance is
    patched). The optimizer that steps first in the run is the lead; the
    last other optimizer that steps before the lead steps again (the lead
    itself when it steps alone) closes the iteration, so several
    optimizers stepping once per iteration (a GAN's) give one step per
    iteration, aligned from the second iteration on. A step is ended at
    the loop's next event after that step (a DataLoader fetch, a
    top-level forward, an optimizer step, exit), so work done after
    optimizer.step() (logging a loss) counts in its iteration. A step
    never spans two steps of the lead. Gradient accumulation: optimizer
    .step() runs once per accumulation cycle, and so a training step is a
    cycle of micro-batches. GradScaler: scaler.step(opt) that skips
    opt.step() for inf/nan gradients still ends the iteration (and marks
    "GradScaler.skipped_step"). A program that ends steps itself
    (prof.step(), prof.torch.step()) keeps them: auto() stops ending its
    own at the first such call.

    Explicit instrumentation wins: a model or optimizer passed to
    instrument() is recorded by it alone (its steps still count; the
    hooks modules=N gave it and its submodules are removed). A
    top-level forward that raises is recovered at the next optimizer step.
    """
    global _auto_handle
    if _auto_handle is not None:
        return _auto_handle
    handle = _Auto(*_parse_hooks(hooks))
    _auto_handle = handle
    try:
        handle.install()
    except Exception:
        handle.remove()
        raise
    return handle


# After prof's own atexit handler, so run before it: the last step is ended
# before prof.stop() closes the file.
atexit.register(_auto_at_exit)
