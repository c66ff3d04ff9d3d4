// A loader with a dozen faults a fix can repair, and one it cannot.
#include <cuda.h>
#include <cudaTypedefs.h>

static PFN_cuMemAlloc_v3020 p_alloc;
static PFN_cuCtxCreate_v3020 p_ctx;
static PFN_cuMemFree_v3020 p_free;
static PFN_cuMemGetInfo_v3020 p_info;
static PFN_cuStreamSynchronize_v2000 p_sync;
static PFN_cuMemcpyAsync_v4000 p_copy;
static PFN_cuLaunchKernel_v4000 p_launch;
static PFN_cuMemsetD8_v3020 p_memset;
static PFN_cuModuleGetGlobal_v3020 p_global;
static PFN_cuMemHostAlloc_v2020 p_hostalloc;
static PFN_cuCtxDestroy_v4000 p_destroy;
static PFN_cuMemAllocPitch_v3020 p_pitch;
static PFN_cuMemcpyHtoD_v3020 p_htod;

static int check(CUresult r, CUdriverProcAddressQueryResult q) { return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS; }

int load(void) {
  CUdriverProcAddressQueryResult q;
  int ok = 1;
  ok &= check(cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, 12040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuCtxCreate", (void **)&p_ctx, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuMemFree_v2", (void **)&p_free, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuMemGetInfo", (void **)&p_info, 12020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuStreamSynchronize", (void **)&p_sync, 2000, CU_GET_PROC_ADDRESS_DEFAULT, &q), q);
  ok &= check(cuGetProcAddress("cuMemcpyAsync", (void **)&p_copy, 4000, CU_GET_PROC_ADDRESS_DEFAULT, &q), q);
  ok &= check(cuGetProcAddress("cuLaunchKernel", (void **)&p_launch, 12060, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("CuMemsetD8", (void **)&p_memset, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuModuleGetGlobal", (void **)&p_global, 12080, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuMemHostAlloc", (void **)&p_hostalloc, 1000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuCtxDestroy_v2", (void **)&p_destroy, 4000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuMemAllocPitch", (void **)&p_pitch, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  ok &= check(cuGetProcAddress("cuMemcpyHtoD", (void **)&p_htod, 12010, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q), q);
  cuGetProcAddress("cuMemAlloc", (void **)&p_alloc, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  return ok;
}
