// Versions built by helpers from arguments: make_version(major, minor), inside a wrapper and at a call.
#include <cudaTypedefs.h>

static int make_version(int major, int minor) { return major * 1000 + minor * 10; }

static void* get_entry(const char* name, int major, int minor) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress(name, &fn, make_version(major, minor), CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS ? fn : nullptr;
}

void load() {
  void* a = get_entry("cuMemAlloc", 3, 2);
  void* b = get_entry("cuMemCreate", 12, 0); // expect: CE010
  void* c = nullptr;
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress("cuCtxCreate", &c, make_version(11, 0), CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); // expect: CE010
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return;
  (void)a; (void)b;
}
// Silent: 3.2 -> 3020 is cuMemAlloc's ABI. CE009: 12.0 is above cuMemCreate's only ABI (10020).
// CE010: 11.0 is between cuCtxCreate's ABIs.

static void* get_default(const char* name, int major = 12, int minor = 0) { return get_entry(name, major, minor); }

void load_more() {
  void* a = get_default("cuMemMap"); // expect: CE010
  void* b = get_default("cuMulticastCreate", 12, 1);
  (void)a; (void)b;
}
// Two layers: get_default's defaults reach make_version inside get_entry; 12.1 is cuMulticastCreate's ABI.
