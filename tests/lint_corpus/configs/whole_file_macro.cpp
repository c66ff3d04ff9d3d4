// A driver shim compiled only in the CUDA build (shaped like the USE_CUDA-guarded loaders of ML
// frameworks): with the default flags the preprocessor leaves nothing of it.
#include <cuda.h>
#include <cudaTypedefs.h>

#if defined(USE_CUDA)
namespace shim {

static PFN_cuMemAlloc_v3020 p_cuMemAlloc = nullptr;
static PFN_cuCtxCreate_v3020 p_cuCtxCreate = nullptr;

bool load() {
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress("cuMemAlloc", reinterpret_cast<void **>(&p_cuMemAlloc), 3020,
                         CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS)
        return false;
    // the pointer is the 3.2 ABI, the request asks for 12.5's (cuCtxCreate_v4): a wrong ABI is bound
    if (cuGetProcAddress("cuCtxCreate", reinterpret_cast<void **>(&p_cuCtxCreate), 12050,
                         CU_GET_PROC_ADDRESS_DEFAULT, &q) != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS)
        return false;
    return p_cuMemAlloc != nullptr && p_cuCtxCreate != nullptr;
}

}  // namespace shim
#endif  // USE_CUDA
