/* _native.c - the hot calls of the Python binding as a CPython extension.
 *
 * A ctypes call costs about half a microsecond, several times the region
 * itself; these functions call libprof directly. The extension does not
 * link libprof: prof/__init__.py loads the library once (or finds the copy
 * already in the process, preloaded by `prof record`) and hands its
 * function addresses to bind(), so that there is only ever one recorder in
 * the process. Until bind() runs every call is a no-op.
 *
 * Nothing here raises into the caller's loop once the arguments have the
 * right shape: a value that cannot be recorded is dropped, reported once
 * through the "prof" logger, as the rest of the binding reports. Region names are interned once per distinct string (a dict
 * lookup afterwards), as prof_intern takes a lock.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <string.h>

typedef void (*begin_id_fn)(uint32_t id, int kind);
typedef void (*void_fn)(void);
typedef void (*memory_fn)(const char *series, uint64_t bytes);
typedef void (*counter_fn)(const char *name, double value);
typedef void (*name_fn)(const char *name);
typedef uint32_t (*intern_fn)(const char *name);

static void nop_begin(uint32_t id, int kind) { (void)id, (void)kind; }
static void nop_void(void) {}
static void nop_memory(const char *s, uint64_t b) { (void)s, (void)b; }
static void nop_counter(const char *n, double v) { (void)n, (void)v; }
static void nop_name(const char *n) { (void)n; }
static uint32_t nop_intern(const char *n) { return (void)n, 0; }

/* libprof's entry points. Written by bind() before the binding records
 * anything, then only read: the recorder's own state lives in libprof. */
static struct {
    begin_id_fn begin_id;
    void_fn end;
    void_fn step;
    memory_fn memory;
    counter_fn counter;
    name_fn mark;
    intern_fn intern;
} api = { nop_begin, nop_void, nop_void, nop_memory, nop_counter, nop_name, nop_intern };

/* name (str) -> id (int): interning takes libprof's lock, a dict lookup does not. */
static PyObject *name_ids;

/* What could not be recorded is said once per process, never raised, in
 * the binding's one voice: prof._report_once, the "prof" logger, under the
 * key the ctypes path uses too, so that it is said once between them.
 * stderr only when that cannot be called (the interpreter shutting down). */
static int reported;
static void report_once(const char *what)
{
    PyErr_Clear();
    if (reported)
        return;
    reported = 1;
    PyObject *msg = PyUnicode_FromFormat("prof: %s; dropped (reported once)", what);
    PyObject *mod = msg ? PyImport_ImportModule("prof") : NULL;
    PyObject *r = mod ? PyObject_CallMethod(mod, "_report_once", "Os", msg, "dropped") : NULL;
    if (!r) {
        PyErr_Clear();
        PySys_WriteStderr("prof: %s; dropped (reported once)\n", what);
    }
    Py_XDECREF(r);
    Py_XDECREF(mod);
    Py_XDECREF(msg);
}

#define NKINDS 5
static const char *const kind_names[NKINDS] = { "compute", "data", "sync", "comm", "io" };

/* A kind as an int 0..4 or its name; -1 with an exception otherwise. */
static int kind_from(PyObject *o)
{
    if (PyLong_Check(o)) {
        long k = PyLong_AsLong(o);
        if (k >= 0 && k < NKINDS)
            return (int)k;
    } else if (PyUnicode_Check(o)) {
        const char *s = PyUnicode_AsUTF8(o);
        for (int k = 0; s && k < NKINDS; k++)
            if (strcmp(s, kind_names[k]) == 0)
                return k;
    }
    if (!PyErr_Occurred())
        PyErr_Format(PyExc_ValueError,
                     "prof: region kind must be 0-4 or compute, data, sync, comm, io, not %R", o);
    return -1;
}

/* The id of a name, interning it on first use. 0 (ignored by libprof)
 * when it cannot be had; -1 with an exception for a name that is not a str. */
static long name_id(PyObject *name)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "prof: a region name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return -1;
    }
    PyObject *id = PyDict_GetItemWithError(name_ids, name);
    if (id)
        return PyLong_AsLong(id);
    const char *s = PyUnicode_AsUTF8(name);
    if (!s) {
        report_once("a region name is not valid UTF-8");
        return 0;
    }
    uint32_t v = api.intern(s);
    if (v == 0)
        return 0; /* not bound yet, or out of memory: try again next time */
    PyObject *boxed = PyLong_FromUnsignedLong(v);
    if (!boxed || PyDict_SetItem(name_ids, name, boxed) < 0)
        report_once("cannot cache a region name");
    Py_XDECREF(boxed);
    return (long)v;
}

