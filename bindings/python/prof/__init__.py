"""prof - record a profile of a Python training loop with libprof.

    import prof
    prof.start("run.prof")
    for batch in loader:
        with prof.region("forward"):
            loss = model(batch)
        prof.step()
    prof.stop()                       # also done at interpreter exit

The calls go to libprof, loaded from next to this package, from
$PROF_LIBRARY, or from the system's library path; a copy already in the
process (preloaded by `prof record`) is always the one used. Where the small
C extension prof._native was built, the hot calls (regions, steps, samples)
go through it; otherwise through ctypes, which works on any Python 3.9+.

Recording never raises into the training loop: what cannot be recorded is
logged once (logger "prof") and the program goes on. With PROF_OUTPUT set,
importing prof starts recording, as `prof record -- python train.py` expects.
See prof.torch for PyTorch models, optimizers and device syncs.
"""

import atexit
import ctypes
import ctypes.util
import errno
import functools
import logging
import os
import sys
import threading

__all__ = [
    "COMPUTE", "DATA", "SYNC", "COMM", "IO", "LibraryNotFound", "Profiler",
    "start", "stop", "flush", "recording", "region", "begin", "end", "step",
    "memory", "counter", "mark", "thread_name", "data", "intern", "library_path",
    "name_class", "class_name",
]

# Region kinds, as include/prof.h (stored in profiles: frozen)
COMPUTE, DATA, SYNC, COMM, IO = 0, 1, 2, 3, 4
_KIND_NAMES = ("compute", "data", "sync", "comm", "io")

_log = logging.getLogger("prof")
_reported = set()
_lock = threading.Lock()


def _report_once(message, key=None):
    """Logs a problem the first time it happens (the first time of key,
    when given); recording never raises."""
    key = message if key is None else key
    if key not in _reported:
        _reported.add(key)
        _log.warning("%s", message)


class LibraryNotFound(OSError):
    """libprof could not be loaded from any of the places prof looks."""


# ---- loading libprof --------------------------------------------------------------

def _candidates():
    env = os.environ.get("PROF_LIBRARY")
    if env:  # an explicit choice: no silent fallback to another copy
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.join(here, n) for n in ("libprof.so", "libprof.so.0")]
    paths = [p for p in paths if os.path.exists(p)]
    found = ctypes.util.find_library("prof")
    return paths + ([found] if found else []) + ["libprof.so.0", "libprof.so"]


def _load():
    """The libprof to use and where it came from; LibraryNotFound if none."""
    try:  # preloaded (prof record) or linked in: a second copy would be a second recorder
        process = ctypes.CDLL(None)
        if hasattr(process, "prof_start") and hasattr(process, "prof_region_begin_id"):
            return process, "(already loaded in the process)"
    except OSError:
        pass
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append(str(e))
    raise LibraryNotFound(
        "prof: cannot load libprof (%s); build it with `make` and set PROF_LIBRARY to the "
        "path of libprof.so, or install it" % "; ".join(tried))


class _Config(ctypes.Structure):
    _fields_ = [  # struct prof_config of include/prof.h
        ("output", ctypes.c_char_p), ("sample_rate", ctypes.c_double),
        ("wait", ctypes.c_uint), ("warmup", ctypes.c_uint), ("active", ctypes.c_uint),
        ("repeat", ctypes.c_uint), ("memory_interval_ms", ctypes.c_uint),
        ("buffer_bytes", ctypes.c_size_t), ("flush_interval_ms", ctypes.c_uint),
        ("cuda", ctypes.c_int),
    ]


