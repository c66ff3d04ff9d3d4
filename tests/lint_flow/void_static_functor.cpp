// Shape of a communication library's loader: dlsym results kept as `static void *` and given their type
// only at the call, inside a template functor, with decltype(&::name) (13.0 headers: cuCtxCreate is _v4), or by a
// hand-written `using` type (the export's own ABI: a CE004 note).
#include <cuda.h>
#include <dlfcn.h>

static void* s_handle = dlopen("libcuda.so.1", RTLD_NOW);
static void* s_ctx_create = dlsym(s_handle, "cuCtxCreate"); // expect: CE011/error
static void* s_mem_alloc = dlsym(s_handle, "cuMemAlloc_v2"); // expect: CE004/note

template <typename... A>
struct Call {
  CUresult operator()(A... a) { return ((decltype(&::cuCtxCreate))s_ctx_create)(a...); }
};

CUresult alloc(CUdeviceptr* p, size_t n) {
  using Alloc = CUresult(CUdeviceptr*, size_t);
  return ((Alloc*)s_mem_alloc)(p, n);
}

void use() {
  CUcontext c;
  Call<CUcontext*, unsigned, CUdevice>()(&c, 0u, 0);
}
