// A project's lookup wrapper, called from both sides of a build option (shaped like the loaders that
// keep one `load(name, &fn, version)` helper for every entry point).
#include <cuda.h>
#include <cudaTypedefs.h>

template <typename F>
static bool load(const char *name, F *fn, int version) {
    CUdriverProcAddressQueryResult q;
    CUresult r = cuGetProcAddress(name, reinterpret_cast<void **>(fn), version, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;
}

static PFN_cuMemAlloc_v3020 p_alloc;
static PFN_cuCtxCreate_v3020 p_ctx;

bool init() {
#ifdef WITH_CONTEXTS
    if (!load("cuCtxCreate", &p_ctx, 12050)) return false;   // the 12.5 ABI into a 3.2 pointer
#endif
    return load("cuMemAlloc", &p_alloc, 3020);
}
