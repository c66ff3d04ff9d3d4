// Both sides of a toolkit test (shaped like loaders that moved to cuGetProcAddress's 12.0 signature).
#include <cuda.h>
#include <cudaTypedefs.h>

static PFN_cuMemFree_v3020 p_free;

int load_free() {
#if CUDA_VERSION >= 12000
    CUdriverProcAddressQueryResult q;
    CUresult r = cuGetProcAddress("cuMemFree", (void **)&p_free, 3020, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return -1;
#else
    // 11.x: the pointer is declared for 3.2 but the request asks for 2.0's cuMemFree (32-bit pointers)
    CUresult r = cuGetProcAddress("cuMemFree", (void **)&p_free, 2000, CU_GET_PROC_ADDRESS_DEFAULT);
    if (r != CUDA_SUCCESS) return -1;
#endif
    return 0;
}
