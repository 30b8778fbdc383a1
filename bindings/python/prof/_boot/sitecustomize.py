"""sitecustomize for `prof record -- python3 ...`: profiles a PyTorch program
with no change to it.

`prof record` puts this directory, then the one holding the prof package,
in front of PYTHONPATH. At interpreter start this module:
  - runs the program's own sitecustomize, if one is further along sys.path
    (or the system's), as if this one were not there, and takes this
    directory off sys.path;
  - gives Ctrl-C back to Python: the preloaded libprof set its SIGINT
    handler before the interpreter started, and Python installs its own
    (KeyboardInterrupt, so that finally blocks run) only over the default;
  - with PROF_PYTHON=0, does nothing more;
  - else waits for torch to be imported (an import hook: a program that
    never imports torch never pays for it, nor for prof), and then, in the
    program's main process only (not in DataLoader workers started by
    spawn), runs prof.torch.auto(hooks=$PROF_PYTHON_HOOKS); in a rank of
    torchrun (RANK or LOCAL_RANK set), starts that rank's recording into
    $PROF_OUTPUT first (with its rank put before the extension,
    run.prof -> run.rank1.prof, when the name has neither %r nor %p); in
    the torchrun launcher itself, which trains nothing, it stops the
    recording `prof record` started and removes its file, leaving the
    ranks' profiles alone.
A program with a module of its own named prof (prof.py or a package, on
its path) keeps it: the PyTorch hooks step aside, with a warning, rather
than shadow it.
It never raises: a problem is reported once through the "prof" logger (on
stderr unless the program configures logging) and the program runs
unprofiled.
"""
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_PACKAGE = os.path.dirname(_HERE)  # our prof package
_ENTRY = os.path.dirname(_PACKAGE)  # the PYTHONPATH entry that holds it


def _warn(message):
    """Says message through the "prof" logger, as the binding does."""
    try:
        import logging
        logging.getLogger("prof").warning("prof: python: %s", message)
    except Exception:
        try:
            sys.stderr.write("prof: python: %s\n" % message)
        except Exception:
            pass


def _chain():
    """Imports the sitecustomize that this one hides, under its own name."""
    ours = sys.modules.pop("sitecustomize", None)
    sys.path[:] = [p for p in sys.path
                   if os.path.abspath(p or os.curdir) != _HERE]
    try:
        import importlib
        importlib.invalidate_caches()
        importlib.import_module("sitecustomize")
    except ImportError as e:
        if e.name != "sitecustomize":
            _warn("error in the program's sitecustomize: %s" % e)
        if sys.modules.get("sitecustomize") is None and ours is not None:
            sys.modules.pop("sitecustomize", None)
    except Exception as e:  # as site.py would: say so and go on
        _warn("error in the program's sitecustomize: %s: %s" % (type(e).__name__, e))


def _child_process():
    """Whether this interpreter is a multiprocessing child (a DataLoader
    worker started by spawn or forkserver): not the program's main process."""
    if "--multiprocessing-fork" in sys.argv:
        return True
    mp = sys.modules.get("multiprocessing.process")
    if mp is None:
        return False
    current = mp.current_process()
    return (getattr(current, "_inheriting", False) or current.name != "MainProcess" or
            (hasattr(mp, "parent_process") and mp.parent_process() is not None))


def _launcher():
    """Whether this is torchrun's launcher (it starts the ranks, trains nothing)."""
    if os.environ.get("RANK") is not None or os.environ.get("LOCAL_RANK") is not None:
        return False
    argv = list(getattr(sys, "orig_argv", None) or sys.argv)
    if argv and os.path.basename(argv[0]) == "torchrun":
        return True
    for i, a in enumerate(argv[:-1]):
        if a == "-m" and argv[i + 1] in ("torch.distributed.run", "torch.distributed.launch"):
            return True
    return bool(argv) and argv[0].replace(os.sep, "/").endswith(
        ("torch/distributed/run.py", "torch/distributed/launch.py"))


