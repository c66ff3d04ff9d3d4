// An X-macro list of driver functions: name, the ABI version asked for, the pointer's typedef. rows_list.cpp
// expands it into pointers and requests; a fault of a row is reported at the row too (where it is fixed).
#define DRIVER_LIST(X)                                                                                \
  X(cuMemAlloc, 3020, PFN_cuMemAlloc_v3020)                                                            \
  X(cuStreamSynchronize, 2000, PFN_cuStreamSynchronize_v2000) /* expect: CE007 */             \
  X(cuCtxCreate, 3020, PFN_cuCtxCreate_v3020)                                                          \
  X(cuMemFree, 2000, PFN_cuMemFree_v3020) /* expect: CE002 */
