// decltype(&cuX) after cuda.h renames cuX to cuX_v2, with the name stringized before the rename: the pointer
// has the type of the newest ABI while the pin may bind another.
#include <cuda.h>

#define LOAD(fn, ver)                                                                                   \
  decltype(&fn) p_##fn = nullptr;                                                                       \
  if (cuGetProcAddress(#fn, (void**)&p_##fn, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1

int load_old() {
  CUdriverProcAddressQueryResult q;
  LOAD(cuMemAlloc, 2000); // expect: CE002
  return 0;
}

int load_new() {
  CUdriverProcAddressQueryResult q;
  LOAD(cuMemAlloc, 3020); // expect: CE004/note
  return 0;
}

int load_single() {
  CUdriverProcAddressQueryResult q;
  LOAD(cuMemCreate, 10020); // expect: CE004/note
  decltype(&(cuMemRelease)) rel = nullptr;
  if (cuGetProcAddress("cuMemRelease", (void**)&rel, 10020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return 1; // expect: CE004/note
  return 0;
}
// cuMemAlloc at 2000 binds the 2000 ABI (32-bit pointers) but decltype gives cuMemAlloc_v2's type: an error
// clang sees. At 3020 they agree (a note: every supported toolkit's cuda.h renames cuMemAlloc to cuMemAlloc_v2). cuMemCreate/cuMemRelease have one ABI:
// a note, shown with --pedantic.
