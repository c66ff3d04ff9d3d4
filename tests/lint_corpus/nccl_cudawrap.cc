// Shape of a communication library's driver wrapper: PFN pointers declared by a macro, the getter
// bootstrapped with dlsym, and a LOAD_SYM macro with one definition per runtime version branch.
#include <dlfcn.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#define DECLARE_CUDA_PFN(symbol, version) PFN_##symbol##_v##version pfn_##symbol = nullptr

DECLARE_CUDA_PFN(cuDeviceGet, 2000);
DECLARE_CUDA_PFN(cuCtxCreate, 3020);
DECLARE_CUDA_PFN(cuMemGetHandleForAddressRange, 11070);
DECLARE_CUDA_PFN(cuLaunchKernel, 4000);
DECLARE_CUDA_PFN(cuGetProcAddress, 11030);
DECLARE_CUDA_PFN(cuDriverGetVersion, 2020);
static PFN_cuGetProcAddress_v12000 pfn_cuGetProcAddress_v2 = nullptr;

static void* cudaLib;

static int bootstrap() {
  cudaLib = dlopen("libcuda.so.1", RTLD_NOW);
  pfn_cuGetProcAddress = (PFN_cuGetProcAddress_v11030)dlsym(cudaLib, "cuGetProcAddress");
  pfn_cuGetProcAddress_v2 = (PFN_cuGetProcAddress_v12000)dlsym(cudaLib, "cuGetProcAddress"); // expect: CE011
  pfn_cuDriverGetVersion = (PFN_cuDriverGetVersion_v2020)dlsym(cudaLib, "cuDriverGetVersion");
  return pfn_cuGetProcAddress != nullptr;
}

#if CUDART_VERSION >= 12000
#define LOAD_SYM(symbol, version, ignore) do {                                         \
    CUdriverProcAddressQueryResult st;                                                 \
    res = pfn_cuGetProcAddress_v2(#symbol, (void **) (&pfn_##symbol), version, 0, &st); \
    if (res != 0 || st != CU_GET_PROC_ADDRESS_SUCCESS) { if (!ignore) return 1; }      \
  } while (0)
#else
#define LOAD_SYM(symbol, version, ignore) do {                                         \
    res = pfn_cuGetProcAddress(#symbol, (void **) (&pfn_##symbol), version, 0);        \
    if (res != 0) { if (!ignore) return 1; }                                           \
  } while (0)
#endif

static int load() {
  CUresult res;
  LOAD_SYM(cuDeviceGet, 2000, 0);
  LOAD_SYM(cuCtxCreate, 3020, 1);
  LOAD_SYM(cuMemGetHandleForAddressRange, 11070, 1);
  LOAD_SYM(cuLaunchKernel, 4000, 0); // expect: CE007
  LOAD_SYM(cuCtxCreate, 11040, 1); // expect: CE002
  return 0;
}
// CE011: the export "cuGetProcAddress" is the 11030 ABI; a PFN_cuGetProcAddress_v12000 needs
// "cuGetProcAddress_v2". CE007: flags 0 for cuLaunchKernel, which has a per-thread ABI (both branches).
// CE002: 11040 binds cuCtxCreate_v3 but pfn_cuCtxCreate is a PFN_cuCtxCreate_v3020.
