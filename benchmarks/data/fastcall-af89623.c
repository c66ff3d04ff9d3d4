
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
    if (PyModule_AddStringConstant(m, "SHAPES", "v,ssi,sii,spi,spiU,spiUp,i,ii,iihi,iip,iz,ih,iI,ip,ipi,ipp,ippp,zpQh,zppQh,u,ui,uiUU,uiUQUUQ,uiUpUQ,uu,uup,up,upi,h,hsI,hf,hff,hi,hisIpp,hif,hii,hiii,hiih,hih,hihpp,hiI,hip,hipzsIpp,hipI,hz,hzhzz,hzQz,hzpz,hzpzh,hzpp,hh,hhh,hhI,hhII,hhp,hhph,hhpp,hhppzi,hI,hIhII,hIII,hIIIIIIIhp,hIIIIIIIhpp,hIpI,hIpIh,hQzI,hQuI,hQUI,hp,hpi,hpz,hpzI,hpII,hpQz,hpp,hppz,hppzI,hppI,hppp,hpppz,hpppp,hppppp,hpppppp,I,Ih,IhII,IBI,II,IIBII,III,IIIh,IIIII,IITII,ITI,Iph,IpI,IpIh,IppQ,Ippp,Q,Qi,Qizz,QizQzzQ,QizQzQ,Qz,Qzii,Qzih,Qzzzp,QzzQQ,QzBzz,QzBzzh,QzIzz,QzIzzh,QzQzzQ,QzQzQ,QzTzz,QzTzzh,Qzpz,Qh,Qhzz,QhQhz,QhQhzh,QBz,QBzh,QIz,QIzh,QQz,QQzh,QQzph,QTz,QTzh,Qpz,Qpzh,p,ps,psI,pspI,psppIppI,pi,pii,piii,piupppiiuupiiiii,piupppppiiii,piupppppuupiiii,pih,pihi,piIi,piQ,pip,pz,pziQz,pzzQQ,pzh,pzhh,pzI,pzIph,pzpQ,pu,pui,puI,pup,ph,phs,phi,phii,phiz,phizI,phiI,phiQ,phzz,phzzh,phh,phhII,phI,phIi,phII,phIIh,phQ,phQz,php,phpsz,phpz,phpzh,phpzQ,phpzp,phpzph,phpp,phppzp,pI,pIi,pIiup,pIh,pII,pIIh,pIII,pIppIp,pQ,pQiQ,pQz,pQziQ,pQzh,pQh,pp,ppi,ppii,ppiIi,ppiQ,ppzzI,ppzQh,ppzppzQh,pph,pphs,pphpzi,pphpziI,ppI,ppIi,ppIii,ppIh,ppIII,ppIpp,ppQ,ppp,pppzQz,pppzppzh,pppzppzph,pppI,pppII,pppp,ppppII,ppppIppI") < 0) return NULL;
    return m;
}

