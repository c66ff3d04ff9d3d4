// Shape of a project's own lookup wrapper (named whatever it likes) that returns what the getter returned; a
// hand-typed pointer with `unsigned int` where the ABI has size_t; `using T = CUresult(...)` then `(T *)sym`.
#include <cuda.h>

static void* find_entry(const char* sym, int ver) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult st;
  if (cuGetProcAddress(sym, &p, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) != CUDA_SUCCESS ||
      st != CU_GET_PROC_ADDRESS_SUCCESS)
    return nullptr;
  return p;
}

typedef CUresult (*memalloc_t)(CUdeviceptr*, unsigned int);
using MemsetT = CUresult(CUdeviceptr, unsigned char, size_t);

void load() {
  memalloc_t a = (memalloc_t)find_entry("cuMemAlloc", 3020); // expect: CE002/error
  MemsetT* m = (MemsetT*)find_entry("cuMemsetD8", 3020);  // the ABI pin 3020 binds, as written: no finding
  (void)a; (void)m;
}
