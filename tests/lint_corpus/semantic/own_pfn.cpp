// A project that writes its own PFN_ typedefs (named like cudaTypedefs.h's, for toolkits too old to have them):
// they are hand-written types, judged by what they are, not by their name.
#include <cuda.h>
#include <dlfcn.h>

typedef CUresult (*PFN_cuInit_v2000)(unsigned int flags);
typedef CUresult (*PFN_cuCtxSetFlags_v12010)(int flags);
typedef CUresult (*PFN_cuMemAlloc_v3020)(CUdeviceptr* dptr, size_t bytes);

void load(void* h) {
  auto init = (PFN_cuInit_v2000)dlsym(h, "cuInit"); // expect: CE004/note
  auto set_flags = (PFN_cuCtxSetFlags_v12010)dlsym(h, "cuCtxSetFlags"); // expect: CE004/note
  auto alloc = (PFN_cuMemAlloc_v3020)dlsym(h, "cuMemAlloc"); // expect: CE011
  (void)init; (void)set_flags; (void)alloc;
}
// cuInit's typedef is its export's ABI, written by hand; cuCtxSetFlags's has int where the ABI has unsigned int
// (signedness only). "cuMemAlloc" is the 2000 export: the 3020 typedef is another ABI (an error).
