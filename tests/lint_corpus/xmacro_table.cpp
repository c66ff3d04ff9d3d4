// Shape of a framework's driver table: an X-macro list of (symbol, version) rows, members typed with
// decltype, and one loader macro. One release number (12000) is used for every row.
#include <cuda.h>
#include <cuda_runtime.h>

#define DRIVER_API_REQUIRED(_)     \
  _(cuDeviceGetAttribute, 2000)    \
  _(cuMemAddressReserve, 12000)    \
  _(cuMemMap, 10020)               \
  _(cuMemsetD32Async, 3020)

#define DRIVER_API_OPTIONAL(_)     \
  _(cuMulticastCreate, 12010)      \
  _(cuCtxCreate, 11000)

#define MEMBER_DECLTYPE(name, version) decltype(&name) name##_;

struct DriverAPI {
  DRIVER_API_REQUIRED(MEMBER_DECLTYPE)
  DRIVER_API_OPTIONAL(MEMBER_DECLTYPE)
  static DriverAPI* get();
};

#define LOOKUP(name, version)                                                         \
  {                                                                                   \
    cudaDriverEntryPointQueryResult qr;                                               \
    cudaError_t err = cudaGetDriverEntryPointByVersion(#name, (void**)&api.name##_,   \
                                                       version, cudaEnableDefault, &qr); \
    if (err != cudaSuccess || qr != cudaDriverEntryPointSuccess) { fail(#name); }     \
  }

DriverAPI create() {
  DriverAPI api;
  DRIVER_API_REQUIRED(LOOKUP) // expect: CE007 CE010 (one finding per cause; clang: each decltype has the bound ABI's signature, notes)
  DRIVER_API_OPTIONAL(LOOKUP) // expect: CE004 CE010 CE002 (cuCtxCreate is cuCtxCreate_v4 in 13.0 headers)
  return api;
}
// CE004: decltype(&name) members follow cuda.h's macros. CE009: cuMemAddressReserve at 12000 is above its
// only ABI (10020). CE007: cuMemsetD32Async has a per-thread ABI and cudaEnableDefault inherits the mode;
// cuMemMap and cuDeviceGetAttribute have none, so the same flag there is silent. CE010: cuCtxCreate at
// 11000 is between its ABIs. cuMulticastCreate at 12010 is right: silent.
