// Shape of a binding's loader: the getter received as a parameter, or from Python as an integer and cast to
// the getter's type at the call (an expression, a void * static, a hand-written type): each is the getter.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdint.h>
static void* g_gpa;
extern "C" void set_getter(uintptr_t addr) { g_gpa = (void*)addr; }
void load_a(PFN_cuGetProcAddress_v12000 gpa) {
  PFN_cuMemAlloc_v3020 a; CUdriverProcAddressQueryResult q;
  if (gpa("cuMemAlloc", (void**)&a, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return; // expect: CE010/note (the 12000 getter implies a 12.0 driver)
}
void load_b(uintptr_t addr) {
  PFN_cuCtxCreate_v3020 c; CUdriverProcAddressQueryResult q;
  if (((PFN_cuGetProcAddress_v12000)addr)("cuCtxCreate", (void**)&c, 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return; // expect: CE002/error CE010/note
  if (((PFN_cuGetProcAddress_v12000)g_gpa)("cuCtxCreate", (void**)&c, 12010, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return; // expect: CE002/error CE010/warning
  auto gpa = reinterpret_cast<CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*)>(addr);
  if (gpa("cuCtxCreate", (void**)&c, 12020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return; // expect: CE002/error CE010/warning
}
