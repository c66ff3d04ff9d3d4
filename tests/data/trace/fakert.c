/* A stand-in for libcudart in tests/test_trace.py: cudaGetDriverEntryPointByVersion forwards to the
 * driver's cuGetProcAddress_v2 (found with dlsym, as the real runtime does), and the first call
 * resolves a small table of the runtime's own first (with the start-up probe), as libcudart does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef int (*gpa2_t)(const char *, void **, int, uint64_t, int *);
static gpa2_t gpa2;

static int init(void) {
    if (gpa2) return 0;
    const char *path = getenv("FAKERT_DRIVER");
    void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
    gpa2 = h ? (gpa2_t)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa2) return 35; /* cudaErrorInsufficientDriver */
    void *p; int st;
    gpa2("", &p, 0, 0, &st);                         /* the probe */
    gpa2("cuMemAlloc", &p, 3020, 0, &st);            /* the runtime's own table, both modes */
    gpa2("cuMemcpyHtoD", &p, 3020, 0, &st);
    gpa2("cuMemcpy", &p, 7000, 2, &st);
    return 0;
}

__attribute__((visibility("default")))
int cudaGetDriverEntryPointByVersion(const char *symbol, void **pfn, unsigned int version, unsigned long long flags,
                                     int *status) {
    int rc = init();
    if (rc) return rc;
    int st = -1;
    rc = gpa2(symbol, pfn, (int)version, flags, &st);
    if (status) *status = st;
    return rc ? 1 : 0;
}
