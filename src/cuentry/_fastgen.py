"""The compiled backend: a small CPython extension, ``cuentry._fastcall``, generated here.

It defines one type, ``Caller``: a vectorcall object bound to a function pointer
and a signature shape (one letter per parameter, see ``_stubgen.CODES``). A call
converts each argument in C (ints, floats, None/ints/bytes/buffers/cffi pointers
for pointer parameters) and calls through the pointer with the exact C types,
through a switch with one case per shape of the catalog. Anything it cannot
convert goes to a Python fallback (the pure backend's converter), so behaviour
and errors are the same on both backends. No libffi, no Python frame per call.

Built with the system C compiler and the interpreter's headers, by the wheel's
build hook or ``python -m cuentry._fastgen`` for a checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Sequence

from ._stubgen import KINDS, catalog_shapes, shape_code

_TEMPLATE = r"""
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stddef.h>
#include <wchar.h>

#define MAXARGS 32
typedef union { long long s; unsigned long long u; double f; void *p; } slot;

static Py_ssize_t cdata_offset = -1;          /* where cffi keeps a cdata's pointer; -1: unknown */
static PyTypeObject *cdata_types[4];           /* the cdata classes whose pointer is read directly */
static int n_cdata_types = 0;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *fn;
    int shape;
    int nargs;
    int check;
    int nogil;
    char codes[MAXARGS + 1];
    char kinds[MAXARGS + 1];
    PyObject *slow;      /* called with the same arguments when C cannot convert one */
    PyObject *err;       /* check mode: err(rc) returns the exception to raise */
    PyObject *dict;
    PyObject *weakrefs;
} Caller;

static int call_shape(int shape, void *fn, slot *a, int *rc);

static int to_pointer(PyObject *o, slot *out, Py_buffer *view, int *held) {
    if (o == Py_None) { out->p = NULL; return 0; }
    if (PyLong_CheckExact(o)) {
        out->p = PyLong_AsVoidPtr(o);
        return (out->p == NULL && PyErr_Occurred()) ? -1 : 0;
    }
    PyTypeObject *t = Py_TYPE(o);
    if (cdata_offset >= 0) {
        for (int i = 0; i < n_cdata_types; i++) {
            if (t == cdata_types[i]) { out->p = *(void **)((char *)o + cdata_offset); return 0; }
        }
    }
    if (PyBytes_CheckExact(o)) { out->p = PyBytes_AS_STRING(o); return 0; }
    if (PyObject_CheckBuffer(o) && PyObject_GetBuffer(o, view, PyBUF_SIMPLE) == 0) {
        *held = 1; out->p = view->buf; return 0;
    }
    PyErr_Clear();
    return 1;  /* not for C: the Python fallback converts it */
}

static PyObject *fallback(Caller *self, PyObject *const *args, Py_ssize_t n) {
    return PyObject_Vectorcall(self->slow, args, n, NULL);
}

static PyObject *caller_call(PyObject *obj, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Caller *self = (Caller *)obj;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (self->fn == NULL || kwnames != NULL || n != self->nargs) return fallback(self, args, n);
    slot a[MAXARGS];
    Py_buffer views[MAXARGS];
    int held[MAXARGS];
    int ok = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = args[i];
        held[i] = 0;
        switch (self->kinds[i]) {
        case 's':
            if (!PyLong_CheckExact(o)) { ok = 0; break; }
            a[i].s = PyLong_AsLongLong(o);
            if (a[i].s == -1 && PyErr_Occurred()) { PyErr_Clear(); ok = 0; }
            break;
        case 'u':
            if (!PyLong_CheckExact(o)) { ok = 0; break; }
            a[i].u = PyLong_AsUnsignedLongLong(o);
            if (a[i].u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); ok = 0; }
            break;
        case 'f':
            if (!PyFloat_CheckExact(o) && !PyLong_CheckExact(o)) { ok = 0; break; }
            a[i].f = PyFloat_AsDouble(o);
            if (a[i].f == -1.0 && PyErr_Occurred()) { PyErr_Clear(); ok = 0; }
            break;
        default: {
            int r = to_pointer(o, &a[i], &views[i], &held[i]);
            if (r < 0) { PyErr_Clear(); ok = 0; }
            else if (r > 0) ok = 0;
        }
        }
        if (!ok) {
            for (Py_ssize_t j = 0; j <= i; j++) if (held[j]) PyBuffer_Release(&views[j]);
            return fallback(self, args, n);
        }
    }
    int rc = 0;
    int shaped;
    if (self->nogil) {
        Py_BEGIN_ALLOW_THREADS
        shaped = call_shape(self->shape, self->fn, a, &rc);
        Py_END_ALLOW_THREADS
    } else {
        shaped = call_shape(self->shape, self->fn, a, &rc);
    }
    for (Py_ssize_t j = 0; j < n; j++) if (held[j]) PyBuffer_Release(&views[j]);
    if (!shaped) return fallback(self, args, n);
    if (self->check) {
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
    return PyLong_FromLong(rc);
}

