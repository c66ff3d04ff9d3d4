// A pointer typed with decltype and filled by dlsym: its type follows whatever cuda.h the build uses (CE011 where
// another toolkit's cuda.h makes it another ABI; the export's own type under every toolkit is CE004's note).
#include <dlfcn.h>
#include <cuda.h>

struct Lib {
  decltype(&cuCtxCreate) ctx_create;
  decltype(cuInit)* init;
};

void load(Lib& l, void* h) {
  l.ctx_create = reinterpret_cast<decltype(&cuCtxCreate)>(dlsym(h, "cuCtxCreate")); // expect: CE011
  l.init = reinterpret_cast<decltype(cuInit)*>(dlsym(h, "cuInit")); // expect: CE004
}
