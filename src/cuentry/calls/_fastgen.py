"""Build-time generator of the compiled call extension, ``cuentry.calls._fastcall``.

It defines two types. ``OutBase``: the base of :class:`cuentry.Out`, holding a
buffer export of the ctypes array it owns (so its pointer always comes from a
live, writable buffer of the stated size). ``Caller``: a vectorcall object bound
to a function pointer, a signature shape (one C call case per shape of the
catalog), a letter per parameter saying what C may convert itself (see
``contract._fast_letter``), and the library's guard state. Whatever C does not
convert goes to the Python contract, which converts or raises and calls back
through the caller itself. No other library's private layout is read.

Built with the system C compiler and the interpreter's headers, by the wheel's
build hook or :func:`build` (``python -m cuentry.calls._fastgen`` for a checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile

from .shapes import SLOTS, catalog_shapes, shape_code

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

_TEMPLATE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <stdint.h>
#include <stddef.h>
#include <float.h>
#include <math.h>
#include <wchar.h>

#define MAXARGS 32
typedef union { long long s; unsigned long long u; double f; void *p; } slot;

/* ---- OutBase: cuentry-owned typed storage ---- */
typedef struct {
    PyObject_HEAD
    PyObject *obj;
    Py_buffer view;
    int has_view;
    void *ptr;
    Py_ssize_t count;
    Py_ssize_t itemsize;
    char code;
} OutBase;

static PyTypeObject OutBaseType;
static PyObject *out_type = NULL;     /* cuentry's Out class (a subclass of OutBase), once registered */

static int out_init(PyObject *o, PyObject *args, PyObject *kw) {
    OutBase *self = (OutBase *)o;
    PyObject *obj;
    Py_ssize_t count, itemsize;
    const char *code;
    if (self->has_view) { PyErr_SetString(PyExc_TypeError, "an Out cannot be re-initialised"); return -1; }
    if (!PyArg_ParseTuple(args, "Onns", &obj, &count, &itemsize, &code)) return -1;
    if (count < 1 || itemsize < 1 || strlen(code) != 1 || strchr("bBhHiIqQfdcPT", code[0]) == NULL) {
        PyErr_SetString(PyExc_ValueError, "bad Out element"); return -1;
    }
    if (PyObject_GetBuffer(obj, &self->view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (self->view.len / itemsize < count) {
        PyBuffer_Release(&self->view);
        PyErr_SetString(PyExc_ValueError, "Out storage is smaller than count * itemsize"); return -1;
    }
    self->has_view = 1;
    self->ptr = self->view.buf;
    self->count = count;
    self->itemsize = itemsize;
    self->code = code[0];
    Py_INCREF(obj); Py_XSETREF(self->obj, obj);
    return 0;
}

static int out_traverse(PyObject *o, visitproc visit, void *arg) { Py_VISIT(((OutBase *)o)->obj); return 0; }

static void out_dealloc(PyObject *o) {
    OutBase *self = (OutBase *)o;
    PyObject_GC_UnTrack(o);
    if (self->has_view) { PyBuffer_Release(&self->view); self->has_view = 0; }
    Py_CLEAR(self->obj);
    Py_TYPE(o)->tp_free(o);
}

static PyObject *out_get_ptr(PyObject *o, void *c) { return PyLong_FromVoidPtr(((OutBase *)o)->ptr); }
static PyObject *out_get_code(PyObject *o, void *c) { return PyUnicode_FromStringAndSize(&((OutBase *)o)->code, 1); }
static PyObject *out_get_obj(PyObject *o, void *c) {
    PyObject *r = ((OutBase *)o)->obj ? ((OutBase *)o)->obj : Py_None; Py_INCREF(r); return r;
}

static PyMemberDef out_members[] = {
    {"count", T_PYSSIZET, offsetof(OutBase, count), READONLY, "number of elements"},
    {"itemsize", T_PYSSIZET, offsetof(OutBase, itemsize), READONLY, "bytes per element"},
    {NULL},
};
static PyGetSetDef out_getset[] = {
    {"_ptr", out_get_ptr, NULL, "address of the storage", NULL},
    {"_code", out_get_code, NULL, "element code", NULL},
    {"_obj", out_get_obj, NULL, "the storage object", NULL},
    {NULL},
};

static PyTypeObject OutBaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cuentry.calls._fastcall.OutBase",
    .tp_basicsize = sizeof(OutBase),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Typed storage owned by cuentry (base of cuentry.Out).",
    .tp_new = PyType_GenericNew,
    .tp_init = out_init,
    .tp_traverse = out_traverse,
    .tp_dealloc = out_dealloc,
    .tp_members = out_members,
    .tp_getset = out_getset,
};

/* ---- Caller ---- */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *fn;
    int shape, nargs, check, nogil;
    char slots[MAXARGS + 1];
    char checks[MAXARGS + 1];
    char elems[MAXARGS + 1];
    PyObject *slow;        /* Python: the contract converts (or raises), returns (values, keep-alives) */
    PyObject *err;         /* check mode: err(rc) returns the exception to raise */
    PyObject *on_closed;   /* raises DriverClosedError */
    PyObject *state_obj;   /* the guard's int64[2]: closed flag, calls in flight */
    Py_buffer state_view;
    int has_state;
    int64_t *state;
    PyObject *dict;
    PyObject *weakrefs;
} Caller;

static int call_shape(int shape, void *fn, slot *a, int *rc);

static int is_out(PyObject *o) { return out_type != NULL && PyObject_TypeCheck(o, (PyTypeObject *)out_type); }

static int out_code_ok(char want, char code) {
    if (want == 'c') return code == 'c' || code == 'b' || code == 'B';
    if (code == want) return 1;
    if (sizeof(void *) == 8) return (want == 'P' && code == 'Q') || (want == 'Q' && code == 'P');
    return (want == 'P' && code == 'I') || (want == 'I' && code == 'P');
}

/* 1: converted; 0: not for C (the contract decides). Never raises. */
static int fast_int(PyObject *o, char k, slot *s) {
    if (!PyLong_CheckExact(o)) return 0;
    if (k == 'b' || k == 'h' || k == 'i' || k == 'q') {
        int ovf = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &ovf);
        if (ovf || (v == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
        long long lim = k == 'b' ? 0x7f : k == 'h' ? 0x7fff : k == 'i' ? 0x7fffffffLL : 0x7fffffffffffffffLL;
        if (v > lim || v < -lim - 1) return 0;
        s->s = v; return 1;
    }
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
    unsigned long long lim = k == 'B' ? 0xffULL : k == 'H' ? 0xffffULL : k == 'I' ? 0xffffffffULL : ~0ULL;
    if (v > lim) return 0;
    s->u = v; return 1;
}

static int fast_arg(Caller *self, int i, PyObject *o, slot *s) {
    char k = self->checks[i];
    switch (k) {
    case 'b': case 'B': case 'h': case 'H': case 'i': case 'I': case 'q': case 'Q':
        return fast_int(o, k, s);
    case 'P':
        if (o == Py_None) { s->p = NULL; return 1; }
        /* fall through */
    case 'D': {
        if (!PyLong_CheckExact(o)) return 0;
        unsigned long long v = PyLong_AsUnsignedLongLong(o);
        if (v == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
        if (v > (unsigned long long)UINTPTR_MAX) return 0;
        if (self->slots[i] == 'p') s->p = (void *)(uintptr_t)v; else s->u = v;
        return 1;
    }
    case 'f': case 'd': {
        if (!PyFloat_CheckExact(o)) return 0;
        double v = PyFloat_AS_DOUBLE(o);
        if (k == 'f' && isfinite(v) && fabs(v) > FLT_MAX) return 0;
        s->f = v; return 1;
    }
    case 'S': case 'V': case 'W': case 'o':
        if (o == Py_None) { s->p = NULL; return 1; }
        if ((k == 'S' || k == 'V') && PyBytes_CheckExact(o)) { s->p = PyBytes_AS_STRING(o); return 1; }
        if (is_out(o)) {
            OutBase *ob = (OutBase *)o;
            if (!ob->has_view) return 0;
            if (k == 'S' && !out_code_ok('c', ob->code)) return 0;
            if (k == 'o' && !out_code_ok(self->elems[i], ob->code)) return 0;
            s->p = ob->ptr; return 1;
        }
        return 0;
    default:
        return 0;
    }
}

static PyObject *finish(Caller *self, int rc) {
    if (!self->check) return PyLong_FromLong(rc);
    if (rc == 0) Py_RETURN_NONE;
    PyObject *code = PyLong_FromLong(rc);
    if (code == NULL) return NULL;
    PyObject *exc = PyObject_CallOneArg(self->err, code);
    Py_DECREF(code);
    if (exc == NULL) return NULL;
    PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
    Py_DECREF(exc);
    return NULL;
}

static PyObject *do_call(Caller *self, slot *a) {
    int64_t *st = self->state;
    int rc = 0, shaped;
    st[1]++;                          /* in flight before looking at the flag: close() waits for us */
    if (st[0]) {
        st[1]--;
        PyObject *r = PyObject_CallNoArgs(self->on_closed);
        Py_XDECREF(r);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "the driver library was closed");
        return NULL;
    }
    if (self->nogil) {
        Py_BEGIN_ALLOW_THREADS
        shaped = call_shape(self->shape, self->fn, a, &rc);
        Py_END_ALLOW_THREADS
    } else {
        shaped = call_shape(self->shape, self->fn, a, &rc);
    }
    st[1]--;
    if (!shaped) { PyErr_SetString(PyExc_SystemError, "cuentry: no call case for this shape"); return NULL; }
    return finish(self, rc);
}

/* Values the contract converted (ints for pointers and handles, floats) into slots; -1 with an error set. */
static int converted(Caller *self, PyObject *values, slot *a) {
    if (!PyList_CheckExact(values) || PyList_GET_SIZE(values) != self->nargs) {
        PyErr_SetString(PyExc_SystemError, "cuentry: the contract returned the wrong number of values");
        return -1;
    }
    for (Py_ssize_t i = 0; i < self->nargs; i++) {
        PyObject *o = PyList_GET_ITEM(values, i);
        switch (self->slots[i]) {
        case 's': a[i].s = PyLong_AsLongLong(o); break;
        case 'u': a[i].u = PyLong_AsUnsignedLongLong(o); break;
        case 'p': a[i].p = (void *)(uintptr_t)PyLong_AsUnsignedLongLong(o); break;
        default: a[i].f = PyFloat_AsDouble(o); break;
        }
        if (PyErr_Occurred()) return -1;
    }
    return 0;
}

/* Not for C: the Python contract converts (or raises) and returns (values, keep-alives); C then calls. */
static PyObject *slow_path(Caller *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (self->slow == NULL) { PyErr_SetString(PyExc_TypeError, "cuentry caller not ready"); return NULL; }
    PyObject *got = PyObject_Vectorcall(self->slow, args, nargsf, kwnames);
    if (got == NULL) return NULL;
    slot a[MAXARGS];
    PyObject *result = NULL;
    if (!PyTuple_CheckExact(got) || PyTuple_GET_SIZE(got) != 2) {
        PyErr_SetString(PyExc_SystemError, "cuentry: the contract answered in the wrong form");
    } else if (converted(self, PyTuple_GET_ITEM(got, 0), a) == 0) {
        result = do_call(self, a);   /* the keep-alives in got live until after the call */
    }
    Py_DECREF(got);
    return result;
}

static PyObject *caller_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Caller *self = (Caller *)obj;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL || n != self->nargs) return slow_path(self, args, nargsf, kwnames);
    slot a[MAXARGS];
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!fast_arg(self, (int)i, args[i], &a[i])) return slow_path(self, args, nargsf, kwnames);
    }
    return do_call(self, a);
}

static int caller_init(PyObject *obj, PyObject *args, PyObject *kw) {
    Caller *self = (Caller *)obj;
    unsigned long long fn;
    int shape, check = 0, nogil = 1;
    const char *slots, *checks, *elems;
    PyObject *state, *on_closed, *err = Py_None;
    if (self->has_state) { PyErr_SetString(PyExc_TypeError, "a Caller cannot be re-initialised"); return -1; }
    if (!PyArg_ParseTuple(args, "KisssOO|iOi", &fn, &shape, &slots, &checks, &elems, &state, &on_closed, &check,
                          &err, &nogil))
        return -1;
    size_t n = strlen(slots);
    if (n > MAXARGS || strlen(checks) != n || strlen(elems) != n || fn == 0) {
        PyErr_SetString(PyExc_ValueError, "bad signature shape"); return -1;
    }
    if (PyObject_GetBuffer(state, &self->state_view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (self->state_view.len < 2 * (Py_ssize_t)sizeof(int64_t)) {
        PyBuffer_Release(&self->state_view);
        PyErr_SetString(PyExc_ValueError, "guard state too small"); return -1;
    }
    self->has_state = 1;
    self->state = (int64_t *)self->state_view.buf;
    self->fn = (void *)(uintptr_t)fn;
    self->shape = shape;
    self->nargs = (int)n;
    self->check = check;
    self->nogil = nogil;
    memcpy(self->slots, slots, n + 1);
    memcpy(self->checks, checks, n + 1);
    memcpy(self->elems, elems, n + 1);
    Py_INCREF(state); Py_XSETREF(self->state_obj, state);
    Py_INCREF(on_closed); Py_XSETREF(self->on_closed, on_closed);
    Py_INCREF(err); Py_XSETREF(self->err, err);
    self->vectorcall = caller_call;
    return 0;
}

static PyObject *caller_set_slow(PyObject *obj, PyObject *slow) {
    Caller *self = (Caller *)obj;
    Py_INCREF(slow); Py_XSETREF(self->slow, slow);
    Py_RETURN_NONE;
}

static int caller_traverse(PyObject *obj, visitproc visit, void *arg) {
    Caller *self = (Caller *)obj;
    Py_VISIT(self->slow); Py_VISIT(self->err); Py_VISIT(self->on_closed); Py_VISIT(self->state_obj);
    Py_VISIT(self->dict);
    return 0;
}

static int caller_clear(PyObject *obj) {
    Caller *self = (Caller *)obj;
    Py_CLEAR(self->slow); Py_CLEAR(self->err); Py_CLEAR(self->on_closed); Py_CLEAR(self->dict);
    return 0;
}

static void caller_dealloc(PyObject *obj) {
    Caller *self = (Caller *)obj;
    PyObject_GC_UnTrack(obj);
    if (self->weakrefs != NULL) PyObject_ClearWeakRefs(obj);
    caller_clear(obj);
    if (self->has_state) { PyBuffer_Release(&self->state_view); self->has_state = 0; }
    Py_CLEAR(self->state_obj);
    Py_TYPE(obj)->tp_free(obj);
}

static PyMethodDef caller_methods[] = {
    {"_slow", caller_set_slow, METH_O, "Set the Python conversion path."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef caller_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cuentry.calls._fastcall.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A typed call through a driver function pointer.",
    .tp_new = PyType_GenericNew,
    .tp_init = caller_init,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Caller, vectorcall),
    .tp_dictoffset = offsetof(Caller, dict),
    .tp_weaklistoffset = offsetof(Caller, weakrefs),
    .tp_traverse = caller_traverse,
    .tp_clear = caller_clear,
    .tp_dealloc = caller_dealloc,
    .tp_methods = caller_methods,
    .tp_getset = caller_getset,
};

static PyObject *register_out(PyObject *mod, PyObject *cls) {
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, &OutBaseType)) {
        PyErr_SetString(PyExc_TypeError, "register_out needs a subclass of OutBase"); return NULL;
    }
    Py_INCREF(cls); Py_XSETREF(out_type, cls);
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"register_out", register_out, METH_O, "Name cuentry's Out class (the fast path accepts its instances)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fastcall", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__fastcall(void) {
    if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&OutBaseType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) return NULL;
    Py_INCREF(&OutBaseType);
    if (PyModule_AddObject(m, "OutBase", (PyObject *)&OutBaseType) < 0) return NULL;
    PyModule_AddIntConstant(m, "MAXARGS", MAXARGS);
    if (PyModule_AddStringConstant(m, "SHAPES", "@SHAPES@") < 0) return NULL;
    return m;
}

static int call_shape(int shape, void *fn, slot *a, int *rc) {
    switch (shape) {
@CASES@
    default: return 0;
    }
}
"""


