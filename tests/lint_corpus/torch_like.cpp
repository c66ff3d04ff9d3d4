// Modelled on a framework's driver table: cudaGetDriverEntryPointByVersion with pins.
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

struct DriverAPI {
  PFN_cuMemCreate_v10020 cuMemCreate_;
  PFN_cuMemAddressReserve_v10020 cuMemAddressReserve_;
  PFN_cuDeviceGetUuid_v11040 cuDeviceGetUuid_;
  PFN_cuMulticastCreate_v12010 cuMulticastCreate_;
};

void init(DriverAPI *api) {
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuMemCreate", (void **)&api->cuMemCreate_, 10020, cudaEnableDefault, &q); // expect: CE006  (cuMemCreate has no per-thread ABI: no CE007)
  cudaError_t e = cudaGetDriverEntryPointByVersion("cuMemAddressReserve", (void **)&api->cuMemAddressReserve_, 12000, cudaEnableLegacyStream, &q); // expect: CE010  (12000 still binds the 10020 ABI of the typedef: no CE002)
  e = cudaGetDriverEntryPointByVersion("cuDeviceGetUuid", (void **)&api->cuDeviceGetUuid_, 11040, cudaEnableLegacyStream, nullptr); // expect: CE006
  e = cudaGetDriverEntryPointByVersion("cuMulticastCreate", (void **)&api->cuMulticastCreate_, CUDART_VERSION, cudaEnableLegacyStream, &q); // expect: CE001
  check(e, q);
}
