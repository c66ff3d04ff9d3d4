// Hand-written function types and the deprecated runtime entry point.
#include <cuda.h>
#include <cuda_runtime.h>

typedef CUresult (*my_get_uuid_t)(CUuuid *, CUdevice);
static my_get_uuid_t get_uuid;
static CUresult (*encode_tiled)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,
                                const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
static decltype(&cuCtxGetCurrent) get_current;

void load() {
  CUdriverProcAddressQueryResult q;
  cudaDriverEntryPointQueryResult rq;
  CUresult r = cuGetProcAddress("cuDeviceGetUuid", (void **)&get_uuid, 11040, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // (clang: the hand-written type is the ABI pin 11040 binds)
  r = cuGetProcAddress("cuTensorMapEncodeTiled", (void **)&encode_tiled, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // (clang: the hand-written type is the ABI pin 12000 binds)
  r = cuGetProcAddress("cuCtxGetCurrent", (void **)&get_current, 4000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE004
  cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", (void **)&encode_tiled, cudaEnableDefault, &rq); // expect: CE004 CE005
  check(r, q); check(e, rq);
}

__global__ void k(int *p) { p[0] = 1; }
void go(int *p) { k<<<1, 1>>>(p); }
