// A wrapper with one request per #if branch: both branches are judged, whichever the flags select.
#include <cudaTypedefs.h>

static CUresult get(const char* name, void** fn, int version) {
  CUdriverProcAddressQueryResult q;
#if defined(USE_PER_THREAD)
  CUresult r = cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q);
#else
  CUresult r = cuGetProcAddress(name, fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE008
#endif
  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? r : CUDA_ERROR_NOT_FOUND;
}

int load() {
  PFN_cuMemcpyAsync_v4000 p = nullptr;
  return get("cuMemcpyAsync", (void**)&p, 4000); // expect: CE002 CE009
}
// In the per-thread branch cuMemcpyAsync at 4000 has no per-thread ABI (CE009) and the legacy typedef meets a
// per-thread request (CE002); the legacy branch is right. The flags' own parse sees the legacy branch; the
// per-thread one is parsed again with USE_PER_THREAD defined, and its findings at the call through `get` name
// that configuration.
