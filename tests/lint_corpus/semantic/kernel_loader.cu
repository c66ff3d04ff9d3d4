// A CUDA source: kernels, a launch, and a loader (parsed host side in clang's CUDA mode).
#include <cudaTypedefs.h>

__device__ __forceinline__ int lane() { return 0; }
__global__ void __launch_bounds__(256) scale(float* x, float a) { x[lane()] *= a; }

static PFN_cuLaunchKernel_v4000 launch = nullptr;

int load(float* x) {
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuLaunchKernel", (void**)&launch, 7000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
  if (cuGetProcAddress("cuLaunchKernel", (void**)&launch, 4000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q) || q) return 1; // expect: CE002 CE008 CE009
  scale<<<1, 32>>>(x, 2.0f);
  return 0;
}
// Silent: 7000 in legacy mode binds the legacy 4000 ABI, the pointer's. The per-thread request into the legacy
// typedef is an error (and 4000 has no per-thread ABI).
