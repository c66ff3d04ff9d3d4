// Shape of a framework's driver shim (a version read once into a file static, used by the loader of another
// function; a pin stored in a static by an init function): the version flows across functions.
#include <cuda.h>
#include <cudaTypedefs.h>

static int g_driver_version = 0;
static int g_pin;

void init_driver() {
  cuDriverGetVersion(&g_driver_version);
  g_pin = 11000;
}

void* get(const char* name) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress(name, &fn, g_driver_version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return nullptr;
  return fn;
}

void* get_pinned(const char* name) {
  void* fn = nullptr;
  CUdriverProcAddressQueryResult q;
  if (cuGetProcAddress(name, &fn, g_pin, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return nullptr;
  return fn;
}

struct Loader {
  int version_ = 0;
  void init() { cuDriverGetVersion(&version_); }
  void* load(const char* name) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult q;
    if (cuGetProcAddress(name, &fn, version_, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q) return nullptr;
    return fn;
  }
};

void use(Loader& l) {
  auto alloc = (PFN_cuMemAlloc_v3020)get("cuMemAlloc"); // expect: CE001/error
  auto ctx = (PFN_cuCtxCreate_v3020)get_pinned("cuCtxCreate"); // expect: CE010/note
  auto free_ = (PFN_cuMemFree_v3020)l.load("cuMemFree"); // expect: CE001/error
  (void)alloc; (void)ctx; (void)free_;
}
