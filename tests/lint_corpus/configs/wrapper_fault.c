/* A lookup helper with a fault of its own (no query result), called on both sides of a build option. */
#include <cuda.h>
#include <cudaTypedefs.h>
static CUresult load(const char *name, void **fn, int version) {
    return cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_DEFAULT, NULL);
}
static PFN_cuMemAlloc_v3020 p_alloc;
static PFN_cuMemFree_v3020 p_free;
int init(void) {
    if (load("cuMemAlloc", (void **)&p_alloc, 3020)) return -1;
#ifdef WITH_FREE
    if (load("cuMemFree", (void **)&p_free, 2000)) return -1;
#endif
    return 0;
}
