// A loader whose pointers have hand-written function types (the way many older loaders were written).
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

typedef CUresult (*my_free_t)(CUdeviceptr);

struct DriverTable {
  CUresult (CUDAAPI *memGetInfo)(size_t *, size_t *);
};

static CUresult (*p_alloc)(CUdeviceptr *, size_t) = nullptr;
static my_free_t p_free;
static CUresult (*p_alloc_small)(CUdeviceptr *, unsigned int);

int load(DriverTable *t) {
  cudaDriverEntryPointQueryResult q;
  CUdriverProcAddressQueryResult dq;
  void *raw = nullptr;
  if (cudaGetDriverEntryPoint("cuMemAlloc", (void **)&p_alloc, cudaEnableLegacyStream, &q) || q) return 0;
  if (cudaGetDriverEntryPoint("cuMemFree", (void **)&p_free, cudaEnableLegacyStream, &q) || q) return 0;
  if (cudaGetDriverEntryPoint("cuMemGetInfo", (void **)&t->memGetInfo, cudaEnableLegacyStream, &q) || q) return 0;
  if (cudaGetDriverEntryPoint("cuMemAlloc", (void **)&p_alloc_small, cudaEnableLegacyStream, &q) || q) return 0;
  if (cuGetProcAddress("cuCtxSynchronize", &raw, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &dq) || dq) return 0;
  CUresult r = ((CUresult (*)(void))raw)();
  CUdeviceptr d = 0;
  size_t free_b = 0, total_b = 0;
  if (r || p_alloc(&d, 1 << 20) || t->memGetInfo(&free_b, &total_b)) return 0;
  return p_free(d) == CUDA_SUCCESS && p_alloc_small != nullptr;
}