static int caller_init(PyObject *obj, PyObject *args, PyObject *kw) {
    Caller *self = (Caller *)obj;
    unsigned long long fn;
    int shape, check = 0, nogil = 1;
    const char *codes, *kinds;
    PyObject *slow, *err = Py_None;
    static char *names[] = {"fn", "shape", "codes", "kinds", "slow", "check", "err", "nogil", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "KissO|iOi", names, &fn, &shape, &codes, &kinds, &slow, &check, &err,
                                     &nogil))
        return -1;
    size_t n = strlen(kinds);
    if (n > MAXARGS || strlen(codes) != n) { PyErr_SetString(PyExc_ValueError, "bad signature shape"); return -1; }
    self->fn = (void *)(uintptr_t)fn;
    self->shape = shape;
    self->nargs = (int)n;
    self->check = check;
    self->nogil = nogil;
    memcpy(self->codes, codes, n + 1);
    memcpy(self->kinds, kinds, n + 1);
    Py_INCREF(slow); Py_XSETREF(self->slow, slow);
    Py_INCREF(err); Py_XSETREF(self->err, err);
    self->vectorcall = caller_call;
    return 0;
}

static PyObject *caller_close(PyObject *obj, PyObject *raiser) {
    Caller *self = (Caller *)obj;
    self->fn = NULL;                       /* every later call goes to the fallback ... */
    Py_INCREF(raiser); Py_XSETREF(self->slow, raiser);   /* ... which now raises */
    Py_RETURN_NONE;
}

static int caller_traverse(PyObject *obj, visitproc visit, void *arg) {
    Caller *self = (Caller *)obj;
    Py_VISIT(self->slow); Py_VISIT(self->err); Py_VISIT(self->dict);
    return 0;
}

static int caller_clear(PyObject *obj) {
    Caller *self = (Caller *)obj;
    Py_CLEAR(self->slow); Py_CLEAR(self->err); Py_CLEAR(self->dict);
    return 0;
}

static void caller_dealloc(PyObject *obj) {
    PyObject_GC_UnTrack(obj);
    if (((Caller *)obj)->weakrefs != NULL) PyObject_ClearWeakRefs(obj);
    caller_clear(obj);
    Py_TYPE(obj)->tp_free(obj);
}

static PyMethodDef caller_methods[] = {
    {"_close", caller_close, METH_O, "Route every later call to the given raiser (the library was closed)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "cuentry._fastcall.Caller",
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
};

/* calibrate(cdata, address): find where cffi keeps a cdata's pointer, checked against a known address. */
static PyObject *calibrate(PyObject *mod, PyObject *args) {
    PyObject *cd;
    unsigned long long want;
    if (!PyArg_ParseTuple(args, "OK", &cd, &want)) return NULL;
    for (Py_ssize_t off = sizeof(PyObject); off + (Py_ssize_t)sizeof(void *) <= Py_TYPE(cd)->tp_basicsize;
         off += sizeof(void *)) {
        if ((unsigned long long)(uintptr_t)*(void **)((char *)cd + off) == want) {
            if (cdata_offset < 0 || cdata_offset == off) {
                cdata_offset = off;
                if (n_cdata_types < 4) {
                    int seen = 0;
                    for (int i = 0; i < n_cdata_types; i++) seen |= cdata_types[i] == Py_TYPE(cd);
                    if (!seen) { Py_INCREF(Py_TYPE(cd)); cdata_types[n_cdata_types++] = Py_TYPE(cd); }
                }
                Py_RETURN_TRUE;
            }
        }
    }
    Py_RETURN_FALSE;
}

static PyMethodDef module_methods[] = {
    {"calibrate", calibrate, METH_VARARGS, "Teach the fast path where cffi keeps a cdata's pointer."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_fastcall", NULL, -1, module_methods};

PyMODINIT_FUNC PyInit__fastcall(void) {
    if (PyType_Ready(&CallerType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&CallerType);
    if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0) return NULL;
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
        # The type names of a shape are C type names; the slot member is the conversion letter.
        args = ", ".join(f"({t})a[{j}].{KINDS[t]}" for j, t in enumerate(shape))
        cases.append(f"    case {i}: *rc = ((int (*)({', '.join(shape) or 'void'}))fn)({args}); return 1;")
        names.append(shape_code(shape) or "")
    return _TEMPLATE.replace("@CASES@", "\n".join(cases)).replace("@SHAPES@", ",".join(names))


def build(out_dir: str, cc: str | None = None) -> str:
    """Compile ``cuentry._fastcall`` into ``out_dir``; return the file's path."""
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
    cmd = [compiler, "-shared", "-fPIC", "-O2", "-w", f"-I{inc}", src, "-o", out]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"compiling the fast call extension failed: {proc.stderr.strip()[:1500]}")
    return out


def main() -> int:
    """``python -m cuentry._fastgen``: build the extension into this package's folder (for a checkout)."""
    import glob

    here = os.path.dirname(os.path.abspath(__file__))
    so = build(tempfile.mkdtemp(prefix="cuentry-fast-"))
    for old in glob.glob(os.path.join(here, "_fastcall*.so")) + glob.glob(os.path.join(here, "_fastcall*.pyd")):
        os.remove(old)
    dest = os.path.join(here, os.path.basename(so))
    shutil.copy2(so, dest)
    print(dest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
