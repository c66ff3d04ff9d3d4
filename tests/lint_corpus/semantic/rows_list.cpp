// A list of rows written in a header (rows_list.h) and expanded here into requests: the cause is reported at the
// expansion, each row's own fault also at its row in the header, naming this expansion.
#include <cudaTypedefs.h>
#include "rows_list.h"

#define DECLARE(name, ver, type) type p_##name = nullptr;
DRIVER_LIST(DECLARE)

int load() {
  CUdriverProcAddressQueryResult q;
#define LOAD(name, ver, type) \
  if (cuGetProcAddress(#name, (void**)&p_##name, ver, CU_GET_PROC_ADDRESS_DEFAULT, &q) || q) return 1;
  DRIVER_LIST(LOAD) // expect: CE002 CE007
#undef LOAD
  return 0;
}
// cuMemFree pinned at 2000 binds the 2000 ABI but its pointer is the 3020 typedef (CE002, an error);
// cuStreamSynchronize has a per-thread ABI and the flags are CU_GET_PROC_ADDRESS_DEFAULT (CE007).
