// A template lookup that casts what dlsym returned to its type parameter and stores it through a reference: the
// pointer's type is the template argument each call gives (a typedef, or a type written by hand).
#include <cudaTypedefs.h>
#include <dlfcn.h>

static void* lib;

static void* find(const char* name) { return dlsym(lib, name); }

template <typename T>
int take(const char* name, T& fn) {
  fn = (T)find(name);
  return fn != nullptr;
}

PFN_cuMemAlloc_v3020 mem_alloc;
PFN_cuMemFree_v3020 mem_free;
CUresult (*init)(unsigned int);

int load() {
  int ok = take<PFN_cuMemAlloc_v3020>("cuMemAlloc", mem_alloc); // expect: CE011
  ok &= take<PFN_cuMemFree_v3020>("cuMemFree_v2", mem_free);
  ok &= take<CUresult (*)(unsigned int)>("cuInit", init); // expect: CE004/note
  return ok;
}
// "cuMemAlloc" is the 2000 export (32-bit pointers) taken into the 3020 typedef: the wrong ABI. cuMemFree_v2 is the
// 3020 export; cuInit's hand-written type is its export's ABI (a note).
