// Versions that reach a request through data flow: helpers, std::min, ternaries, defaults, constants.
#include <algorithm>
#include <cuda.h>
#include <cuda_runtime.h>

#define PIN_MULTICAST 12010
constexpr int kReleasePin = 12000;

static int driver_version() {
  int v = 0;
  cuDriverGetVersion(&v);
  return v;
}

static CUresult load(const char* name, void** fn, int version = 12000) {
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

void init() {
  PFN_cuMemAlloc_v3020 alloc;
  PFN_cuMulticastCreate_v12010 mc;
  PFN_cuCtxCreate_v3020 ctx;
  PFN_cuStreamBeginCaptureToGraph_v12030 cap;
  PFN_cuLibraryLoadData_v12000 lib;
  PFN_cuGraphInstantiate_v11000 inst;
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int ver = std::min(runtime, driver_version());
  load("cuMemAlloc", (void**)&alloc, ver); // expect: CE001
  load("cuMemAlloc", (void**)&alloc, driver_version()); // expect: CE001
  int pinned = runtime >= 12000 ? 3020 : 2000;
  load("cuCtxCreate", (void**)&ctx, pinned); // expect: CE002
  load("cuMulticastCreate", (void**)&mc, PIN_MULTICAST);
  load("cuStreamBeginCaptureToGraph", (void**)&cap); // expect: CE009
  load("cuStreamBeginCaptureToGraph", (void**)&cap, std::max(11000, 12000)); // expect: CE009
  load("cuLibraryLoadData", (void**)&lib);
  load("cuGraphInstantiate", (void**)&inst, kReleasePin); // expect: CE010
}
// CE001 for a helper returning the driver's version, and for std::min of the runtime's and the driver's (min and
// max are known by what they do; of two constants, the constant: std::max(11000, 12000) is 12000). CE009: the default 12000 is
// below cuStreamBeginCaptureToGraph's first ABI (12030). CE009 again: the release constant 12000 for
// cuGraphInstantiate, above its newest ABI (11000). Silent: the #define pin, and the default for cuLibraryLoadData.
// `pinned` is 3020 or 2000 by the runtime: below 12.0 the request binds cuCtxCreate's 2000 ABI into the 3020
// typedef (CE002, on the branch that pins 2000).
