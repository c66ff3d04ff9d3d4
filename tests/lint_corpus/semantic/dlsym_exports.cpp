// dlsym of an old export into the pointer type of the newer ABI, directly, through an alias, through a wrapper.
#include <dlfcn.h>
#include <cudaTypedefs.h>

using AllocFn = PFN_cuMemAlloc_v3020;
static void* sym(void* h, const char* name) { return dlsym(h, name); }

void load(void* h) {
  auto a = (PFN_cuMemAlloc_v3020)dlsym(h, "cuMemAlloc"); // expect: CE011
  AllocFn b = (AllocFn)dlsym(h, "cuMemAlloc"); // expect: CE011
  auto c = (PFN_cuMemAlloc_v3020)dlsym(h, "cuMemAlloc_v2");
  CUresult (*d)(CUdeviceptr*, size_t) = (CUresult (*)(CUdeviceptr*, size_t))dlsym(h, "cuMemAlloc_v2"); // expect: CE004/note
  CUresult (*e)(CUdeviceptr*, size_t) = (CUresult (*)(CUdeviceptr*, size_t))dlsym(h, "cuMemAlloc"); // expect: CE011
  (void)a; (void)b; (void)c; (void)d; (void)e;
}
// Silent: the _v2 export into its own typedef. A hand-written type equal to the export's ABI is a note (clang).
