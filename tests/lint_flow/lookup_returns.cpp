// Shape of dlsym wrappers: a function and a lambda returning what dlsym returned (a lookup at each call site),
// results landing in void * struct fields cast at their calls (a hand-typed `unsigned int` for size_t).
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
static void* h = dlopen("libcuda.so.1", RTLD_NOW);
void* sym(const char* n) { return dlsym(h, n); }
struct Fns { void* alloc; void* free_; } g;
void load() {
  auto a = (PFN_cuMemAlloc_v3020)sym("cuMemAlloc"); // expect: CE011/error
  g.alloc = dlsym(h, "cuMemAlloc_v2"); // expect: CE011/error
  g.free_ = dlsym(h, "cuMemFree"); // expect: CE011/error
  auto get = [&](const char* n) { return dlsym(h, n); };
  auto f = (PFN_cuMemFree_v3020)get("cuMemFree"); // expect: CE011/error
  (void)a; (void)f;
}
CUresult use(CUdeviceptr* p, unsigned int n) {
  ((CUresult (*)(CUdeviceptr*, unsigned int))g.alloc)(p, n);
  return ((PFN_cuMemFree_v3020)g.free_)(*p);
}
