// Wrappers written as a lambda and as a template that returns the typed pointer.
#include <cudaTypedefs.h>
#include <string>

template <typename T>
T get_entry(const std::string& name, int version) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q;
  CUresult r = cuGetProcAddress(name.c_str(), &fn, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q);
  if (r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS) return nullptr;
  return reinterpret_cast<T>(fn);
}

struct Table {
  PFN_cuMemAlloc_v3020 alloc;
  PFN_cuCtxCreate_v3020 create;
  PFN_cuMemcpyAsync_v4000 copy;
};

void fill(Table& t) {
  auto load = [&](const char* name, void** out, int version) {
    CUdriverProcAddressQueryResult q;
    CUresult r = cuGetProcAddress(name, out, version, CU_GET_PROC_ADDRESS_DEFAULT, &q);
    return r == CUDA_SUCCESS && q == CU_GET_PROC_ADDRESS_SUCCESS;
  };
  load("cuMemAlloc", (void**)&t.alloc, 3020);
  load("cuMemcpyAsync", (void**)&t.copy, 4000); // expect: CE007
  t.create = get_entry<PFN_cuCtxCreate_v3020>("cuCtxCreate", 3020);
  auto ctx4 = get_entry<PFN_cuCtxCreate_v3020>("cuCtxCreate", 12050); // expect: CE002
  PFN_cuMemAlloc_v3020 a2 = get_entry<PFN_cuMemAlloc_v3020>("cuMemAlloc_v2", 3020); // expect: CE003
  (void)ctx4; (void)a2;
}
// Silent: matching pins through both wrappers; cuMemAlloc has no per-thread ABI, so the lambda's default flags
// say nothing there.
