// A table of pointers and requests built by macros from a list pulled in with #include, pins from constants
// defined in another header.
#include <cudaTypedefs.h>
#include "versions.h"

#define DECLARE(name, ver) PFN_##name##_v##ver p_##name = nullptr;
#define X DECLARE
#include "fns.inc"
#undef X

int load() {
  CUdriverProcAddressQueryResult q;
#define LOOKUP(name, ver) \
  if (cuGetProcAddress(#name, (void**)&p_##name, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
#define X LOOKUP
#include "fns.inc"
#undef X
  return 0;
}

int load_constants() {
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress("cuMemAlloc", (void**)&p_cuMemAlloc, kAllocAbi, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE002
  if (cuGetProcAddress("cuMemFree", (void**)&p_cuMemFree, kFreeAbi, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
  if (cuGetProcAddress("cuCtxCreate", (void**)&p_cuCtxCreate, kCtxAbi, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE002
  return 0;
}
// The table itself is right: each row's pointer is the typedef of its pin. kAllocAbi (2000) and kCtxAbi (3020)
// bind other ABIs than the pointers' (3020, 11040).
