// A wrapper whose own request ignores its result (reported once, at the wrapper, with its callers), called
// with pins that raise the driver floor, once behind a driver-version check that states that floor.
#include <cudaTypedefs.h>

static void* get(const char* name, int version) {
  void* p = nullptr;
  cuGetProcAddress(name, &p, version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, nullptr); // expect: CE006
  return p;
}

int load() {
  int drv = 0;
  if (cuDriverGetVersion(&drv) != CUDA_SUCCESS) return 1;
  void* a = get("cuMemCreate", 12010); // expect: CE010/warning
  if (drv >= 12010) {
    void* b = get("cuMemMap", 12010); // expect: CE010/note
    (void)b;
  }
  (void)a;
  return 0;
}
// The 12010 pins are release numbers that bind the only ABI (10020): a warning where they raise the floor, a
// note where `drv >= 12010` already requires that driver (clang: the 12000 getter alone implies a 12.0 driver).
