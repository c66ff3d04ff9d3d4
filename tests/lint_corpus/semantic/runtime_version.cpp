// cudaGetDriverEntryPoint asks at the version of the runtime the program runs with: any 13.x release for code built
// with 13.0 headers (a newer libcudart.so.13 loads in place of the one it was built with). A typedef older than the
// newest ABI such a runtime binds is the wrong pair: an error where the signatures differ, a warning where not.
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

PFN_cuCtxCreate_v3020 ctx_create;
PFN_cuDeviceGetUuid_v9020 get_uuid;
PFN_cuMemAlloc_v3020 mem_alloc;

int load() {
  cudaDriverEntryPointQueryResult q;
  if (cudaGetDriverEntryPoint("cuCtxCreate", (void**)&ctx_create, cudaEnableLegacyStream, &q) || q) return 1; // expect: CE002/error expect: CE005
  if (cudaGetDriverEntryPoint("cuDeviceGetUuid", (void**)&get_uuid, cudaEnableLegacyStream, &q) || q) return 1; // expect: CE002/warning expect: CE005
  if (cudaGetDriverEntryPoint("cuMemAlloc", (void**)&mem_alloc, cudaEnableLegacyStream, &q) || q) return 1; // expect: CE005
  return 0;
}
// cuCtxCreate's newest ABI (cuCtxCreate_v4, 12050, a CUctxCreateParams argument) is another signature than 3020's;
// cuDeviceGetUuid_v2 (11040) has the 9020 one's; cuMemAlloc has no ABI after 3020.
