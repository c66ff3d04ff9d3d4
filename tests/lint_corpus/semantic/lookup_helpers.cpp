// Exports taken through a project's own lookup whose body is in another file (declared here, named like dlsym:
// taken as dlsym of the name it is given), by rows a macro writes into hand-written function types. The rows whose
// type is the export's own ABI are one cause, a note at the first row; a row whose export is another ABI is an error.
#include <cuda.h>

void* plat_dlsym(void* lib, const char* name);   // defined in another file of the project

typedef CUresult (*my_init_t)(unsigned int);
typedef CUresult (*my_alloc_t)(CUdeviceptr*, size_t);
typedef CUresult (*my_memset32_t)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*my_free_t)(CUdeviceptr);

struct Lib {
  void* h;
  my_init_t init;
  my_alloc_t alloc;
  my_memset32_t memset32;
  my_free_t release;
};

#define TAKE(lib, field, type, exported) (lib)->field = (type)plat_dlsym((lib)->h, #exported)

int load(Lib* lib) {
  TAKE(lib, init, my_init_t, cuInit); // expect: CE004/note
  TAKE(lib, alloc, my_alloc_t, cuMemAlloc_v2);
  TAKE(lib, memset32, my_memset32_t, cuMemsetD32); // expect: CE011/error
  TAKE(lib, release, my_free_t, cuMemFree_v2);
  return lib->init == nullptr;
}
// cuMemsetD32 is the 2000 export (32-bit pointer and count) taken into the 64-bit type: the wrong ABI is bound
// (cuMemsetD32_v2 is the export of that type). The other three rows are their exports' own ABIs: hand-written
// types, one cause (the macro TAKE in load), reported once at its first row.