/* ---- bind ------------------------------------------------------------------------ */

static int address(PyObject *o, void **out)
{
    *out = PyLong_AsVoidPtr(o);
    if (!*out && !PyErr_Occurred())
        PyErr_SetString(PyExc_ValueError, "prof: bind: null function address");
    return *out ? 0 : -1;
}

/* bind(begin_id, end, step, memory, counter, mark, intern): addresses of
 * prof_region_begin_id, prof_region_end, prof_step, prof_memory,
 * prof_counter, prof_mark and prof_intern. */
static PyObject *native_bind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    void *p[7];
    if (nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "prof: bind takes 7 function addresses");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < 7; i++)
        if (address(args[i], &p[i]) < 0)
            return NULL;
    /* Object pointers to function pointers: POSIX dlsym's own contract. */
    api.begin_id = (begin_id_fn)p[0];
    api.end = (void_fn)p[1];
    api.step = (void_fn)p[2];
    api.memory = (memory_fn)p[3];
    api.counter = (counter_fn)p[4];
    api.mark = (name_fn)p[5];
    api.intern = (intern_fn)p[6];
    PyDict_Clear(name_ids);
    Py_RETURN_NONE;
}

/* ---- the recording calls -------------------------------------------------------- */

static PyObject *native_intern(PyObject *self, PyObject *name)
{
    (void)self;
    long id = name_id(name);
    return id < 0 ? NULL : PyLong_FromLong(id);
}

/* begin(id, kind): opens a region by interned id. */
static PyObject *native_begin(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "prof: begin(id, kind)");
        return NULL;
    }
    unsigned long id = PyLong_AsUnsignedLong(args[0]);
    long kind = PyLong_AsLong(args[1]);
    if (PyErr_Occurred() || id > UINT32_MAX || kind < 0 || kind >= NKINDS)
        report_once("begin: not an interned id and a kind");
    else
        api.begin_id((uint32_t)id, (int)kind);
    Py_RETURN_NONE;
}

static PyObject *native_end(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    api.end();
    Py_RETURN_NONE;
}

static PyObject *native_step(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    api.step();
    Py_RETURN_NONE;
}

/* A str argument as UTF-8, or NULL (reported once) */
static const char *utf8_arg(PyObject *o, const char *call)
{
    const char *s = PyUnicode_Check(o) ? PyUnicode_AsUTF8(o) : NULL;
    if (!s)
        report_once(call);
    return s;
}

/* memory(series, nbytes): nbytes an int >= 0 (a float is truncated). */
static PyObject *native_memory(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "prof: memory(series, nbytes)");
        return NULL;
    }
    const char *series = utf8_arg(args[0], "memory: the series name is not a str");
    if (!series)
        Py_RETURN_NONE;
    unsigned long long bytes;
    if (PyFloat_Check(args[1])) {
        double d = PyFloat_AS_DOUBLE(args[1]);
        bytes = d > 0 && d < 1.8e19 ? (unsigned long long)d : 0;
    } else {
        bytes = PyLong_AsUnsignedLongLong(args[1]);
        if (PyErr_Occurred()) {
            report_once("memory: nbytes is not a whole number of bytes >= 0");
            Py_RETURN_NONE;
        }
    }
    api.memory(series, (uint64_t)bytes);
    Py_RETURN_NONE;
}

static PyObject *native_counter(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "prof: counter(name, value)");
        return NULL;
    }
    const char *name = utf8_arg(args[0], "counter: the name is not a str");
    if (!name)
        Py_RETURN_NONE;
    double v = PyFloat_AsDouble(args[1]);
    if (v == -1.0 && PyErr_Occurred())
        report_once("counter: the value is not a number");
    else
        api.counter(name, v);
    Py_RETURN_NONE;
}

static PyObject *native_mark(PyObject *self, PyObject *name)
{
    (void)self;
    const char *s = utf8_arg(name, "mark: the name is not a str");
    if (s)
        api.mark(s);
    Py_RETURN_NONE;
}

/* ---- Region: `with` and reuse ---------------------------------------------------- */

/* A region name and kind, interned once; entering opens the region on the
 * calling thread and leaving closes it, also when the body raised. Holds no
 * per-use state, so one object may be entered again, nested and shared
 * between threads. */
typedef struct {
    PyObject_HEAD
    PyObject *name;
    uint32_t id;
    int kind;
} Region;

