// Hand-written function types behind typedef and using aliases, judged by their canonical type.
#include <cuda.h>

typedef CUresult (*MyAlloc)(CUdeviceptr*, size_t);
using Alloc = MyAlloc;
using Alloc32 = CUresult (*)(unsigned int*, unsigned int);

int load() {
  CUdriverProcAddressQueryResult q;
  Alloc a = nullptr;
  Alloc32 old = nullptr;
  if (cuGetProcAddress("cuMemAlloc", (void**)&a, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
  if (cuGetProcAddress("cuMemAlloc", (void**)&a, 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE002
  if (cuGetProcAddress("cuMemAlloc", (void**)&old, 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1;
  return 0;
}
// Silent with clang: a hand-written type whose canonical type is the bound ABI's is not a fault.
