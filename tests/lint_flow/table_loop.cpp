// Shape of a {name, &ptr, version} table walked in loops (a range-for, an index): one request per row, reported
// at its row; a pin the call writes for every row is one cause, at the call.
#include <cuda.h>
#include <cudaTypedefs.h>
static PFN_cuMemAlloc_v3020 p_alloc;
static PFN_cuCtxCreate_v3020 p_ctx;
static PFN_cuMemFree_v3020 p_free;
struct Entry { const char* name; void** fn; int version; };
static Entry kTable[] = {
  {"cuMemAlloc", (void**)&p_alloc, 3020},
  {"cuCtxCreate", (void**)&p_ctx, 11040}, // expect: CE002/error
  {"cuMemFree", (void**)&p_free, 3020},
};
bool load() {
  for (auto& e : kTable) {
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(e.name, e.fn, e.version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return false;
  }
  for (size_t i = 0; i < sizeof(kTable) / sizeof(kTable[0]); ++i) {
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(kTable[i].name, kTable[i].fn, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return false; // expect: CE002/error
  }
  return true;
}
