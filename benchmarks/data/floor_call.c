/* The floor of a compiled call from Python (benchmarks/bench_calls.py): a vectorcall object that converts and
   checks nothing, ignores its arguments, and calls the driver function with the benchmark's own constants.
   What it costs over an empty lambda is what any compiled binding pays before doing any work of its own. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    void *fn;
    int kind;      /* 0: cuCtxGetCurrent(&ctx); 1: cuDeviceGetAttribute(&value, 16, 0) */
    void *ctx;
    int value;
} Floor;

static PyObject *zero;

static PyObject *floor_call(PyObject *o, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Floor *f = (Floor *)o;
    int rc = f->kind == 0 ? ((int (*)(void **))f->fn)(&f->ctx) : ((int (*)(int *, int, int))f->fn)(&f->value, 16, 0);
    if (rc == 0) { Py_INCREF(zero); return zero; }
    return PyLong_FromLong(rc);
}

static PyObject *floor_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    int kind;
    unsigned long long address;
    if (!PyArg_ParseTuple(args, "iK", &kind, &address)) return NULL;
    Floor *f = (Floor *)t->tp_alloc(t, 0);
    if (f == NULL) return NULL;
    f->vectorcall = floor_call;
    f->fn = (void *)(uintptr_t)address;
    f->kind = kind;
    return (PyObject *)f;
}

static PyTypeObject FloorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "floor_call.Floor",
    .tp_basicsize = sizeof(Floor),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = floor_new,
    .tp_vectorcall_offset = offsetof(Floor, vectorcall),
    .tp_call = PyVectorcall_Call,
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "floor_call", NULL, -1, NULL};

PyMODINIT_FUNC PyInit_floor_call(void) {
    if (PyType_Ready(&FloorType) < 0 || (zero = PyLong_FromLong(0)) == NULL) return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (m == NULL) return NULL;
    Py_INCREF(&FloorType);
    if (PyModule_AddObject(m, "Floor", (PyObject *)&FloorType) < 0) return NULL;
    return m;
}
