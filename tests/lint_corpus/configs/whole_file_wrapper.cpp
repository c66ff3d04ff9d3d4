// A whole file under a build macro whose requests all go through its own lookup wrapper, which calls the
// getter through a pointer taken with dlsym in a nested branch (shaped like warp's cuda_util.cpp): the
// wrapper is known only in the configuration that enters the file, and so are the branches that call it.
#if WITH_CUDA
#include <cudaTypedefs.h>
#include <dlfcn.h>

static PFN_cuGetProcAddress_v12000 pfn_get;

static bool init_getter(void* h) {
#if defined(__linux__)
    pfn_get = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
#endif
    return pfn_get != nullptr;
}

static bool load(const char* name, void** fn, int version) {
    CUdriverProcAddressQueryResult q;
    CUresult r = pfn_get(name, fn, version, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;
}

static PFN_cuCtxCreate_v3020 p_ctx;
static PFN_cuMemAlloc_v3020 p_alloc;

bool init(void* h) {
    if (!init_getter(h)) return false;
    if (!load("cuCtxCreate", (void**)&p_ctx, 12050)) return false;   // the 12.5 ABI into a 3.2 pointer
    return load("cuMemAlloc", (void**)&p_alloc, 3020);
}
#endif