def _declare(lib):
    sig = {
        "prof_start": (ctypes.c_int, [ctypes.POINTER(_Config)]),
        "prof_stop": (ctypes.c_int, []),
        "prof_flush": (None, []),
        "prof_region_begin_id": (None, [ctypes.c_uint32, ctypes.c_int]),
        "prof_region_end": (None, []),
        "prof_step": (None, []),
        "prof_memory": (None, [ctypes.c_char_p, ctypes.c_uint64]),
        "prof_counter": (None, [ctypes.c_char_p, ctypes.c_double]),
        "prof_mark": (None, [ctypes.c_char_p]),
        "prof_thread_name": (None, [ctypes.c_char_p]),
        "prof_intern": (ctypes.c_uint32, [ctypes.c_char_p]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    # Newer than the rest: a preloaded older libprof lacks it, and then
    # classes are not recorded, while everything else still is.
    f = getattr(lib, "prof_name_class", None)
    if f is not None:
        f.restype, f.argtypes = None, [ctypes.c_char_p, ctypes.c_char_p]


try:
    _lib, _lib_path = _load()
    _declare(_lib)
    _load_error = None
except (LibraryNotFound, AttributeError) as e:
    _lib, _lib_path, _load_error = None, None, e

try:
    from . import _native
except ImportError:
    _native = None


def library_path():
    """Where libprof was loaded from; raises LibraryNotFound (with every path
    tried) when it could not be loaded."""
    if _lib is None:
        raise LibraryNotFound(str(_load_error))
    return _lib_path


# ---- the hot calls: C extension, else ctypes, else nothing ------------------------

def _address(f):
    return ctypes.cast(f, ctypes.c_void_p).value


if _lib is not None and _native is not None:
    _native.bind(*[_address(getattr(_lib, n)) for n in (
        "prof_region_begin_id", "prof_region_end", "prof_step", "prof_memory",
        "prof_counter", "prof_mark", "prof_intern")])
    intern = _native.intern
    _begin_id = _native.begin
    end = _native.end
    step = _native.step
    memory = _native.memory
    counter = _native.counter
    mark = _native.mark
    _RegionBase = _native.Region
else:
    _ids = {}

    def intern(name):
        """The id of a region name (interned once, then a dict lookup)."""
        i = _ids.get(name)
        if i is None:
            if not isinstance(name, str):
                raise TypeError("prof: a region name must be a str, not %s" % type(name).__name__)
            i = _lib.prof_intern(name.encode()) if _lib is not None else 0
            if i:
                _ids[name] = i
        return i

    if _lib is not None:
        _begin_id = _lib.prof_region_begin_id
        end = _lib.prof_region_end
        step = _lib.prof_step
    else:
        def _begin_id(rid, kind):
            pass

        def end():
            pass

        def step():
            pass

    def _named(call, what):
        def record(name, *value):
            try:
                if _lib is not None:
                    call(name.encode(), *value)
            except (AttributeError, TypeError, ctypes.ArgumentError, UnicodeError, OverflowError):
                # once a process, whatever the value: the extension's
                # report_once (_native.c) says it once too
                _report_once("prof: %s: cannot record %r %r; dropped (reported once)"
                             % (what, name, value), key="dropped")
        return record

    _memory = _named(_lib.prof_memory if _lib else None, "memory")
    _counter = _named(_lib.prof_counter if _lib else None, "counter")
    mark = _named(_lib.prof_mark if _lib else None, "mark")

    def memory(series, nbytes):
        """A sample of a memory series (e.g. 'gpu.allocated'), in bytes."""
        # as the extension (_native.c): a float is truncated, 0 when it is
        # not a positive number of bytes; an int out of uint64's range is
        # dropped, which ctypes would otherwise wrap
        if isinstance(nbytes, float):
            nbytes = int(nbytes) if 0 < nbytes < 1.8e19 else 0
        elif isinstance(nbytes, int) and not 0 <= nbytes < 1 << 64:
            nbytes = None  # not a c_uint64: dropped, and said once, as any bad value
        _memory(series, nbytes)

    def counter(name, value):
        """A sample of a numeric series (loss, learning rate)."""
        # as the extension: anything float() takes but text (numpy and
        # tensor scalars too); what it refuses is dropped, never raised
        try:
            value = None if isinstance(value, (str, bytes)) else float(value)
        except (TypeError, ValueError, OverflowError):
            value = None
        _counter(name, value)

    class _RegionBase:
        __slots__ = ("name", "id", "kind")

        def __init__(self, name, kind=COMPUTE):
            self.kind = _kind(kind)
            self.name = name
            self.id = intern(name)

        def __enter__(self):
            if not self.id:
                self.id = intern(self.name)
            _begin_id(self.id, self.kind)
            return self

        def __exit__(self, *exc):
            end()
            return False

        def __repr__(self):
            return "prof.region(%r, kind=%r)" % (self.name, _KIND_NAMES[self.kind])


def _kind(kind):
    if kind in _KIND_NAMES:
        return _KIND_NAMES.index(kind)
    if isinstance(kind, int) and 0 <= kind < len(_KIND_NAMES):
        return kind
    raise ValueError("prof: region kind must be 0-4 or compute, data, sync, comm, io, not %r"
                     % (kind,))


class region(_RegionBase):
    """region(name, kind=COMPUTE): a region of the profile.

    `with prof.region("forward"): ...` records the block; `@prof.region("forward")`
    records every call of a function. The region closes when the body raises.
    kind is COMPUTE, DATA, SYNC, COMM or IO (or their lower-case names). A
    region object holds no state while entered: keep one and reuse it in a
    hot loop, nest it, share it between threads.
    """
    __slots__ = ()

    def __call__(self, fn):
        rid, kind = self.id, self.kind
        name = self.name

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            _begin_id(rid or intern(name), kind)
            try:
                return fn(*args, **kwargs)
            finally:
                end()
        return recorded


def begin(name, kind=COMPUTE):
    """Opens a region on the calling thread; end() closes the innermost one.
    Prefer `with prof.region(name)`, which also closes it when the body raises."""
    _begin_id(intern(name), _kind(kind))


def data(iterable, name="data_loading"):
    """Yields the items of iterable, each fetch recorded as a DATA region
    (`for x, y in prof.data(loader):`), which the data-loading rule reads.
    The region's class is the iterable's (a DataLoader's advice differs
    from a generator's); built-in iterables record none."""
    rid = intern(name)
    if type(iterable).__module__ != "builtins":
        name_class(name, class_name(iterable))
    it = iter(iterable)
    try:  # a DataLoader's fetches are recorded here, not by prof.torch.auto() too
        it._prof_data = True
    except AttributeError:
        pass
    while True:
        _begin_id(rid, DATA)
        try:
            item = next(it)
        except StopIteration:
            return
        finally:
            end()
        yield item


# Namespaces whose classes are named by their public path ("torch.nn.Linear",
# not "torch.nn.modules.linear.Linear"), so that the analysis recognises them.
_PUBLIC = ("torch.nn", "torch.optim", "torch.utils.data")


def class_name(obj):
    """The class of obj as prof records it: "torch.nn.Linear" for a class
    exported by torch.nn, torch.optim or torch.utils.data, else
    "module.QualifiedName" (a program's own class)."""
    cls = obj if isinstance(obj, type) else type(obj)
    for ns in _PUBLIC:
        mod = sys.modules.get(ns)
        if mod is not None and getattr(mod, cls.__name__, None) is cls:
            return ns + "." + cls.__name__
    return "%s.%s" % (cls.__module__, cls.__qualname__)


def name_class(name, cls):
    """Says what the regions called name time: the class of their code
    (prof_name_class), e.g. name_class("head.1.forward", "torch.nn.Linear"),
    so that the analysis advises by what an operation is. Kept for the
    process and written into every profile recorded after it; works before
    start() too. Takes a lock: once per name, not per step."""
    f = getattr(_lib, "prof_name_class", None) if _lib is not None else None
    if f is None:
        return
    try:
        f(str(name).encode(), str(cls).encode())
    except (ctypes.ArgumentError, UnicodeError):
        _report_once("prof: name_class: cannot record %r" % (name,))


def thread_name(name):
    """Names the calling thread in the profile."""
    if _lib is not None:
        try:
            _lib.prof_thread_name(str(name).encode())
        except (ctypes.ArgumentError, UnicodeError):
            _report_once("prof: thread_name: cannot record %r" % (name,))


def flush():
    """Writes everything recorded so far to the file (a few system calls)."""
    if _lib is not None:
        _lib.prof_flush()


# ---- starting and stopping ----------------------------------------------------------

_state = {"recording": False, "output": None}


def recording():
    """Whether this process is recording (in a forked child: False)."""
    return _state["recording"]


def _schedule(schedule):
    if isinstance(schedule, str):
        schedule = schedule.split(":")
    if isinstance(schedule, dict):
        schedule = [schedule.get(k, 0) for k in ("wait", "warmup", "active", "repeat")]
    parts = [int(v) for v in schedule]
    if len(parts) != 4 or min(parts) < 0:
        raise ValueError("schedule is wait:warmup:active:repeat, four whole numbers >= 0")
    return parts


def _config(output, sample_rate, schedule, memory_interval_ms, buffer_mb, flush_interval_ms,
            cuda):
    c = _Config()
    if output is not None:
        c.output = os.fsencode(output)
    if sample_rate is not None:
        c.sample_rate = float(sample_rate)
        if not 0 < c.sample_rate <= 1:
            raise ValueError("sample_rate must be in (0, 1], not %r" % (sample_rate,))
    if schedule is not None:
        c.wait, c.warmup, c.active, c.repeat = _schedule(schedule)
    c.memory_interval_ms = int(memory_interval_ms or 0)
    c.buffer_bytes = int((buffer_mb or 0) * (1 << 20))
    c.flush_interval_ms = int(flush_interval_ms or 0)
    c.cuda = 1 if cuda else 0
    return c


def start(output=None, sample_rate=None, schedule=None, memory_interval_ms=None,
          buffer_mb=None, flush_interval_ms=None, cuda=None, tags=None):
    """Starts recording into output ($PROF_OUTPUT, else run.prof).

    sample_rate: fraction of steps whose regions are kept (steps and memory
    samples are always kept). schedule: (wait, warmup, active, repeat) or
    "w:wu:a:r", as torch.profiler.schedule. memory_interval_ms: background
    host-memory sampling period. buffer_mb: cap on buffered events (past it
    events are dropped and counted). flush_interval_ms: how much a crash can
    lose. cuda: capture CUDA activity through CUPTI where libprof has it.
    tags: a dict stored in the profile. Settings left None come from the
    environment (PROF_*), then the defaults.

    Returns True when recording; False, with the reason logged once, when
    it cannot (libprof missing, an unwritable output, PROF_ENABLE=0).
    Recording is process-wide: starting while already recording keeps the
    recording that runs (for instance the one `prof record` started).
    """
    if _lib is None:
        _report_once(str(_load_error))
        return False
    try:
        cfg = _config(output, sample_rate, schedule, memory_interval_ms, buffer_mb,
                      flush_interval_ms, cuda)
    except (TypeError, ValueError, OverflowError) as e:
        _report_once("prof: start: %s" % e)
        return False
    with _lock:
        saved = os.environ.get("PROF_TAGS")
        if tags:
            os.environ["PROF_TAGS"] = ",".join("%s=%s" % kv for kv in dict(tags).items())
        try:
            rc = _lib.prof_start(ctypes.byref(cfg))
        finally:
            if tags:
                if saved is None:
                    del os.environ["PROF_TAGS"]
                else:
                    os.environ["PROF_TAGS"] = saved
        target = output or os.environ.get("PROF_OUTPUT") or "run.prof"
        if rc == 0:
            _state.update(recording=True, output=target)
            return True
        if rc == -errno.EALREADY:  # preloaded by `prof record`, or started before
            _state["recording"] = True
            _state["output"] = _state["output"] or os.environ.get("PROF_OUTPUT")
            if output is not None and _state["output"] not in (None, output):
                _report_once("prof: start: already recording into '%s'; that recording goes on"
                             % _state["output"])
            return True
        if rc != -errno.ECANCELED:  # PROF_ENABLE=0 asked for silence
            _report_once("prof: start: cannot record into '%s': %s" % (target, os.strerror(-rc)))
        return False


def stop():
    """Ends the last step, writes the footer and closes the file.
    Idempotent. Returns True, or False (logged) when a write failed."""
    if _lib is None:
        return False
    with _lock:
        was = _state["recording"]
        _state["recording"] = False
        rc = _lib.prof_stop()
    if rc < 0 and was:
        _report_once("prof: stop: writing '%s' failed: %s" % (_state["output"], os.strerror(-rc)))
    return rc == 0


class Profiler:
    """The same calls on an object, for those who prefer one:

        with prof.Profiler("run.prof", sample_rate=0.5) as p:
            for batch in loader:
                with p.region("forward"):
                    ...
                p.step()

    There is one recorder per process: two Profilers do not record at once.
    """

    def __init__(self, output=None, **options):
        self.output = output
        self.options = options

    def start(self):
        return start(self.output, **self.options)

    def stop(self):
        return stop()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    region = staticmethod(region)
    begin = staticmethod(begin)
    end = staticmethod(end)
    step = staticmethod(step)
    memory = staticmethod(memory)
    counter = staticmethod(counter)
    mark = staticmethod(mark)
    data = staticmethod(data)
    flush = staticmethod(flush)
    thread_name = staticmethod(thread_name)
    recording = staticmethod(recording)


# ---- process life: exit, fork, autostart ------------------------------------------

def _at_exit():
    if _state["recording"]:
        stop()


def _after_fork_in_child():
    # libprof drops its recording in a forked child (DataLoader workers):
    # the child never writes into the parent's file.
    _state["recording"] = False


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _autostart():
    """With PROF_OUTPUT set, start as a preloaded libprof would. Like it,
    leave alone the processes this one starts (PROF_AUTOSTART_PID names the
    recorded one): they would truncate its file."""
    if not os.environ.get("PROF_OUTPUT") or _lib is None:
        return
    owner = os.environ.get("PROF_AUTOSTART_PID")
    if owner and owner != str(os.getpid()):
        return
    if start():
        os.environ["PROF_AUTOSTART_PID"] = str(os.getpid())


_autostart()
