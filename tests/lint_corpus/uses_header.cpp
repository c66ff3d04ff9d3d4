// The loader macro comes from loader_macros.h, found next to this file.
#include "loader_macros.h"

static PFN_cuCtxCreate_v3020 ctx_create;
static PFN_cuMemAlloc_v3020 mem_alloc;

bool load() {
  RESOLVE(ctx_create, "cuCtxCreate", 3020);
  RESOLVE(mem_alloc, "cuMemAlloc", 13000); // expect: CE010
  return true;
}