def _expand(pattern, rank):
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "%" and i + 1 < len(pattern) and pattern[i + 1] in "pr%":
            n = pattern[i + 1]
            out.append(str(os.getpid()) if n == "p" else str(rank) if n == "r" else "%")
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _rank_output(pattern, rank):
    """PROF_OUTPUT for one rank: as it is with %r or %p, else with the rank
    before the extension (run.prof -> run.rank1.prof)."""
    if "%r" in pattern or "%p" in pattern:
        return pattern
    root, ext = os.path.splitext(pattern)
    return "%s.rank%s%s" % (root, rank, ext)


def _ours(path):
    return bool(path) and os.path.abspath(path).startswith(_PACKAGE + os.sep)


def _program_prof():
    """Where the program's own module named prof is, when it has one (a
    module or a regular package; a plain directory named prof is no module
    and cannot clash): importing ours would shadow it, or it ours."""
    mod = sys.modules.get("prof")
    if mod is not None:
        where = getattr(mod, "__file__", None)
        return None if _ours(where) else (where or "prof")
    import importlib.machinery
    paths = [p for p in sys.path if os.path.abspath(p or os.curdir) not in (_ENTRY, _HERE)]
    spec = importlib.machinery.PathFinder.find_spec("prof", paths)
    if spec is None or not spec.origin or not os.path.isfile(spec.origin):
        return None
    return spec.origin


def _torch_imported():
    if _child_process():
        return
    theirs = _program_prof()
    if theirs is not None:
        sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ENTRY]
        _warn("this program has its own module named prof (%s): the PyTorch hooks are off, "
              "so that it imports its own (the rest of the recording goes on)" % theirs)
        return
    import prof
    output = os.environ.get("PROF_OUTPUT")
    rank = os.environ.get("RANK") or os.environ.get("LOCAL_RANK")
    mine = os.environ.get("PROF_AUTOSTART_PID") == str(os.getpid())
    if output and rank is not None and not mine and not prof.recording():
        if prof.start(_rank_output(output, rank)):
            os.environ["PROF_AUTOSTART_PID"] = str(os.getpid())
    elif output and mine and _launcher():
        prof.stop()
        path = _expand(output, os.environ.get("PROF_RANK") or 0)
        try:
            os.unlink(path)
        except OSError:
            pass
        return
    import prof.torch
    prof.torch.auto(hooks=os.environ.get("PROF_PYTHON_HOOKS"))


def _after_torch():
    try:
        _torch_imported()
    except Exception as e:
        _warn("cannot profile this program's PyTorch: %s: %s (it runs unprofiled)"
              % (type(e).__name__, e))


class _TorchFinder:
    """Finds nothing itself: when torch is about to be imported, lets the
    other finders find it and runs _after_torch once torch has loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        try:
            sys.meta_path.remove(self)
        except ValueError:
            pass
        try:
            import importlib.util
            spec = importlib.util.find_spec("torch")
        except Exception:
            return None
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module

        def exec_module(module):
            try:
                del loader.exec_module  # back to the class's
            except AttributeError:
                pass
            original(module)
            _after_torch()
        try:
            loader.exec_module = exec_module
        except AttributeError:
            return spec
        return spec


def _keyboard_interrupt():
    """Python's SIGINT handler, where libprof's (set by the preload
    constructor in this very process) kept Python from installing it. The
    program then ends through KeyboardInterrupt and exit, which closes the
    profile cleanly; libprof's crash flush is for deaths Python cannot see."""
    if os.environ.get("PROF_AUTOSTART_PID") != str(os.getpid()):
        return
    import signal
    if signal.getsignal(signal.SIGINT) is None:  # a handler not Python's: libprof's
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _boot():
    _chain()
    _keyboard_interrupt()
    if os.environ.get("PROF_PYTHON", "1") == "0":
        return
    if "torch" in sys.modules:  # the program's sitecustomize imported it
        _after_torch()
    else:
        sys.meta_path.insert(0, _TorchFinder())


try:
    _boot()
except Exception as _e:  # never into the program
    _warn("cannot set up profiling: %s: %s" % (type(_e).__name__, _e))
