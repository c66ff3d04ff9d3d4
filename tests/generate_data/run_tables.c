/* Test program for generated headers: loads each table from the fake driver and prints what happened.
 * Usage: run_tables report | with | threads | calls
 * Built by tests/test_generate.py with the three generated headers (acme.h, leg.h, floor.h). */
#ifdef WITH_RUNTIME
#include <cuda_runtime_api.h> /* before the generated headers: enables NAME_load_with_runtime() */
#endif
#define ACME_IMPLEMENTATION
#include "acme.h"
#define LEG_IMPLEMENTATION
#include "leg.h"
#define FLOOR_IMPLEMENTATION
#include "floor.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define DUMP(P, U, t, rc, d)                                                                                         \
    do {                                                                                                            \
        int i_;                                                                                                     \
        printf("STATUS %s %d %d %d %d\n", #P, (rc), (t)._status.driver_version, (t)._status.access, U##_MIN_DRIVER); \
        for (i_ = 0; i_ < U##_PIN_COUNT; i_++)                                                                      \
            printf("PIN %s %s %s %d %s %d %d %d %s %d\n", #P, P##_impl_entries[P##_impl_pins[i_].entry].name,        \
                   P##_impl_pins[i_].symbol, P##_impl_pins[i_].version, P##_impl_pins[i_].member,                  \
                   (d)->pins[i_].asked, (d)->pins[i_].result, (d)->pins[i_].query,                                  \
                   P##_impl_class_names[(d)->pins[i_].classification], (d)->pins[i_].resolved);                    \
        printf("REPORT %s\n%s", #P, P##_diag_report(d));                                                           \
    } while (0)

static long gpa_calls(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    long (*calls)(void) = NULL;
    void *p = lib ? dlsym(lib, "cuentryFakeGetProcAddressCalls") : NULL;
    memcpy(&calls, &p, sizeof p);
    return calls ? calls() : -1;
}

static int report(void) {
    struct acme_table a;
    struct leg_table l;
    struct floor_table f;
    int ra = acme_load(&a), rl = leg_load(&l), rf = floor_load(&f);
    DUMP(acme, ACME, a, ra, acme_global_diag());
    DUMP(leg, LEG, l, rl, leg_global_diag());
    DUMP(floor, FLOOR, f, rf, floor_global_diag());
    printf("SAME_REPORT %d\n", strcmp(leg_report(&l), leg_diag_report(leg_global_diag())) == 0);
    printf("AVAILABLE %d %d %d %d %d\n", acme_available(&a, "cuCtxCreate"), acme_available(&a, "cuCtxCreate_3020"),
           acme_available(&a, "nope"), acme_available(NULL, "cuCtxCreate"), acme_available(&a, NULL));
    printf("GET %d\n", acme_get() != NULL && memcmp(acme_get(), &a, sizeof a) == 0);
    printf("AGAIN %d\n", acme_load(&a) == ra && acme_load(NULL) == ACME_ERR_ARGUMENT && acme_status() == ra);
    printf("LAYOUT %d %d\n", acme_load_layout(&a, ACME_LAYOUT ^ 1UL, sizeof a) == ACME_ERR_LAYOUT,
           acme_load_layout(&a, ACME_LAYOUT, sizeof a - 1) == ACME_ERR_LAYOUT);
    return 0;
}

static struct acme_diag acme_d;
static struct leg_diag leg_d;
static struct floor_diag floor_d;

static int with_getter(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    void *p = lib ? dlsym(lib, "cuGetProcAddress_v2") : NULL;
    acme_PFN_cuGetProcAddress_v12000 getter = NULL;
    struct acme_table a;
    struct leg_table l;
    struct floor_table f;
    memcpy(&getter, &p, sizeof p);
    if (!getter) {
        printf("NOGETTER\n");
        return 0;
    }
    {
        int ra = acme_load_with_diag(&a, getter, &acme_d);
        int rl = leg_load_with_diag(&l, (leg_PFN_cuGetProcAddress_v12000)getter, &leg_d);
        int rf = floor_load_with_diag(&f, (floor_PFN_cuGetProcAddress_v12000)getter, &floor_d);
        DUMP(acme, ACME, a, ra, &acme_d);
        DUMP(leg, LEG, l, rl, &leg_d);
        DUMP(floor, FLOOR, f, rf, &floor_d);
        printf("NODIAG %d\n", acme_load_with(&a, getter) == ra);
    }
    printf("NULLS %d %d\n", acme_load_with(NULL, getter), acme_load_with(&a, NULL));
    return 0;
}

#ifdef WITH_RUNTIME
/* The fake driver also exports the runtime's cudaGetDriverEntryPointByVersion (a stand-in for libcudart). */
static int runtime(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    void *p = lib ? dlsym(lib, "cudaGetDriverEntryPointByVersion") : NULL;
    acme_runtime_getter getter = NULL;
    struct acme_table a;
    int ra;
    memcpy(&getter, &p, sizeof p);
    if (!getter) return 1;
    ra = acme_load_with_runtime_diag(&a, getter, &acme_d);
    DUMP(acme, ACME, a, ra, &acme_d);
    {
        struct leg_table l;
        int rl = leg_load_with_runtime_diag(&l, (leg_runtime_getter)getter, &leg_d);
        DUMP(leg, LEG, l, rl, &leg_d);
    }
    return 0;
}
#else
static int runtime(void) { return 3; }
#endif

#define NTHREADS 32
static pthread_barrier_t barrier;
static struct leg_table tables[NTHREADS];
static int results[NTHREADS];

static void *worker(void *arg) {
    int i = (int)(size_t)arg;
    pthread_barrier_wait(&barrier);
    results[i] = leg_load(&tables[i]);
    return NULL;
}

static int threads(void) {
    pthread_t th[NTHREADS];
    int i, same = 1, asked = 0;
    long before;
    (void)dlopen("libcuda.so.1", RTLD_NOW); /* so that the counter can be read before the tables load it */
    before = gpa_calls();
    pthread_barrier_init(&barrier, NULL, NTHREADS);
    for (i = 0; i < NTHREADS; i++) pthread_create(&th[i], NULL, worker, (void *)(size_t)i);
    for (i = 0; i < NTHREADS; i++) pthread_join(th[i], NULL);
    for (i = 1; i < NTHREADS; i++)
        if (results[i] != results[0] || memcmp(&tables[i], &tables[0], sizeof tables[0]) != 0) same = 0;
    for (i = 0; i < LEG_PIN_COUNT; i++) asked += leg_global_diag()->pins[i].asked;
    printf("THREADS %d same=%d rc=%d asked=%d calls=%ld\n", NTHREADS, same, results[0], asked, gpa_calls() - before);
    return 0;
}

static int calls(void) {
    struct leg_table t;
    CUdevice dev = -1; /* cuda.h's names, from the generated header alone */
    CUresult rc;
    CUcontext ctx = NULL;
    CUdeviceptr dptr = 0;
    const char msg[] = "cuentry generated table";
    char back[sizeof msg];
    unsigned char uuid[16];
    if (leg_load(&t) != LEG_OK) {
        fputs(leg_report(&t), stdout);
        return 1;
    }
    rc = t.pfn_cuInit(0);
    if (rc == 0) rc = t.pfn_cuDeviceGet(&dev, 0);
    if (rc == 0) rc = t.pfn_cuDevicePrimaryCtxRetain(&ctx, dev);
    if (rc == 0) rc = t.pfn_cuCtxSetCurrent(ctx);
    if (rc == 0) rc = t.pfn_cuMemAlloc(&dptr, sizeof msg);
    if (rc == 0) rc = t.pfn_cuMemcpyHtoD(dptr, msg, sizeof msg);
    if (rc == 0) rc = t.pfn_cuMemcpyDtoH(back, dptr, sizeof msg);
    if (rc == 0) rc = t.pfn_cuMemFree(dptr);
    printf("CALLS rc=%d back=%s\n", rc, rc == 0 ? back : "-");
    if (leg_available(&t, "cuDeviceGetUuid") && t.pfn_cuDeviceGetUuid != NULL) {
        rc = t.pfn_cuDeviceGetUuid((CUuuid *)(void *)uuid, dev);
        printf("UUID rc=%d first=%02x\n", rc, uuid[0]);
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    if (strcmp(argv[1], "report") == 0) return report();
    if (strcmp(argv[1], "with") == 0) return with_getter();
    if (strcmp(argv[1], "threads") == 0) return threads();
    if (strcmp(argv[1], "calls") == 0) return calls();
    if (strcmp(argv[1], "runtime") == 0) return runtime();
    return 2;
}