def source(shapes: Sequence[tuple[str, ...]]) -> str:
    """The extension's C source for ``shapes`` (shape i is case i; SHAPES lists their codes)."""
    cases = []
    names = []
    for i, shape in enumerate(shapes):
        args = ", ".join(f"({t})a[{j}].{SLOTS[t]}" for j, t in enumerate(shape))
        cases.append(f"    case {i}: *rc = ((int (*)({', '.join(shape) or 'void'}))fn)({args}); return 1;")
        names.append(shape_code(shape) or "")
    return _TEMPLATE.replace("@CASES@", "\n".join(cases)).replace("@SHAPES@", ",".join(names))


def build(out_dir: str, cc: str | None = None) -> str:
    """Compile ``cuentry.calls._fastcall`` into ``out_dir``; return the file's path."""
    shapes = [s for s in catalog_shapes() if len(s) <= 32]
    src = os.path.join(out_dir, "_fastcall.c")
    with open(src, "w") as fh:
        fh.write(source(shapes))
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    out = os.path.join(out_dir, "_fastcall" + suffix)
    compiler = cc or os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or "cc"
    inc = sysconfig.get_paths()["include"]
    if not os.path.exists(os.path.join(inc, "Python.h")):
        raise RuntimeError(f"no Python.h in {inc} (install the Python development headers)")
    cmd = [compiler, "-shared", "-fPIC", "-O2", "-w", f"-I{inc}", src, "-o", out, "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the call extension failed: {proc.stderr.strip()[:1500]}")
    return out


def install_into_checkout() -> str:
    """Build the extension into this package's folder (a source checkout); return its path."""
    import glob

    here = os.path.dirname(os.path.abspath(__file__))
    so = build(tempfile.mkdtemp(prefix="cuentry-calls-"))
    for old in glob.glob(os.path.join(here, "_fastcall*.so")) + glob.glob(os.path.join(here, "_fastcall*.pyd")):
        os.remove(old)
    dest = os.path.join(here, os.path.basename(so))
    shutil.copy2(so, dest)
    return dest


if __name__ == "__main__":
    install_into_checkout()
