// A PyTorch-shaped driver table (c10/cuda/driver_api.h's shape): X-macro lists of required and optional
// entries, one accessor, a checked-call macro in the library's own error style.
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <stdexcept>
#include <string>

#define DRV_CHECK(cond, message)                                                                                  \
    do {                                                                                                         \
        if (!(cond)) throw std::runtime_error(std::string("torchish: ") + (message));                            \
    } while (0)
#define DRV_NAMESPACE torchish_driver
#define DRV_IMPLEMENTATION
#include "drv.h"

#define TORCHISH_DRIVER_API(_)                                                                                   \
    _(cuDeviceGet) _(cuMemAlloc) _(cuMemFree) _(cuGetErrorString) _(cuMemAddressReserve) _(cuMemGetAddressRange)
#define TORCHISH_DRIVER_API_OPTIONAL(_)                                                                          \
    _(cuCtxCreate) _(cuCtxCreate_11040) _(cuCtxCreate_3020) _(cuDeviceGetUuid)             \
    _(cuMulticastCreate) _(cuStreamWriteValue32)

namespace torchish {
const drv_table &driver() { return torchish_driver::require(); }
}  // namespace torchish

static void put(char *buf, size_t n, const char *member, const void *fn) {
    Dl_info info;
    const char *name = "NULL";
    if (fn != nullptr) name = dladdr(fn, &info) != 0 && info.dli_sname != nullptr ? info.dli_sname : "?";
    size_t len = std::strlen(buf);
    std::snprintf(buf + len, n - len, "%s=%s ", member, name);
}

// One line: the load's result, then each member and the export its pointer lands on.
extern "C" __attribute__((visibility("default"))) int torchish_probe(char *buf, size_t n) {
    drv_table t;
    int rc = torchish_driver::load(t);
    std::snprintf(buf, n, "rc=%d ", rc);
#define PUT(name) { void *p; std::memcpy(&p, &t.pfn_##name, sizeof p); put(buf, n, #name, p); }
    TORCHISH_DRIVER_API(PUT)
    TORCHISH_DRIVER_API_OPTIONAL(PUT)
#undef PUT
    if (rc == DRV_OK) {
        try {  // a checked call that fails: the library's own error, naming the entry, the CUresult, the call site
            unsigned long long base = 0;
            size_t size = 0;
            DRV_CALL_CHECK(&t, cuMemGetAddressRange, (&base, &size, 0ULL));
            std::snprintf(buf + std::strlen(buf), n - std::strlen(buf), "check=none");
        } catch (const std::runtime_error &e) {
            std::snprintf(buf + std::strlen(buf), n - std::strlen(buf), "check=[%s]", e.what());
        }
    }
    return rc;
}
