// An interposer's lookups stored through the function pointer's value (the typo of the POSIX idiom): the store goes
// into the function's code, the pointer is never set. The value is also judged as landing in the pointer.
#include <cuda.h>
#include <dlfcn.h>

CUresult hooked_alloc(CUdeviceptr* dptr, size_t bytes) {
  CUresult (*real_alloc)(CUdeviceptr*, size_t);
  *(void**)(*real_alloc) = dlsym(RTLD_NEXT, "cuMemAlloc"); // expect: CE012 CE011
  return real_alloc(dptr, bytes);
}

CUresult hooked_free(CUdeviceptr dptr) {
  CUresult (*real_free)(CUdeviceptr);
  *(void**)&real_free = dlsym(RTLD_NEXT, "cuMemFree_v2");  // expect: CE004
  return real_free(dptr);
}
// CE012 for the store through real_alloc's value; CE011: as meant, the unversioned cuMemAlloc (the 2000 ABI, 32-bit
// sizes) would land in a (CUdeviceptr *, size_t) pointer. The POSIX idiom below sets the pointer: the 3020 export in
// its own ABI, typed by hand (a CE004 note).