static PyObject *region_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *kwlist[] = { "name", "kind", NULL };
    PyObject *name, *kind_obj = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:region", kwlist, &name, &kind_obj))
        return NULL;
    int kind = kind_obj ? kind_from(kind_obj) : 0;
    if (kind < 0)
        return NULL;
    long id = name_id(name);
    if (id < 0)
        return NULL;
    Region *r = (Region *)type->tp_alloc(type, 0);
    if (!r)
        return NULL;
    Py_INCREF(name);
    r->name = name;
    r->id = (uint32_t)id;
    r->kind = kind;
    return (PyObject *)r;
}

static void region_dealloc(Region *r)
{
    Py_XDECREF(r->name);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *region_enter(Region *r, PyObject *unused)
{
    (void)unused;
    if (r->id == 0) { /* named before libprof was bound */
        long id = name_id(r->name);
        r->id = id > 0 ? (uint32_t)id : 0;
        PyErr_Clear();
    }
    api.begin_id(r->id, r->kind);
    Py_INCREF(r);
    return (PyObject *)r;
}

static PyObject *region_exit(Region *r, PyObject *const *args, Py_ssize_t nargs)
{
    (void)r, (void)args, (void)nargs;
    api.end();
    Py_RETURN_FALSE; /* exceptions go on */
}

static PyObject *region_repr(Region *r)
{
    return PyUnicode_FromFormat("prof.region(%R, kind='%s')", r->name, kind_names[r->kind]);
}

static PyObject *region_get_name(Region *r, void *unused)
{
    (void)unused;
    Py_INCREF(r->name);
    return r->name;
}

static PyObject *region_get_id(Region *r, void *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLong(r->id);
}

static PyObject *region_get_kind(Region *r, void *unused)
{
    (void)unused;
    return PyLong_FromLong(r->kind);
}

static PyMethodDef region_methods[] = {
    { "__enter__", (PyCFunction)region_enter, METH_NOARGS, "Opens the region." },
    { "__exit__", (PyCFunction)(void (*)(void))region_exit, METH_FASTCALL,
      "Closes the region; never swallows the exception." },
    { NULL, NULL, 0, NULL },
};

static PyGetSetDef region_getset[] = {
    { "name", (getter)region_get_name, NULL, "the region's name", NULL },
    { "id", (getter)region_get_id, NULL, "the interned id (0 until libprof is loaded)", NULL },
    { "kind", (getter)region_get_kind, NULL, "the kind: 0 compute, 1 data, 2 sync, 3 comm, 4 io",
      NULL },
    { NULL, NULL, NULL, NULL, NULL },
};

static PyTypeObject RegionType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "prof._native.Region",
    .tp_basicsize = sizeof(Region),
    .tp_dealloc = (destructor)region_dealloc,
    .tp_repr = (reprfunc)region_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "Region(name, kind=0): a region entered with `with`.",
    .tp_methods = region_methods,
    .tp_getset = region_getset,
    .tp_new = region_new,
};

/* ---- the module ----------------------------------------------------------------- */

#define FASTCALL(f) (PyCFunction)(void (*)(void))(f), METH_FASTCALL

static PyMethodDef native_methods[] = {
    { "bind", FASTCALL(native_bind), "bind(begin_id, end, step, memory, counter, mark, intern)" },
    { "intern", native_intern, METH_O, "intern(name) -> id" },
    { "begin", FASTCALL(native_begin), "begin(id, kind): opens a region by id" },
    { "end", native_end, METH_NOARGS, "end(): closes the innermost region of this thread" },
    { "step", native_step, METH_NOARGS, "step(): ends the training step, begins the next" },
    { "memory", FASTCALL(native_memory), "memory(series, nbytes)" },
    { "counter", FASTCALL(native_counter), "counter(name, value)" },
    { "mark", native_mark, METH_O, "mark(name): an instant event" },
    { NULL, NULL, 0, NULL },
};

static struct PyModuleDef native_module = {
    PyModuleDef_HEAD_INIT, "prof._native", "The hot calls of prof, in C.", -1, native_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__native(void)
{
    if (PyType_Ready(&RegionType) < 0)
        return NULL;
    if (!name_ids && !(name_ids = PyDict_New()))
        return NULL;
    PyObject *m = PyModule_Create(&native_module);
    if (!m)
        return NULL;
    Py_INCREF(&RegionType);
    if (PyModule_AddObject(m, "Region", (PyObject *)&RegionType) < 0) {
        Py_DECREF(&RegionType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