static int call_shape(int shape, void *fn, slot *a, int *rc) {
    switch (shape) {
    case 0: *rc = ((int (*)(void))fn)(); return 1;
    case 1: *rc = ((int (*)(char *, char *, int))fn)((char *)a[0].p, (char *)a[1].p, (int)a[2].s); return 1;
    case 2: *rc = ((int (*)(char *, int, int))fn)((char *)a[0].p, (int)a[1].s, (int)a[2].s); return 1;
    case 3: *rc = ((int (*)(char *, void *, int))fn)((char *)a[0].p, (void *)a[1].p, (int)a[2].s); return 1;
    case 4: *rc = ((int (*)(char *, void *, int, uint64_t))fn)((char *)a[0].p, (void *)a[1].p, (int)a[2].s, (uint64_t)a[3].u); return 1;
    case 5: *rc = ((int (*)(char *, void *, int, uint64_t, void *))fn)((char *)a[0].p, (void *)a[1].p, (int)a[2].s, (uint64_t)a[3].u, (void *)a[4].p); return 1;
    case 6: *rc = ((int (*)(int))fn)((int)a[0].s); return 1;
    case 7: *rc = ((int (*)(int, int))fn)((int)a[0].s, (int)a[1].s); return 1;
    case 8: *rc = ((int (*)(int, int, uintptr_t, int))fn)((int)a[0].s, (int)a[1].s, (uintptr_t)a[2].u, (int)a[3].s); return 1;
    case 9: *rc = ((int (*)(int, int, void *))fn)((int)a[0].s, (int)a[1].s, (void *)a[2].p); return 1;
    case 10: *rc = ((int (*)(int, size_t))fn)((int)a[0].s, (size_t)a[1].u); return 1;
    case 11: *rc = ((int (*)(int, uintptr_t))fn)((int)a[0].s, (uintptr_t)a[1].u); return 1;
    case 12: *rc = ((int (*)(int, unsigned int))fn)((int)a[0].s, (unsigned int)a[1].u); return 1;
    case 13: *rc = ((int (*)(int, void *))fn)((int)a[0].s, (void *)a[1].p); return 1;
    case 14: *rc = ((int (*)(int, void *, int))fn)((int)a[0].s, (void *)a[1].p, (int)a[2].s); return 1;
    case 15: *rc = ((int (*)(int, void *, void *))fn)((int)a[0].s, (void *)a[1].p, (void *)a[2].p); return 1;
    case 16: *rc = ((int (*)(int, void *, void *, void *))fn)((int)a[0].s, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p); return 1;
    case 17: *rc = ((int (*)(size_t, void *, unsigned long long, uintptr_t))fn)((size_t)a[0].u, (void *)a[1].p, (unsigned long long)a[2].u, (uintptr_t)a[3].u); return 1;
    case 18: *rc = ((int (*)(size_t, void *, void *, unsigned long long, uintptr_t))fn)((size_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (unsigned long long)a[3].u, (uintptr_t)a[4].u); return 1;
    case 19: *rc = ((int (*)(uint32_t))fn)((uint32_t)a[0].u); return 1;
    case 20: *rc = ((int (*)(uint32_t, int))fn)((uint32_t)a[0].u, (int)a[1].s); return 1;
    case 21: *rc = ((int (*)(uint32_t, int, uint64_t, uint64_t))fn)((uint32_t)a[0].u, (int)a[1].s, (uint64_t)a[2].u, (uint64_t)a[3].u); return 1;
    case 22: *rc = ((int (*)(uint32_t, int, uint64_t, unsigned long long, uint64_t, uint64_t, unsigned long long))fn)((uint32_t)a[0].u, (int)a[1].s, (uint64_t)a[2].u, (unsigned long long)a[3].u, (uint64_t)a[4].u, (uint64_t)a[5].u, (unsigned long long)a[6].u); return 1;
    case 23: *rc = ((int (*)(uint32_t, int, uint64_t, void *, uint64_t, unsigned long long))fn)((uint32_t)a[0].u, (int)a[1].s, (uint64_t)a[2].u, (void *)a[3].p, (uint64_t)a[4].u, (unsigned long long)a[5].u); return 1;
    case 24: *rc = ((int (*)(uint32_t, uint32_t))fn)((uint32_t)a[0].u, (uint32_t)a[1].u); return 1;
    case 25: *rc = ((int (*)(uint32_t, uint32_t, void *))fn)((uint32_t)a[0].u, (uint32_t)a[1].u, (void *)a[2].p); return 1;
    case 26: *rc = ((int (*)(uint32_t, void *))fn)((uint32_t)a[0].u, (void *)a[1].p); return 1;
    case 27: *rc = ((int (*)(uint32_t, void *, int))fn)((uint32_t)a[0].u, (void *)a[1].p, (int)a[2].s); return 1;
    case 28: *rc = ((int (*)(uintptr_t))fn)((uintptr_t)a[0].u); return 1;
    case 29: *rc = ((int (*)(uintptr_t, char *, unsigned int))fn)((uintptr_t)a[0].u, (char *)a[1].p, (unsigned int)a[2].u); return 1;
    case 30: *rc = ((int (*)(uintptr_t, float))fn)((uintptr_t)a[0].u, (float)a[1].f); return 1;
    case 31: *rc = ((int (*)(uintptr_t, float, float))fn)((uintptr_t)a[0].u, (float)a[1].f, (float)a[2].f); return 1;
    case 32: *rc = ((int (*)(uintptr_t, int))fn)((uintptr_t)a[0].u, (int)a[1].s); return 1;
    case 33: *rc = ((int (*)(uintptr_t, int, char *, unsigned int, void *, void *))fn)((uintptr_t)a[0].u, (int)a[1].s, (char *)a[2].p, (unsigned int)a[3].u, (void *)a[4].p, (void *)a[5].p); return 1;
    case 34: *rc = ((int (*)(uintptr_t, int, float))fn)((uintptr_t)a[0].u, (int)a[1].s, (float)a[2].f); return 1;
    case 35: *rc = ((int (*)(uintptr_t, int, int))fn)((uintptr_t)a[0].u, (int)a[1].s, (int)a[2].s); return 1;
    case 36: *rc = ((int (*)(uintptr_t, int, int, int))fn)((uintptr_t)a[0].u, (int)a[1].s, (int)a[2].s, (int)a[3].s); return 1;
    case 37: *rc = ((int (*)(uintptr_t, int, int, uintptr_t))fn)((uintptr_t)a[0].u, (int)a[1].s, (int)a[2].s, (uintptr_t)a[3].u); return 1;
    case 38: *rc = ((int (*)(uintptr_t, int, uintptr_t))fn)((uintptr_t)a[0].u, (int)a[1].s, (uintptr_t)a[2].u); return 1;
    case 39: *rc = ((int (*)(uintptr_t, int, uintptr_t, void *, void *))fn)((uintptr_t)a[0].u, (int)a[1].s, (uintptr_t)a[2].u, (void *)a[3].p, (void *)a[4].p); return 1;
    case 40: *rc = ((int (*)(uintptr_t, int, unsigned int))fn)((uintptr_t)a[0].u, (int)a[1].s, (unsigned int)a[2].u); return 1;
    case 41: *rc = ((int (*)(uintptr_t, int, void *))fn)((uintptr_t)a[0].u, (int)a[1].s, (void *)a[2].p); return 1;
    case 42: *rc = ((int (*)(uintptr_t, int, void *, size_t, char *, unsigned int, void *, void *))fn)((uintptr_t)a[0].u, (int)a[1].s, (void *)a[2].p, (size_t)a[3].u, (char *)a[4].p, (unsigned int)a[5].u, (void *)a[6].p, (void *)a[7].p); return 1;
    case 43: *rc = ((int (*)(uintptr_t, int, void *, unsigned int))fn)((uintptr_t)a[0].u, (int)a[1].s, (void *)a[2].p, (unsigned int)a[3].u); return 1;
    case 44: *rc = ((int (*)(uintptr_t, size_t))fn)((uintptr_t)a[0].u, (size_t)a[1].u); return 1;
    case 45: *rc = ((int (*)(uintptr_t, size_t, uintptr_t, size_t, size_t))fn)((uintptr_t)a[0].u, (size_t)a[1].u, (uintptr_t)a[2].u, (size_t)a[3].u, (size_t)a[4].u); return 1;
    case 46: *rc = ((int (*)(uintptr_t, size_t, unsigned long long, size_t))fn)((uintptr_t)a[0].u, (size_t)a[1].u, (unsigned long long)a[2].u, (size_t)a[3].u); return 1;
    case 47: *rc = ((int (*)(uintptr_t, size_t, void *, size_t))fn)((uintptr_t)a[0].u, (size_t)a[1].u, (void *)a[2].p, (size_t)a[3].u); return 1;
    case 48: *rc = ((int (*)(uintptr_t, size_t, void *, size_t, uintptr_t))fn)((uintptr_t)a[0].u, (size_t)a[1].u, (void *)a[2].p, (size_t)a[3].u, (uintptr_t)a[4].u); return 1;
    case 49: *rc = ((int (*)(uintptr_t, size_t, void *, void *))fn)((uintptr_t)a[0].u, (size_t)a[1].u, (void *)a[2].p, (void *)a[3].p); return 1;
    case 50: *rc = ((int (*)(uintptr_t, uintptr_t))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u); return 1;
    case 51: *rc = ((int (*)(uintptr_t, uintptr_t, uintptr_t))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (uintptr_t)a[2].u); return 1;
    case 52: *rc = ((int (*)(uintptr_t, uintptr_t, unsigned int))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (unsigned int)a[2].u); return 1;
    case 53: *rc = ((int (*)(uintptr_t, uintptr_t, unsigned int, unsigned int))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 54: *rc = ((int (*)(uintptr_t, uintptr_t, void *))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (void *)a[2].p); return 1;
    case 55: *rc = ((int (*)(uintptr_t, uintptr_t, void *, uintptr_t))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (void *)a[2].p, (uintptr_t)a[3].u); return 1;
    case 56: *rc = ((int (*)(uintptr_t, uintptr_t, void *, void *))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (void *)a[2].p, (void *)a[3].p); return 1;
    case 57: *rc = ((int (*)(uintptr_t, uintptr_t, void *, void *, size_t, int))fn)((uintptr_t)a[0].u, (uintptr_t)a[1].u, (void *)a[2].p, (void *)a[3].p, (size_t)a[4].u, (int)a[5].s); return 1;
    case 58: *rc = ((int (*)(uintptr_t, unsigned int))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u); return 1;
    case 59: *rc = ((int (*)(uintptr_t, unsigned int, uintptr_t, unsigned int, unsigned int))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (uintptr_t)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 60: *rc = ((int (*)(uintptr_t, unsigned int, unsigned int, unsigned int))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 61: *rc = ((int (*)(uintptr_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, uintptr_t, void *))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u, (unsigned int)a[5].u, (unsigned int)a[6].u, (unsigned int)a[7].u, (uintptr_t)a[8].u, (void *)a[9].p); return 1;
    case 62: *rc = ((int (*)(uintptr_t, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int, uintptr_t, void *, void *))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u, (unsigned int)a[5].u, (unsigned int)a[6].u, (unsigned int)a[7].u, (uintptr_t)a[8].u, (void *)a[9].p, (void *)a[10].p); return 1;
    case 63: *rc = ((int (*)(uintptr_t, unsigned int, void *, unsigned int))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (void *)a[2].p, (unsigned int)a[3].u); return 1;
    case 64: *rc = ((int (*)(uintptr_t, unsigned int, void *, unsigned int, uintptr_t))fn)((uintptr_t)a[0].u, (unsigned int)a[1].u, (void *)a[2].p, (unsigned int)a[3].u, (uintptr_t)a[4].u); return 1;
    case 65: *rc = ((int (*)(uintptr_t, unsigned long long, size_t, unsigned int))fn)((uintptr_t)a[0].u, (unsigned long long)a[1].u, (size_t)a[2].u, (unsigned int)a[3].u); return 1;
    case 66: *rc = ((int (*)(uintptr_t, unsigned long long, uint32_t, unsigned int))fn)((uintptr_t)a[0].u, (unsigned long long)a[1].u, (uint32_t)a[2].u, (unsigned int)a[3].u); return 1;
    case 67: *rc = ((int (*)(uintptr_t, unsigned long long, uint64_t, unsigned int))fn)((uintptr_t)a[0].u, (unsigned long long)a[1].u, (uint64_t)a[2].u, (unsigned int)a[3].u); return 1;
    case 68: *rc = ((int (*)(uintptr_t, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p); return 1;
    case 69: *rc = ((int (*)(uintptr_t, void *, int))fn)((uintptr_t)a[0].u, (void *)a[1].p, (int)a[2].s); return 1;
    case 70: *rc = ((int (*)(uintptr_t, void *, size_t))fn)((uintptr_t)a[0].u, (void *)a[1].p, (size_t)a[2].u); return 1;
    case 71: *rc = ((int (*)(uintptr_t, void *, size_t, unsigned int))fn)((uintptr_t)a[0].u, (void *)a[1].p, (size_t)a[2].u, (unsigned int)a[3].u); return 1;
    case 72: *rc = ((int (*)(uintptr_t, void *, unsigned int, unsigned int))fn)((uintptr_t)a[0].u, (void *)a[1].p, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 73: *rc = ((int (*)(uintptr_t, void *, unsigned long long, size_t))fn)((uintptr_t)a[0].u, (void *)a[1].p, (unsigned long long)a[2].u, (size_t)a[3].u); return 1;
    case 74: *rc = ((int (*)(uintptr_t, void *, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p); return 1;
    case 75: *rc = ((int (*)(uintptr_t, void *, void *, size_t))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (size_t)a[3].u); return 1;
    case 76: *rc = ((int (*)(uintptr_t, void *, void *, size_t, unsigned int))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (size_t)a[3].u, (unsigned int)a[4].u); return 1;
    case 77: *rc = ((int (*)(uintptr_t, void *, void *, unsigned int))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (unsigned int)a[3].u); return 1;
    case 78: *rc = ((int (*)(uintptr_t, void *, void *, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p); return 1;
    case 79: *rc = ((int (*)(uintptr_t, void *, void *, void *, size_t))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (size_t)a[4].u); return 1;
    case 80: *rc = ((int (*)(uintptr_t, void *, void *, void *, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (void *)a[4].p); return 1;
    case 81: *rc = ((int (*)(uintptr_t, void *, void *, void *, void *, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (void *)a[4].p, (void *)a[5].p); return 1;
    case 82: *rc = ((int (*)(uintptr_t, void *, void *, void *, void *, void *, void *))fn)((uintptr_t)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (void *)a[4].p, (void *)a[5].p, (void *)a[6].p); return 1;
    case 83: *rc = ((int (*)(unsigned int))fn)((unsigned int)a[0].u); return 1;
    case 84: *rc = ((int (*)(unsigned int, uintptr_t))fn)((unsigned int)a[0].u, (uintptr_t)a[1].u); return 1;
    case 85: *rc = ((int (*)(unsigned int, uintptr_t, unsigned int, unsigned int))fn)((unsigned int)a[0].u, (uintptr_t)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 86: *rc = ((int (*)(unsigned int, unsigned char, unsigned int))fn)((unsigned int)a[0].u, (unsigned char)a[1].u, (unsigned int)a[2].u); return 1;
    case 87: *rc = ((int (*)(unsigned int, unsigned int))fn)((unsigned int)a[0].u, (unsigned int)a[1].u); return 1;
    case 88: *rc = ((int (*)(unsigned int, unsigned int, unsigned char, unsigned int, unsigned int))fn)((unsigned int)a[0].u, (unsigned int)a[1].u, (unsigned char)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 89: *rc = ((int (*)(unsigned int, unsigned int, unsigned int))fn)((unsigned int)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u); return 1;
    case 90: *rc = ((int (*)(unsigned int, unsigned int, unsigned int, uintptr_t))fn)((unsigned int)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u, (uintptr_t)a[3].u); return 1;
    case 91: *rc = ((int (*)(unsigned int, unsigned int, unsigned int, unsigned int, unsigned int))fn)((unsigned int)a[0].u, (unsigned int)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 92: *rc = ((int (*)(unsigned int, unsigned int, unsigned short, unsigned int, unsigned int))fn)((unsigned int)a[0].u, (unsigned int)a[1].u, (unsigned short)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 93: *rc = ((int (*)(unsigned int, unsigned short, unsigned int))fn)((unsigned int)a[0].u, (unsigned short)a[1].u, (unsigned int)a[2].u); return 1;
    case 94: *rc = ((int (*)(unsigned int, void *, uintptr_t))fn)((unsigned int)a[0].u, (void *)a[1].p, (uintptr_t)a[2].u); return 1;
    case 95: *rc = ((int (*)(unsigned int, void *, unsigned int))fn)((unsigned int)a[0].u, (void *)a[1].p, (unsigned int)a[2].u); return 1;
    case 96: *rc = ((int (*)(unsigned int, void *, unsigned int, uintptr_t))fn)((unsigned int)a[0].u, (void *)a[1].p, (unsigned int)a[2].u, (uintptr_t)a[3].u); return 1;
    case 97: *rc = ((int (*)(unsigned int, void *, void *, unsigned long long))fn)((unsigned int)a[0].u, (void *)a[1].p, (void *)a[2].p, (unsigned long long)a[3].u); return 1;
    case 98: *rc = ((int (*)(unsigned int, void *, void *, void *))fn)((unsigned int)a[0].u, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p); return 1;
    case 99: *rc = ((int (*)(unsigned long long))fn)((unsigned long long)a[0].u); return 1;
    case 100: *rc = ((int (*)(unsigned long long, int))fn)((unsigned long long)a[0].u, (int)a[1].s); return 1;
    case 101: *rc = ((int (*)(unsigned long long, int, size_t, size_t))fn)((unsigned long long)a[0].u, (int)a[1].s, (size_t)a[2].u, (size_t)a[3].u); return 1;
    case 102: *rc = ((int (*)(unsigned long long, int, size_t, unsigned long long, size_t, size_t, unsigned long long))fn)((unsigned long long)a[0].u, (int)a[1].s, (size_t)a[2].u, (unsigned long long)a[3].u, (size_t)a[4].u, (size_t)a[5].u, (unsigned long long)a[6].u); return 1;
    case 103: *rc = ((int (*)(unsigned long long, int, size_t, unsigned long long, size_t, unsigned long long))fn)((unsigned long long)a[0].u, (int)a[1].s, (size_t)a[2].u, (unsigned long long)a[3].u, (size_t)a[4].u, (unsigned long long)a[5].u); return 1;
    case 104: *rc = ((int (*)(unsigned long long, size_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u); return 1;
    case 105: *rc = ((int (*)(unsigned long long, size_t, int, int))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (int)a[2].s, (int)a[3].s); return 1;
    case 106: *rc = ((int (*)(unsigned long long, size_t, int, uintptr_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (int)a[2].s, (uintptr_t)a[3].u); return 1;
    case 107: *rc = ((int (*)(unsigned long long, size_t, size_t, size_t, void *))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (size_t)a[2].u, (size_t)a[3].u, (void *)a[4].p); return 1;
    case 108: *rc = ((int (*)(unsigned long long, size_t, size_t, unsigned long long, unsigned long long))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (size_t)a[2].u, (unsigned long long)a[3].u, (unsigned long long)a[4].u); return 1;
    case 109: *rc = ((int (*)(unsigned long long, size_t, unsigned char, size_t, size_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned char)a[2].u, (size_t)a[3].u, (size_t)a[4].u); return 1;
    case 110: *rc = ((int (*)(unsigned long long, size_t, unsigned char, size_t, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned char)a[2].u, (size_t)a[3].u, (size_t)a[4].u, (uintptr_t)a[5].u); return 1;
    case 111: *rc = ((int (*)(unsigned long long, size_t, unsigned int, size_t, size_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned int)a[2].u, (size_t)a[3].u, (size_t)a[4].u); return 1;
    case 112: *rc = ((int (*)(unsigned long long, size_t, unsigned int, size_t, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned int)a[2].u, (size_t)a[3].u, (size_t)a[4].u, (uintptr_t)a[5].u); return 1;
    case 113: *rc = ((int (*)(unsigned long long, size_t, unsigned long long, size_t, size_t, unsigned long long))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned long long)a[2].u, (size_t)a[3].u, (size_t)a[4].u, (unsigned long long)a[5].u); return 1;
    case 114: *rc = ((int (*)(unsigned long long, size_t, unsigned long long, size_t, unsigned long long))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned long long)a[2].u, (size_t)a[3].u, (unsigned long long)a[4].u); return 1;
    case 115: *rc = ((int (*)(unsigned long long, size_t, unsigned short, size_t, size_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned short)a[2].u, (size_t)a[3].u, (size_t)a[4].u); return 1;
    case 116: *rc = ((int (*)(unsigned long long, size_t, unsigned short, size_t, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (unsigned short)a[2].u, (size_t)a[3].u, (size_t)a[4].u, (uintptr_t)a[5].u); return 1;
    case 117: *rc = ((int (*)(unsigned long long, size_t, void *, size_t))fn)((unsigned long long)a[0].u, (size_t)a[1].u, (void *)a[2].p, (size_t)a[3].u); return 1;
    case 118: *rc = ((int (*)(unsigned long long, uintptr_t))fn)((unsigned long long)a[0].u, (uintptr_t)a[1].u); return 1;
    case 119: *rc = ((int (*)(unsigned long long, uintptr_t, size_t, size_t))fn)((unsigned long long)a[0].u, (uintptr_t)a[1].u, (size_t)a[2].u, (size_t)a[3].u); return 1;
    case 120: *rc = ((int (*)(unsigned long long, uintptr_t, unsigned long long, uintptr_t, size_t))fn)((unsigned long long)a[0].u, (uintptr_t)a[1].u, (unsigned long long)a[2].u, (uintptr_t)a[3].u, (size_t)a[4].u); return 1;
    case 121: *rc = ((int (*)(unsigned long long, uintptr_t, unsigned long long, uintptr_t, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (uintptr_t)a[1].u, (unsigned long long)a[2].u, (uintptr_t)a[3].u, (size_t)a[4].u, (uintptr_t)a[5].u); return 1;
    case 122: *rc = ((int (*)(unsigned long long, unsigned char, size_t))fn)((unsigned long long)a[0].u, (unsigned char)a[1].u, (size_t)a[2].u); return 1;
    case 123: *rc = ((int (*)(unsigned long long, unsigned char, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (unsigned char)a[1].u, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 124: *rc = ((int (*)(unsigned long long, unsigned int, size_t))fn)((unsigned long long)a[0].u, (unsigned int)a[1].u, (size_t)a[2].u); return 1;
    case 125: *rc = ((int (*)(unsigned long long, unsigned int, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (unsigned int)a[1].u, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 126: *rc = ((int (*)(unsigned long long, unsigned long long, size_t))fn)((unsigned long long)a[0].u, (unsigned long long)a[1].u, (size_t)a[2].u); return 1;
    case 127: *rc = ((int (*)(unsigned long long, unsigned long long, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (unsigned long long)a[1].u, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 128: *rc = ((int (*)(unsigned long long, unsigned long long, size_t, void *, uintptr_t))fn)((unsigned long long)a[0].u, (unsigned long long)a[1].u, (size_t)a[2].u, (void *)a[3].p, (uintptr_t)a[4].u); return 1;
    case 129: *rc = ((int (*)(unsigned long long, unsigned short, size_t))fn)((unsigned long long)a[0].u, (unsigned short)a[1].u, (size_t)a[2].u); return 1;
    case 130: *rc = ((int (*)(unsigned long long, unsigned short, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (unsigned short)a[1].u, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 131: *rc = ((int (*)(unsigned long long, void *, size_t))fn)((unsigned long long)a[0].u, (void *)a[1].p, (size_t)a[2].u); return 1;
    case 132: *rc = ((int (*)(unsigned long long, void *, size_t, uintptr_t))fn)((unsigned long long)a[0].u, (void *)a[1].p, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 133: *rc = ((int (*)(void *))fn)((void *)a[0].p); return 1;
    case 134: *rc = ((int (*)(void *, char *))fn)((void *)a[0].p, (char *)a[1].p); return 1;
    case 135: *rc = ((int (*)(void *, char *, unsigned int))fn)((void *)a[0].p, (char *)a[1].p, (unsigned int)a[2].u); return 1;
    case 136: *rc = ((int (*)(void *, char *, void *, unsigned int))fn)((void *)a[0].p, (char *)a[1].p, (void *)a[2].p, (unsigned int)a[3].u); return 1;
    case 137: *rc = ((int (*)(void *, char *, void *, void *, unsigned int, void *, void *, unsigned int))fn)((void *)a[0].p, (char *)a[1].p, (void *)a[2].p, (void *)a[3].p, (unsigned int)a[4].u, (void *)a[5].p, (void *)a[6].p, (unsigned int)a[7].u); return 1;
    case 138: *rc = ((int (*)(void *, int))fn)((void *)a[0].p, (int)a[1].s); return 1;
    case 139: *rc = ((int (*)(void *, int, int))fn)((void *)a[0].p, (int)a[1].s, (int)a[2].s); return 1;
    case 140: *rc = ((int (*)(void *, int, int, int))fn)((void *)a[0].p, (int)a[1].s, (int)a[2].s, (int)a[3].s); return 1;
    case 141: *rc = ((int (*)(void *, int, uint32_t, void *, void *, void *, int, int, uint32_t, uint32_t, void *, int, int, int, int, int))fn)((void *)a[0].p, (int)a[1].s, (uint32_t)a[2].u, (void *)a[3].p, (void *)a[4].p, (void *)a[5].p, (int)a[6].s, (int)a[7].s, (uint32_t)a[8].u, (uint32_t)a[9].u, (void *)a[10].p, (int)a[11].s, (int)a[12].s, (int)a[13].s, (int)a[14].s, (int)a[15].s); return 1;
    case 142: *rc = ((int (*)(void *, int, uint32_t, void *, void *, void *, void *, void *, int, int, int, int))fn)((void *)a[0].p, (int)a[1].s, (uint32_t)a[2].u, (void *)a[3].p, (void *)a[4].p, (void *)a[5].p, (void *)a[6].p, (void *)a[7].p, (int)a[8].s, (int)a[9].s, (int)a[10].s, (int)a[11].s); return 1;
    case 143: *rc = ((int (*)(void *, int, uint32_t, void *, void *, void *, void *, void *, uint32_t, uint32_t, void *, int, int, int, int))fn)((void *)a[0].p, (int)a[1].s, (uint32_t)a[2].u, (void *)a[3].p, (void *)a[4].p, (void *)a[5].p, (void *)a[6].p, (void *)a[7].p, (uint32_t)a[8].u, (uint32_t)a[9].u, (void *)a[10].p, (int)a[11].s, (int)a[12].s, (int)a[13].s, (int)a[14].s); return 1;
    case 144: *rc = ((int (*)(void *, int, uintptr_t))fn)((void *)a[0].p, (int)a[1].s, (uintptr_t)a[2].u); return 1;
    case 145: *rc = ((int (*)(void *, int, uintptr_t, int))fn)((void *)a[0].p, (int)a[1].s, (uintptr_t)a[2].u, (int)a[3].s); return 1;
    case 146: *rc = ((int (*)(void *, int, unsigned int, int))fn)((void *)a[0].p, (int)a[1].s, (unsigned int)a[2].u, (int)a[3].s); return 1;
    case 147: *rc = ((int (*)(void *, int, unsigned long long))fn)((void *)a[0].p, (int)a[1].s, (unsigned long long)a[2].u); return 1;
    case 148: *rc = ((int (*)(void *, int, void *))fn)((void *)a[0].p, (int)a[1].s, (void *)a[2].p); return 1;
    case 149: *rc = ((int (*)(void *, size_t))fn)((void *)a[0].p, (size_t)a[1].u); return 1;
    case 150: *rc = ((int (*)(void *, size_t, int, unsigned long long, size_t))fn)((void *)a[0].p, (size_t)a[1].u, (int)a[2].s, (unsigned long long)a[3].u, (size_t)a[4].u); return 1;
    case 151: *rc = ((int (*)(void *, size_t, size_t, unsigned long long, unsigned long long))fn)((void *)a[0].p, (size_t)a[1].u, (size_t)a[2].u, (unsigned long long)a[3].u, (unsigned long long)a[4].u); return 1;
    case 152: *rc = ((int (*)(void *, size_t, uintptr_t))fn)((void *)a[0].p, (size_t)a[1].u, (uintptr_t)a[2].u); return 1;
    case 153: *rc = ((int (*)(void *, size_t, uintptr_t, uintptr_t))fn)((void *)a[0].p, (size_t)a[1].u, (uintptr_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 154: *rc = ((int (*)(void *, size_t, unsigned int))fn)((void *)a[0].p, (size_t)a[1].u, (unsigned int)a[2].u); return 1;
    case 155: *rc = ((int (*)(void *, size_t, unsigned int, void *, uintptr_t))fn)((void *)a[0].p, (size_t)a[1].u, (unsigned int)a[2].u, (void *)a[3].p, (uintptr_t)a[4].u); return 1;
    case 156: *rc = ((int (*)(void *, size_t, void *, unsigned long long))fn)((void *)a[0].p, (size_t)a[1].u, (void *)a[2].p, (unsigned long long)a[3].u); return 1;
    case 157: *rc = ((int (*)(void *, uint32_t))fn)((void *)a[0].p, (uint32_t)a[1].u); return 1;
    case 158: *rc = ((int (*)(void *, uint32_t, int))fn)((void *)a[0].p, (uint32_t)a[1].u, (int)a[2].s); return 1;
    case 159: *rc = ((int (*)(void *, uint32_t, unsigned int))fn)((void *)a[0].p, (uint32_t)a[1].u, (unsigned int)a[2].u); return 1;
    case 160: *rc = ((int (*)(void *, uint32_t, void *))fn)((void *)a[0].p, (uint32_t)a[1].u, (void *)a[2].p); return 1;
    case 161: *rc = ((int (*)(void *, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u); return 1;
    case 162: *rc = ((int (*)(void *, uintptr_t, char *))fn)((void *)a[0].p, (uintptr_t)a[1].u, (char *)a[2].p); return 1;
    case 163: *rc = ((int (*)(void *, uintptr_t, int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s); return 1;
    case 164: *rc = ((int (*)(void *, uintptr_t, int, int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s, (int)a[3].s); return 1;
    case 165: *rc = ((int (*)(void *, uintptr_t, int, size_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s, (size_t)a[3].u); return 1;
    case 166: *rc = ((int (*)(void *, uintptr_t, int, size_t, unsigned int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s, (size_t)a[3].u, (unsigned int)a[4].u); return 1;
    case 167: *rc = ((int (*)(void *, uintptr_t, int, unsigned int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s, (unsigned int)a[3].u); return 1;
    case 168: *rc = ((int (*)(void *, uintptr_t, int, unsigned long long))fn)((void *)a[0].p, (uintptr_t)a[1].u, (int)a[2].s, (unsigned long long)a[3].u); return 1;
    case 169: *rc = ((int (*)(void *, uintptr_t, size_t, size_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (size_t)a[2].u, (size_t)a[3].u); return 1;
    case 170: *rc = ((int (*)(void *, uintptr_t, size_t, size_t, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (size_t)a[2].u, (size_t)a[3].u, (uintptr_t)a[4].u); return 1;
    case 171: *rc = ((int (*)(void *, uintptr_t, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (uintptr_t)a[2].u); return 1;
    case 172: *rc = ((int (*)(void *, uintptr_t, uintptr_t, unsigned int, unsigned int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (uintptr_t)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 173: *rc = ((int (*)(void *, uintptr_t, unsigned int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned int)a[2].u); return 1;
    case 174: *rc = ((int (*)(void *, uintptr_t, unsigned int, int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned int)a[2].u, (int)a[3].s); return 1;
    case 175: *rc = ((int (*)(void *, uintptr_t, unsigned int, unsigned int))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 176: *rc = ((int (*)(void *, uintptr_t, unsigned int, unsigned int, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u, (uintptr_t)a[4].u); return 1;
    case 177: *rc = ((int (*)(void *, uintptr_t, unsigned long long))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned long long)a[2].u); return 1;
    case 178: *rc = ((int (*)(void *, uintptr_t, unsigned long long, size_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (unsigned long long)a[2].u, (size_t)a[3].u); return 1;
    case 179: *rc = ((int (*)(void *, uintptr_t, void *))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p); return 1;
    case 180: *rc = ((int (*)(void *, uintptr_t, void *, char *, size_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (char *)a[3].p, (size_t)a[4].u); return 1;
    case 181: *rc = ((int (*)(void *, uintptr_t, void *, size_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (size_t)a[3].u); return 1;
    case 182: *rc = ((int (*)(void *, uintptr_t, void *, size_t, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (size_t)a[3].u, (uintptr_t)a[4].u); return 1;
    case 183: *rc = ((int (*)(void *, uintptr_t, void *, size_t, unsigned long long))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (size_t)a[3].u, (unsigned long long)a[4].u); return 1;
    case 184: *rc = ((int (*)(void *, uintptr_t, void *, size_t, void *))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (size_t)a[3].u, (void *)a[4].p); return 1;
    case 185: *rc = ((int (*)(void *, uintptr_t, void *, size_t, void *, uintptr_t))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (size_t)a[3].u, (void *)a[4].p, (uintptr_t)a[5].u); return 1;
    case 186: *rc = ((int (*)(void *, uintptr_t, void *, void *))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (void *)a[3].p); return 1;
    case 187: *rc = ((int (*)(void *, uintptr_t, void *, void *, size_t, void *))fn)((void *)a[0].p, (uintptr_t)a[1].u, (void *)a[2].p, (void *)a[3].p, (size_t)a[4].u, (void *)a[5].p); return 1;
    case 188: *rc = ((int (*)(void *, unsigned int))fn)((void *)a[0].p, (unsigned int)a[1].u); return 1;
    case 189: *rc = ((int (*)(void *, unsigned int, int))fn)((void *)a[0].p, (unsigned int)a[1].u, (int)a[2].s); return 1;
    case 190: *rc = ((int (*)(void *, unsigned int, int, uint32_t, void *))fn)((void *)a[0].p, (unsigned int)a[1].u, (int)a[2].s, (uint32_t)a[3].u, (void *)a[4].p); return 1;
    case 191: *rc = ((int (*)(void *, unsigned int, uintptr_t))fn)((void *)a[0].p, (unsigned int)a[1].u, (uintptr_t)a[2].u); return 1;
    case 192: *rc = ((int (*)(void *, unsigned int, unsigned int))fn)((void *)a[0].p, (unsigned int)a[1].u, (unsigned int)a[2].u); return 1;
    case 193: *rc = ((int (*)(void *, unsigned int, unsigned int, uintptr_t))fn)((void *)a[0].p, (unsigned int)a[1].u, (unsigned int)a[2].u, (uintptr_t)a[3].u); return 1;
    case 194: *rc = ((int (*)(void *, unsigned int, unsigned int, unsigned int))fn)((void *)a[0].p, (unsigned int)a[1].u, (unsigned int)a[2].u, (unsigned int)a[3].u); return 1;
    case 195: *rc = ((int (*)(void *, unsigned int, void *, void *, unsigned int, void *))fn)((void *)a[0].p, (unsigned int)a[1].u, (void *)a[2].p, (void *)a[3].p, (unsigned int)a[4].u, (void *)a[5].p); return 1;
    case 196: *rc = ((int (*)(void *, unsigned long long))fn)((void *)a[0].p, (unsigned long long)a[1].u); return 1;
    case 197: *rc = ((int (*)(void *, unsigned long long, int, unsigned long long))fn)((void *)a[0].p, (unsigned long long)a[1].u, (int)a[2].s, (unsigned long long)a[3].u); return 1;
    case 198: *rc = ((int (*)(void *, unsigned long long, size_t))fn)((void *)a[0].p, (unsigned long long)a[1].u, (size_t)a[2].u); return 1;
    case 199: *rc = ((int (*)(void *, unsigned long long, size_t, int, unsigned long long))fn)((void *)a[0].p, (unsigned long long)a[1].u, (size_t)a[2].u, (int)a[3].s, (unsigned long long)a[4].u); return 1;
    case 200: *rc = ((int (*)(void *, unsigned long long, size_t, uintptr_t))fn)((void *)a[0].p, (unsigned long long)a[1].u, (size_t)a[2].u, (uintptr_t)a[3].u); return 1;
    case 201: *rc = ((int (*)(void *, unsigned long long, uintptr_t))fn)((void *)a[0].p, (unsigned long long)a[1].u, (uintptr_t)a[2].u); return 1;
    case 202: *rc = ((int (*)(void *, void *))fn)((void *)a[0].p, (void *)a[1].p); return 1;
    case 203: *rc = ((int (*)(void *, void *, int))fn)((void *)a[0].p, (void *)a[1].p, (int)a[2].s); return 1;
    case 204: *rc = ((int (*)(void *, void *, int, int))fn)((void *)a[0].p, (void *)a[1].p, (int)a[2].s, (int)a[3].s); return 1;
    case 205: *rc = ((int (*)(void *, void *, int, unsigned int, int))fn)((void *)a[0].p, (void *)a[1].p, (int)a[2].s, (unsigned int)a[3].u, (int)a[4].s); return 1;
    case 206: *rc = ((int (*)(void *, void *, int, unsigned long long))fn)((void *)a[0].p, (void *)a[1].p, (int)a[2].s, (unsigned long long)a[3].u); return 1;
    case 207: *rc = ((int (*)(void *, void *, size_t, size_t, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (size_t)a[2].u, (size_t)a[3].u, (unsigned int)a[4].u); return 1;
    case 208: *rc = ((int (*)(void *, void *, size_t, unsigned long long, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (size_t)a[2].u, (unsigned long long)a[3].u, (uintptr_t)a[4].u); return 1;
    case 209: *rc = ((int (*)(void *, void *, size_t, void *, void *, size_t, unsigned long long, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (size_t)a[2].u, (void *)a[3].p, (void *)a[4].p, (size_t)a[5].u, (unsigned long long)a[6].u, (uintptr_t)a[7].u); return 1;
    case 210: *rc = ((int (*)(void *, void *, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (uintptr_t)a[2].u); return 1;
    case 211: *rc = ((int (*)(void *, void *, uintptr_t, char *))fn)((void *)a[0].p, (void *)a[1].p, (uintptr_t)a[2].u, (char *)a[3].p); return 1;
    case 212: *rc = ((int (*)(void *, void *, uintptr_t, void *, size_t, int))fn)((void *)a[0].p, (void *)a[1].p, (uintptr_t)a[2].u, (void *)a[3].p, (size_t)a[4].u, (int)a[5].s); return 1;
    case 213: *rc = ((int (*)(void *, void *, uintptr_t, void *, size_t, int, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (uintptr_t)a[2].u, (void *)a[3].p, (size_t)a[4].u, (int)a[5].s, (unsigned int)a[6].u); return 1;
    case 214: *rc = ((int (*)(void *, void *, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u); return 1;
    case 215: *rc = ((int (*)(void *, void *, unsigned int, int))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u, (int)a[3].s); return 1;
    case 216: *rc = ((int (*)(void *, void *, unsigned int, int, int))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u, (int)a[3].s, (int)a[4].s); return 1;
    case 217: *rc = ((int (*)(void *, void *, unsigned int, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u, (uintptr_t)a[3].u); return 1;
    case 218: *rc = ((int (*)(void *, void *, unsigned int, unsigned int, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 219: *rc = ((int (*)(void *, void *, unsigned int, void *, void *))fn)((void *)a[0].p, (void *)a[1].p, (unsigned int)a[2].u, (void *)a[3].p, (void *)a[4].p); return 1;
    case 220: *rc = ((int (*)(void *, void *, unsigned long long))fn)((void *)a[0].p, (void *)a[1].p, (unsigned long long)a[2].u); return 1;
    case 221: *rc = ((int (*)(void *, void *, void *))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p); return 1;
    case 222: *rc = ((int (*)(void *, void *, void *, size_t, unsigned long long, size_t))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (size_t)a[3].u, (unsigned long long)a[4].u, (size_t)a[5].u); return 1;
    case 223: *rc = ((int (*)(void *, void *, void *, size_t, void *, void *, size_t, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (size_t)a[3].u, (void *)a[4].p, (void *)a[5].p, (size_t)a[6].u, (uintptr_t)a[7].u); return 1;
    case 224: *rc = ((int (*)(void *, void *, void *, size_t, void *, void *, size_t, void *, uintptr_t))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (size_t)a[3].u, (void *)a[4].p, (void *)a[5].p, (size_t)a[6].u, (void *)a[7].p, (uintptr_t)a[8].u); return 1;
    case 225: *rc = ((int (*)(void *, void *, void *, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (unsigned int)a[3].u); return 1;
    case 226: *rc = ((int (*)(void *, void *, void *, unsigned int, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (unsigned int)a[3].u, (unsigned int)a[4].u); return 1;
    case 227: *rc = ((int (*)(void *, void *, void *, void *))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p); return 1;
    case 228: *rc = ((int (*)(void *, void *, void *, void *, unsigned int, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (unsigned int)a[4].u, (unsigned int)a[5].u); return 1;
    case 229: *rc = ((int (*)(void *, void *, void *, void *, unsigned int, void *, void *, unsigned int))fn)((void *)a[0].p, (void *)a[1].p, (void *)a[2].p, (void *)a[3].p, (unsigned int)a[4].u, (void *)a[5].p, (void *)a[6].p, (unsigned int)a[7].u); return 1;
    default: return 0;
    }
}
