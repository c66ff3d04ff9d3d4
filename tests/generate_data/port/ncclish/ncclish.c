/* An NCCL-shaped cudawrap (src/misc/cudawrap.cc's shape): a process-wide table loaded once, CUPFN(name)
   for the calls, a CUCHECK macro that logs and returns the error. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static char last_error[512];
#define DRV_ON_ERROR(message) snprintf(last_error, sizeof last_error, "%s", message)
#define DRV_IMPLEMENTATION
#include "drv.h"

#define CUPFN(name) (drv_get()->pfn_##name)
#define CUCHECK(entry, args) DRV_CALL_CHECK(drv_get(), entry, args)

#define NCCLISH_MEMBERS(_)                                                                                     \
    _(cuDeviceGet) _(cuCtxGetCurrent) _(cuCtxSetCurrent) _(cuGetErrorName) _(cuMemCreate) _(cuMemMap)            \
    _(cuMemRelease) _(cuMulticastCreate) _(cuDeviceGetUuid)

static void put(char *buf, size_t n, const char *member, const void *fn) {
    Dl_info info;
    const char *name = "NULL";
    size_t len = strlen(buf);
    if (fn != NULL) name = dladdr(fn, &info) != 0 && info.dli_sname != NULL ? info.dli_sname : "?";
    snprintf(buf + len, n - len, "%s=%s ", member, name);
}

/* One line: the load's result, then each member and the export its pointer lands on. */
__attribute__((visibility("default"))) int ncclish_probe(char *buf, size_t n) {
    int rc = drv_status();
    snprintf(buf, n, "rc=%d ", rc);
#define PUT(name) { void *p; memcpy(&p, &CUPFN(name), sizeof p); put(buf, n, #name, p); }
    NCCLISH_MEMBERS(PUT)
#undef PUT
    if (rc == DRV_OK) {
        unsigned long long handle = 0;
        last_error[0] = '\0';
        (void)CUCHECK(cuMemCreate, (&handle, 0, NULL, 0ULL));
        snprintf(buf + strlen(buf), n - strlen(buf), "check=[%s]", last_error);
    }
    return rc;
}
