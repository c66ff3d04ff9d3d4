/* cuentry's interposer: records (and optionally emulates an older driver for) every
 * entry-point request of a process. Generated tables come from cuentry's catalog
 * (see cuentry/interpose/__init__.py); this file is a template whose table marker is replaced.
 *
 * Loaded with LD_PRELOAD. It
 *  - defines dlsym: names of interest get a wrapper, everything else is a tail call to
 *    the real dlsym (so RTLD_NEXT keeps meaning "after the caller");
 *  - defines cuGetProcAddress, cuGetProcAddress_v2, cuDriverGetVersion,
 *    cudaGetDriverEntryPoint and cudaGetDriverEntryPointByVersion for callers that link
 *    libcuda/libcudart directly (forwarded to the definition the caller's own scope sees);
 *  - replaces the driver's cuGetProcAddress (and, when emulating, cuDriverGetVersion)
 *    when a process asks cuGetProcAddress for them.
 *
 * Records go into a file of fixed-size slots mapped MAP_SHARED (one file per process, in
 * $CUENTRY_TRACE_DIR): a count is one atomic add in memory, and what was recorded
 * survives _exit, crashes and signals. Nothing is ever written to the program's
 * standard streams. $CUENTRY_EMULATE_DRIVER=VERSION makes the driver look like VERSION.
 *
 * Every process the library loads in writes its file's header at start-up (so the trace
 * knows the interposer loaded there, even when no request follows). The file is sparse
 * beyond what is backed: every page is allocated with posix_fallocate before it is first
 * touched, so a full file system stops the recording (the header says "record space
 * exhausted") instead of raising SIGBUS in the program.
 *
 * With $CUENTRY_DRIVER set to an absolute path, dlopen("libcuda.so.1") and dlopen("libcuda.so")
 * open that library instead (what cuentry's own loader does with the variable); every other
 * dlopen is a tail call to the real one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int CUresult;
typedef void *(*dlsym_fn)(void *, const char *);
typedef CUresult (*gpa2_fn)(const char *, void **, int, uint64_t, int *);
typedef CUresult (*gpa1_fn)(const char *, void **, int, uint64_t);
typedef int (*rtbv_fn)(const char *, void **, unsigned int, unsigned long long, int *);
typedef int (*rt_fn)(const char *, void **, unsigned long long, int *);
typedef CUresult (*ver_fn)(int *);

#define EXPORT __attribute__((visibility("default")))
#define HIDDEN __attribute__((visibility("hidden")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* --- layout of the record file (cuentry/interpose/__init__.py reads it) ------------ */
#define MAGIC "CUETRC01"
#define LAYOUT 3
#define HEADER_SIZE 4096
#define MAX_CALLERS 256
#define CALLER_SIZE 512
#define SLOTS 65536
#define SYMBOL_SIZE 112
#define EXPORT_SIZE 64

struct header {
    char magic[8];
    uint32_t layout;
    int32_t pid;
    int32_t ppid;
    int32_t driver_version;  /* the real driver's cuDriverGetVersion, 0 if unknown */
    int32_t emulated;        /* $CUENTRY_EMULATE_DRIVER, 0 if none */
    uint32_t ncallers;
    uint32_t nslots;
    uint32_t nrecords;
    uint64_t dropped;        /* requests not recorded: the table was full */
    uint64_t unwrapped;      /* pointers handed out unwrapped: too many distinct drivers */
    char exe[1024];
    char driver_path[1024];
    uint32_t incomplete;     /* INCOMPLETE_* bits: what the trace is missing */
};
#define INCOMPLETE_SPACE 1u  /* record space exhausted: a page could not be backed */

enum { API_GPA2 = 1, API_GPA1 = 2, API_RTBV = 3, API_RT = 4, API_DLSYM = 5 };

struct slot {                /* appended in order; nrecords counts them */
    uint32_t state;          /* 0 empty, 1 ready (written last, release) */
    uint32_t hash;
    int32_t api;
    int32_t version;
    uint64_t flags;
    int32_t result;          /* CUresult / cudaError_t; dlsym: 0 found, -1 NULL */
    int32_t query;           /* query result, -1 when none was written */
    int32_t caller;          /* index into the callers region */
    uint32_t status_given;   /* the caller passed a query-result pointer */
    uint32_t emulated;       /* the emulation changed the answer */
    uint32_t marks;          /* MARK_* bits */
    uint64_t count;
    char symbol[SYMBOL_SIZE];
    char export_name[EXPORT_SIZE]; /* the driver export the returned pointer equals; "" none;
                                      "?" a pointer that is no export */
};

#define MARK_TRUNCATED 1u    /* the symbol was longer than the slot */
#define MARK_NULL_SYMBOL 2u  /* the symbol pointer was NULL (recorded as "") */
#define MARK_NULL_PFN 4u     /* the result pointer (pfn) was NULL */

_Static_assert(sizeof(struct header) <= HEADER_SIZE, "header too large");
_Static_assert(sizeof(struct slot) == 232, "slot layout changed: update the reader");
_Static_assert(offsetof(struct slot, count) == 48, "slot layout changed: update the reader");
_Static_assert(offsetof(struct header, exe) == 56, "header layout changed: update the reader");
_Static_assert(offsetof(struct header, incomplete) == 2104, "header layout changed: update the reader");

#define CALLERS_OFF HEADER_SIZE
#define SLOTS_OFF (HEADER_SIZE + MAX_CALLERS * CALLER_SIZE)
#define FILE_SIZE (SLOTS_OFF + SLOTS * sizeof(struct slot))
#define CHUNK 65536             /* bytes backed at a time (rounded to whole chunks) */

/* --- generated from the catalog ----------------------------------------------------- */
struct export_entry { const char *name; int version; };
struct symbol_entry { const char *name; int first; int first_pt; };
@TABLES@

/* --- the real dlsym -------------------------------------------------------------- */
static dlsym_fn real_dlsym_ptr;

static dlsym_fn get_real_dlsym(void) {
    dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);
    if (LIKELY(f != NULL)) return f;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0", "GLIBC_2.1"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !f; i++)
        f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", versions[i]);
    __atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
    return f;
}

/* --- state ------------------------------------------------------------------------ */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Set while this thread holds the lock: a request from a signal handler that interrupted us
 * then skips everything that would take the lock again (it is forwarded, not recorded). */
static __thread int holding;
static void take(void) { pthread_mutex_lock(&lock); holding = 1; }
static void give(void) { holding = 0; pthread_mutex_unlock(&lock); }
static int emu_version;                 /* 0: no emulation */
static char *map;                       /* the record file of this process, or NULL */
#define INDEX_SIZE (2 * SLOTS)
static uint32_t slot_index[INDEX_SIZE];  /* hash -> record number + 1 in this process's file; 0 empty */
static int index_used;                  /* slot_index holds something (a forked child clears it then only) */
static int map_failed;
static int tracing;                     /* $CUENTRY_TRACE_DIR is set */
static const char *trace_dir;
static __thread const char *rt_symbol;  /* inside a runtime wrapper: the symbol it asked */

static int env_int(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) return 0;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    if (*end || x <= 0 || x > 0x7fffffff) return 0;
    return (int)x;
}

/* --- objects: which loaded object holds an address ----------------------------------- */
#define MAX_RANGES 256
struct range { uintptr_t start, end; int main_program; char path[CALLER_SIZE]; };
static struct range ranges[MAX_RANGES];
static int nranges;                     /* published with release */
static int file_caller[MAX_RANGES];     /* range -> caller index in the current file, -1 none */

struct find_ctx { uintptr_t addr; uintptr_t start, end; const char *name; int found; int first; };

static int find_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct find_ctx *c = data;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD) continue;
        uintptr_t s = info->dlpi_addr + ph->p_vaddr, e = s + ph->p_memsz;
        if (s < lo) lo = s;
        if (e > hi) hi = e;
    }
    int first = c->first;
    c->first = 0;
    if (lo < hi && c->addr >= lo && c->addr < hi) {
        c->start = lo; c->end = hi; c->name = info->dlpi_name; c->found = 1;
        c->first = first;
        return 1;
    }
    return 0;
}

static void copy_str(char *dst, const char *src, size_t n) {
    size_t i = 0;
    if (src) for (; i + 1 < n && src[i]; i++) dst[i] = src[i];
    dst[i] = 0;
}

static void exe_path(char *buf, size_t n) {
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    buf[k > 0 ? (size_t)k : 0] = 0;
}

/* The range index of the object that holds addr, or -1. Hits take no lock. */
static int range_of(const void *addr) {
    uintptr_t a = (uintptr_t)addr;
    int n = __atomic_load_n(&nranges, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (a >= ranges[i].start && a < ranges[i].end) return i;
    if (holding) return -1;
    struct find_ctx c = {a, 0, 0, NULL, 0, 1};
    dl_iterate_phdr(find_cb, &c);
    if (!c.found) return -1;
    take();
    n = nranges;
    int idx = -1;
    for (int i = 0; i < n; i++)
        if (a >= ranges[i].start && a < ranges[i].end) { idx = i; break; }
    if (idx < 0 && n < MAX_RANGES) {
        struct range *r = &ranges[n];
        r->start = c.start; r->end = c.end;
        r->main_program = c.first || !c.name || !c.name[0];
        if (r->main_program) exe_path(r->path, sizeof r->path);
        else copy_str(r->path, c.name, sizeof r->path);
        file_caller[n] = -1;
        idx = n;
        __atomic_store_n(&nranges, n + 1, __ATOMIC_RELEASE);
    }
    give();
    return idx;
}

/* --- driver exports: which export a pointer equals ---------------------------------- */
#define MAX_MAPS 8
struct addr_idx { uintptr_t addr; int idx; };
struct export_map { int range; size_t n; struct addr_idx *v; };
static struct export_map maps[MAX_MAPS];
static int nmaps;

static int cmp_addr(const void *a, const void *b) {
    uintptr_t x = ((const struct addr_idx *)a)->addr, y = ((const struct addr_idx *)b)->addr;
    return x < y ? -1 : x > y;
}

static const struct export_map *map_for(int range) {
    int n = __atomic_load_n(&nmaps, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) if (maps[i].range == range) return &maps[i];
    if (holding || n >= MAX_MAPS || ranges[range].main_program) return NULL;
    /* Built without holding our lock: dlopen takes the loader's lock, and a thread inside
     * the loader (running a constructor) may call dlsym and then need ours. */
    struct addr_idx *v = malloc(sizeof *v * N_EXPORTS);
    if (!v) return NULL;
    size_t k = 0;
    void *h = dlopen(ranges[range].path, RTLD_NOLOAD | RTLD_LAZY);
    if (h) {
        for (size_t i = 0; i < N_EXPORTS; i++) {
            void *p = get_real_dlsym()(h, EXPORTS[i].name);
            if (p) { v[k].addr = (uintptr_t)p; v[k].idx = (int)i; k++; }
        }
        dlclose(h);
        qsort(v, k, sizeof *v, cmp_addr);
    }
    take();
    const struct export_map *got = NULL;
    for (int i = 0; i < nmaps; i++) if (maps[i].range == range) got = &maps[i];
    if (!got && nmaps < MAX_MAPS) {
        struct export_map *m = &maps[nmaps];
        m->range = range; m->n = k; m->v = v;
        got = m;
        v = NULL;
        __atomic_store_n(&nmaps, nmaps + 1, __ATOMIC_RELEASE);
    }
    give();
    free(v);
    return got;
}

/* The index in EXPORTS of the export p equals: -1 NULL, -2 no export. */
static int own_export(const void *p);

static int export_of(const void *p) {
    if (!p) return -1;
    int own = own_export(p);
    if (own != -3) return own;
    int r = range_of(p);
    if (r < 0) return -2;
    const struct export_map *m = map_for(r);
    if (!m) return -2;
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->v[mid].addr < (uintptr_t)p) lo = mid + 1; else hi = mid;
    }
    return (lo < m->n && m->v[lo].addr == (uintptr_t)p) ? m->v[lo].idx : -2;
}

/* --- catalog look-ups ---------------------------------------------------------------- */
static int find_export(const char *name) {
    size_t lo = 0, hi = N_EXPORTS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(EXPORTS[mid].name, name);
        if (c == 0) return (int)mid;
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return -1;
}

static const struct symbol_entry *find_symbol(const char *name) {
    size_t lo = 0, hi = N_SYMBOLS;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(SYMBOLS[mid].name, name);
        if (c == 0) return &SYMBOLS[mid];
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    return NULL;
}

/* --- the record file ---------------------------------------------------------------- */
static void fill_header(struct header *h) {
    memcpy(h->magic, MAGIC, 8);
    h->layout = LAYOUT;
    h->pid = (int32_t)getpid();
    h->ppid = (int32_t)getppid();
    h->emulated = emu_version;
    h->nslots = SLOTS;
    exe_path(h->exe, sizeof h->exe);
}

static int hdr_incomplete_space(void) {
    return map && (__atomic_load_n(&((struct header *)map)->incomplete, __ATOMIC_RELAXED) & INCOMPLETE_SPACE);
}
static void mark_space_exhausted(void) {
    if (map) __atomic_or_fetch(&((struct header *)map)->incomplete, INCOMPLETE_SPACE, __ATOMIC_RELAXED);
}

static char rec_path[4096];             /* this process's record file; "" none yet */
static int rec_fd = -1;                 /* open only between creating the file and mapping it */
static size_t backed_callers, backed_slots;  /* bytes of each region allocated so far */

/* Create p<pid>-<n>.rec (without stdio) and write its header: the trace then knows the
 * interposer loaded in this process. The header's page is allocated first; when even that
 * fails the file is left empty (the reader reports the process, its records lost). */
static void create_file(void) {
    static unsigned long seq;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        unsigned long n = __atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED);
        size_t dl = strlen(trace_dir);
        if (dl + 64 >= sizeof rec_path) break;
        memcpy(rec_path, trace_dir, dl);
        char *q = rec_path + dl;
        *q++ = '/'; *q++ = 'p';
        char digits[48]; int k = 0;
        unsigned long v = (unsigned long)getpid();
        do { digits[k++] = (char)('0' + v % 10); v /= 10; } while (v);
        while (k) *q++ = digits[--k];
        *q++ = '-';
        v = n + (unsigned long)attempt * 1000003UL;
        do { digits[k++] = (char)('0' + v % 10); v /= 10; } while (v);
        while (k) *q++ = digits[--k];
        memcpy(q, ".rec", 5);
        fd = open(rec_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) { rec_path[0] = 0; map_failed = 1; return; }
    static struct header h;             /* static: no 4 KiB on the stack of a constructor */
    memset(&h, 0, sizeof h);
    fill_header(&h);
    if (posix_fallocate(fd, 0, HEADER_SIZE) != 0 || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
        if (ftruncate(fd, 0) != 0) { /* nothing more to do: the empty file says it */ }
        close(fd);
        map_failed = 1;
        return;
    }
    close(fd);  /* reopened by its path when the first request comes */
}

/* Allocate the file's pages in [off, end) of a region whose first *backed bytes already are
 * (whole chunks, never beyond the region's end). 0 on success; on failure the header says
 * "record space exhausted" and nothing past *backed is ever touched. */
static int back(size_t region, size_t region_size, size_t *backed, size_t end) {
    if (end <= *backed) return 0;
    if (hdr_incomplete_space()) return -1;
    size_t want = (end + CHUNK - 1) / CHUNK * CHUNK;
    if (want > region_size) want = region_size;
    int fd = rec_fd >= 0 ? rec_fd : open(rec_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    int err = fd < 0 ? -1 : posix_fallocate(fd, (off_t)(region + *backed), (off_t)(want - *backed));
    if (fd >= 0 && fd != rec_fd) close(fd);
    if (err != 0) { mark_space_exhausted(); return -1; }
    *backed = want;
    return 0;
}

/* Called with the lock held: map this process's record file (once per process). */
static void open_map_locked(void) {
    if (map || map_failed || !tracing) return;
    if (!rec_path[0]) create_file();    /* a forked child: its own file, made on its first request */
    if (map_failed) return;
    int fd = rec_fd >= 0 ? rec_fd : open(rec_path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    rec_fd = -1;
    if (fd < 0) { map_failed = 1; return; }
    /* The size is sparse: only pages allocated by back() are ever touched. */
    if (ftruncate(fd, (off_t)FILE_SIZE) != 0) { close(fd); map_failed = 1; return; }
    void *m = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) { close(fd); map_failed = 1; return; }
    __atomic_store_n(&map, (char *)m, __ATOMIC_RELEASE);
    backed_callers = backed_slots = 0;
    rec_fd = fd;                        /* kept while the first chunks are allocated */
    back(CALLERS_OFF, MAX_CALLERS * CALLER_SIZE, &backed_callers, CALLER_SIZE);
    back(SLOTS_OFF, SLOTS * sizeof(struct slot), &backed_slots, sizeof(struct slot));
    rec_fd = -1;
    close(fd);  /* the mapping keeps the file; no descriptor is left for the program to trip on */
    for (int i = 0; i < MAX_RANGES; i++) file_caller[i] = -1;
}

static struct header *hdr(void) { return (struct header *)map; }
static char *callers_region(void) { return map + HEADER_SIZE; }
static struct slot *slots_region(void) { return (struct slot *)(map + HEADER_SIZE + MAX_CALLERS * CALLER_SIZE); }

/* The caller index (in this process's file) of the object holding ret. */
static int caller_index(const void *ret) {
    int r = range_of(ret);
    if (r < 0) return -1;
    int id = __atomic_load_n(&file_caller[r], __ATOMIC_ACQUIRE);
    if (id >= 0) return id;
    if (holding) return -1;
    take();
    id = file_caller[r];
    if (id < 0 && map) {
        struct header *h = hdr();
        uint32_t n = h->ncallers;
        for (uint32_t i = 0; i < n; i++)
            if (strcmp(callers_region() + (size_t)i * CALLER_SIZE, ranges[r].path) == 0) { id = (int)i; break; }
        if (id < 0 && n < MAX_CALLERS &&
            back(CALLERS_OFF, MAX_CALLERS * CALLER_SIZE, &backed_callers, (size_t)(n + 1) * CALLER_SIZE) == 0) {
            copy_str(callers_region() + (size_t)n * CALLER_SIZE, ranges[r].path, CALLER_SIZE);
            id = (int)n;
            __atomic_store_n(&h->ncallers, n + 1, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&file_caller[r], id, __ATOMIC_RELEASE);
    }
    give();
    return id;
}

struct request {
    int api; const char *symbol; int version; uint64_t flags; int result; int query;
    int status_given; int emulated; int export_idx; const void *ret;
    int pfn_null;               /* the caller passed no result pointer */
    uint32_t marks;             /* MARK_*: filled in by record() */
};

static uint32_t mix(uint32_t h, uint64_t v) {
    h ^= (uint32_t)v; h *= 16777619u; h ^= (uint32_t)(v >> 32); h *= 16777619u; return h;
}

static int same(const struct slot *s, const struct request *q, int caller, const char *exp) {
    return s->api == q->api && s->version == q->version && s->flags == q->flags && s->result == q->result &&
           s->query == q->query && s->caller == caller && s->status_given == (uint32_t)q->status_given &&
           s->emulated == (uint32_t)q->emulated && s->marks == q->marks && strncmp(s->symbol, q->symbol, SYMBOL_SIZE - 1) == 0 &&
           strcmp(s->export_name, exp) == 0;
}

static void fill_slot(struct slot *s, const struct request *q, int caller, const char *exp, uint32_t h) {
    s->hash = h; s->api = q->api; s->version = q->version; s->flags = q->flags; s->result = q->result;
    s->query = q->query; s->caller = caller; s->status_given = (uint32_t)q->status_given;
    s->emulated = (uint32_t)q->emulated;
    s->marks = q->marks;
    copy_str(s->symbol, q->symbol, SYMBOL_SIZE);
    copy_str(s->export_name, exp, EXPORT_SIZE);
    s->count = 1;
    __atomic_store_n(&s->state, 1, __ATOMIC_RELEASE);
}

static void note_driver(const void *gpa);

static void record(const struct request *q) {
    if (!tracing) return;
    if (holding) {
        if (map) __atomic_add_fetch(&hdr()->dropped, 1, __ATOMIC_RELAXED);
        return;
    }
    if (UNLIKELY(!__atomic_load_n(&map, __ATOMIC_ACQUIRE))) {
        if (__atomic_load_n(&map_failed, __ATOMIC_RELAXED)) return;  /* no record file: never retry */
        take();
        open_map_locked();
        give();
        if (!map) return;
    }
    const char *sym = q->symbol ? q->symbol : "";
    struct request r = *q;
    r.symbol = sym;
    r.marks = (q->symbol ? 0 : MARK_NULL_SYMBOL) | (q->pfn_null ? MARK_NULL_PFN : 0) |
              (strnlen(sym, SYMBOL_SIZE) >= SYMBOL_SIZE ? MARK_TRUNCATED : 0);
    const char *exp = r.export_idx >= 0 ? EXPORTS[r.export_idx].name : (r.export_idx == -2 ? "?" : "");
    int caller = caller_index(r.ret);
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < SYMBOL_SIZE - 1 && sym[i]; i++) h = mix(h, (unsigned char)sym[i]);
    h = mix(h, (uint64_t)(uint32_t)r.api << 32 | (uint32_t)r.version);
    h = mix(h, r.flags);
    h = mix(h, (uint64_t)(uint32_t)r.result << 32 | (uint32_t)r.query);
    h = mix(h, (uint64_t)(uint32_t)caller << 32 | (uint32_t)r.export_idx);
    h = mix(h, r.marks);
    /* Records are appended (few pages touched); this process's index finds them by hash. */
    struct slot *slots = slots_region();
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < INDEX_SIZE; i++) {
            uint32_t *cell = &slot_index[(h + i) % INDEX_SIZE];
            uint32_t k = __atomic_load_n(cell, __ATOMIC_ACQUIRE);
            if (k == 0) {
                if (pass == 0) break;  /* not there: insert under the lock */
                struct header *hd = hdr();
                if (hd->nrecords >= SLOTS) break;
                if (back(SLOTS_OFF, SLOTS * sizeof(struct slot), &backed_slots,
                         (size_t)(hd->nrecords + 1) * sizeof(struct slot)) != 0) break;
                struct slot *s = &slots[hd->nrecords];
                fill_slot(s, &r, caller, exp, h);
                __atomic_store_n(&hd->nrecords, hd->nrecords + 1, __ATOMIC_RELEASE);
                index_used = 1;
                __atomic_store_n(cell, hd->nrecords, __ATOMIC_RELEASE);
                give();
                return;
            }
            struct slot *s = &slots[k - 1];
            if (s->hash == h && same(s, &r, caller, exp)) {
                __atomic_add_fetch(&s->count, 1, __ATOMIC_RELAXED);
                if (pass == 1) give();
                return;
            }
        }
        if (pass == 0) take();
    }
    __atomic_add_fetch(&hdr()->dropped, 1, __ATOMIC_RELAXED);
    give();
}

/* --- wrapper pools: one wrapper per distinct real function ------------------------------ */
#define POOL 4
enum { W_GPA2, W_GPA1, W_RTBV, W_RT, W_VER, N_WRAPPED };
static const char *const wrapped_names[N_WRAPPED] = {
    "cuGetProcAddress_v2", "cuGetProcAddress", "cudaGetDriverEntryPointByVersion",
    "cudaGetDriverEntryPoint", "cuDriverGetVersion",
};
static void *pool_real[N_WRAPPED][POOL];
static void *pool_wrapper[N_WRAPPED][POOL];
static void *caller_real[N_WRAPPED][MAX_RANGES];

static int which_wrapped(const char *name) {
    if (name[0] != 'c' || name[1] != 'u') return -1;
    for (int i = 0; i < N_WRAPPED; i++) if (strcmp(name, wrapped_names[i]) == 0) return i;
    return -1;
}

static int is_our_wrapper(const void *p) {
    for (int w = 0; w < N_WRAPPED; w++)
        for (int i = 0; i < POOL; i++) if (pool_wrapper[w][i] == p) return 1;
    return 0;
}

/* The wrapper that forwards to real (claiming a pool slot), or real itself when the pool is full. */
static int own_export(const void *p);

static void *wrap(int w, void *real) {
    if (!real || is_our_wrapper(real) || own_export(real) != -3) return real;
    /* cuDriverGetVersion is only wrapped when emulating, but its real one is kept for our exports. */
    int keep_real = (w == W_VER && !emu_version);
    for (int i = 0; i < POOL; i++) {
        void *cur = __atomic_load_n(&pool_real[w][i], __ATOMIC_ACQUIRE);
        if (cur == real) return keep_real ? real : pool_wrapper[w][i];
        if (cur == NULL) {
            void *expected = NULL;
            if (__atomic_compare_exchange_n(&pool_real[w][i], &expected, real, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
                || expected == real)
                return keep_real ? real : pool_wrapper[w][i];
        }
    }
    if (keep_real) return real;
    if (tracing && map) __atomic_add_fetch(&hdr()->unwrapped, 1, __ATOMIC_RELAXED);
    return real;
}

/* --- the emulation rules -------------------------------------------------------------- */
/* 0: ask the real driver (with *version and *flags possibly adjusted);
 * 1: answer CUDA_ERROR_INVALID_VALUE (above the emulated driver);
 * 2: answer "symbol not found" (the symbol is newer than the emulated driver). */
static int emulate_request(const char *symbol, int *version, uint64_t *flags) {
    int emu = emu_version;
    if (!emu || !symbol || (*flags & ~(uint64_t)3)) return 0;
    if (*version > emu) return 1;
    const struct symbol_entry *s = find_symbol(symbol);
    if (s && s->first > emu) return 2;
    if (*version < 0) *version = emu;  /* "newest": the newest the emulated driver has */
    if (s && *flags == 2 && s->first_pt && s->first_pt > emu) *flags = 1;  /* no per-thread ABI yet */
    return 0;
}

/* After a successful answer: hand out our wrappers for the entry-point functions themselves. */
static void substitute(const char *symbol, void **pfn, int export_idx) {
    if (!symbol || !pfn || !*pfn || export_idx < 0) return;
    int w = which_wrapped(EXPORTS[export_idx].name);
    if (w == W_GPA1 || w == W_GPA2 || w == W_VER) *pfn = wrap(w, *pfn);
}

/* The export index of an answer, computed only when someone needs it. */
static int answer_export(const char *symbol, void *const *pfn, int rc) {
    if (!pfn || rc != 0) return -1;
    if (!tracing && !(symbol && (strcmp(symbol, "cuGetProcAddress") == 0 || strcmp(symbol, "cuDriverGetVersion") == 0)))
        return -1;
    return export_of(*pfn);
}

static int driver_noted;

/* The driver behind the first cuGetProcAddress seen: its path and real version, once. */
static void note_driver(const void *gpa) {
    if (!tracing || !map || !gpa || holding || __atomic_load_n(&driver_noted, __ATOMIC_ACQUIRE)) return;
    if (__atomic_exchange_n(&driver_noted, 1, __ATOMIC_ACQ_REL)) return;
    int r = range_of(gpa);
    if (r < 0 || ranges[r].main_program) return;
    int dv = 0;
    void *lib = dlopen(ranges[r].path, RTLD_NOLOAD | RTLD_LAZY);  /* not under our lock (see map_for) */
    ver_fn v = lib ? (ver_fn)get_real_dlsym()(lib, "cuDriverGetVersion") : NULL;
    if (v && v(&dv) != 0) dv = 0;
    if (lib) dlclose(lib);
    take();
    if (map) {
        copy_str(hdr()->driver_path, ranges[r].path, sizeof hdr()->driver_path);
        hdr()->driver_version = dv;
    }
    give();
}

static int runtime_duplicate(const char *symbol) {
    const char *outer = rt_symbol;
    return outer && symbol && strcmp(outer, symbol) == 0;
}

static CUresult do_gpa2(gpa2_fn real, const char *symbol, void **pfn, int version, uint64_t flags, int *status,
                        const void *ret) {
    if (!real) return 3; /* CUDA_ERROR_NOT_INITIALIZED: no driver behind this wrapper */
    int v = version; uint64_t f = flags;
    int st = -1, emulated = 1;
    CUresult rc;
    switch (emulate_request(symbol, &v, &f)) {
    case 1: rc = 1; break;
    case 2: rc = 0; st = 1; if (pfn) *pfn = NULL; if (status) *status = 1; break;
    default:
        emulated = (v != version || f != flags);
        rc = real(symbol, pfn, v, f, &st);
        if (status && st != -1) *status = st;
    }
    int exp = answer_export(symbol, pfn, rc);
    if (tracing && !runtime_duplicate(symbol)) {
        struct request q = {API_GPA2, symbol, version, flags, rc, st, status != NULL, emulated, exp, ret, pfn == NULL, 0};
        record(&q);
        note_driver((const void *)real);
    }
    substitute(symbol, pfn, exp);
    return rc;
}

static CUresult do_gpa1(gpa1_fn real, const char *symbol, void **pfn, int version, uint64_t flags, const void *ret) {
    if (!real) return 3;
    int v = version; uint64_t f = flags;
    int emulated = 1;
    CUresult rc;
    switch (emulate_request(symbol, &v, &f)) {
    case 1: rc = 1; break;
    case 2: rc = 500; if (pfn) *pfn = NULL; break;  /* CUDA_ERROR_NOT_FOUND, as a v1 driver says it */
    default:
        emulated = (v != version || f != flags);
        rc = real(symbol, pfn, v, f);
    }
    int exp = answer_export(symbol, pfn, rc);
    if (tracing && !runtime_duplicate(symbol)) {
        struct request q = {API_GPA1, symbol, version, flags, rc, -1, 0, emulated, exp, ret, pfn == NULL, 0};
        record(&q);
        note_driver((const void *)real);
    }
    substitute(symbol, pfn, exp);
    return rc;
}

static int do_rtbv(rtbv_fn real, const char *symbol, void **pfn, unsigned int version, unsigned long long flags,
                   int *status, const void *ret) {
    if (!real) return 3; /* cudaErrorInitializationError */
    int v = (int)version; uint64_t f = flags;
    int st = -1, emulated = 1, rc;
    switch (emulate_request(symbol, &v, &f)) {
    case 1: rc = 1; break;  /* cudaErrorInvalidValue */
    case 2: rc = 0; st = 1; if (pfn) *pfn = NULL; if (status) *status = 1; break;
    default: {
        emulated = (v != (int)version || f != flags);
        const char *saved = rt_symbol;
        rt_symbol = symbol;
        rc = real(symbol, pfn, (unsigned int)v, f, &st);
        rt_symbol = saved;
        if (status && st != -1) *status = st;
    }
    }
    int exp = answer_export(symbol, pfn, rc);
    if (tracing && !runtime_duplicate(symbol)) {  /* a runtime's deprecated entry forwarding to this one */
        struct request q = {API_RTBV, symbol, (int)version, flags, rc, st, status != NULL, emulated, exp, ret, pfn == NULL, 0};
        record(&q);
    }
    substitute(symbol, pfn, exp);
    return rc;
}

static int do_rt(rt_fn real, const char *symbol, void **pfn, unsigned long long flags, int *status, const void *ret) {
    if (!real) return 3;
    int st = -1;
    const char *saved = rt_symbol;
    rt_symbol = symbol;
    int rc = real(symbol, pfn, flags, &st);
    rt_symbol = saved;
    if (status && st != -1) *status = st;
    int exp = answer_export(symbol, pfn, rc);
    if (tracing) {
        struct request q = {API_RT, symbol, 0, flags, rc, st, status != NULL, 0, exp, ret, pfn == NULL, 0};
        record(&q);
    }
    substitute(symbol, pfn, exp);
    return rc;
}

static CUresult do_ver(ver_fn real, int *out) {
    if (!real) return 3;
    CUresult rc = real(out);
    if (rc == 0 && out && emu_version && *out > emu_version) *out = emu_version;
    return rc;
}

/* The pool wrappers (what dlsym and cuGetProcAddress hand out). */
#define POOL_WRAPPERS(i)                                                                                        \
    static CUresult pw_gpa2_##i(const char *s, void **p, int v, uint64_t f, int *st) {                          \
        return do_gpa2((gpa2_fn)pool_real[W_GPA2][i], s, p, v, f, st, __builtin_return_address(0));            \
    }                                                                                                           \
    static CUresult pw_gpa1_##i(const char *s, void **p, int v, uint64_t f) {                                  \
        return do_gpa1((gpa1_fn)pool_real[W_GPA1][i], s, p, v, f, __builtin_return_address(0));                \
    }                                                                                                           \
    static int pw_rtbv_##i(const char *s, void **p, unsigned int v, unsigned long long f, int *st) {           \
        return do_rtbv((rtbv_fn)pool_real[W_RTBV][i], s, p, v, f, st, __builtin_return_address(0));            \
    }                                                                                                           \
    static int pw_rt_##i(const char *s, void **p, unsigned long long f, int *st) {                             \
        return do_rt((rt_fn)pool_real[W_RT][i], s, p, f, st, __builtin_return_address(0));                     \
    }                                                                                                           \
    static CUresult pw_ver_##i(int *o) { return do_ver((ver_fn)pool_real[W_VER][i], o); }
POOL_WRAPPERS(0)
POOL_WRAPPERS(1)
POOL_WRAPPERS(2)
POOL_WRAPPERS(3)

static void init_pools(void) {
#define SET(i)                                                                                                  \
    pool_wrapper[W_GPA2][i] = (void *)pw_gpa2_##i; pool_wrapper[W_GPA1][i] = (void *)pw_gpa1_##i;             \
    pool_wrapper[W_RTBV][i] = (void *)pw_rtbv_##i; pool_wrapper[W_RT][i] = (void *)pw_rt_##i;                 \
    pool_wrapper[W_VER][i] = (void *)pw_ver_##i;
    SET(0) SET(1) SET(2) SET(3)
#undef SET
}

/* --- the exported definitions (callers that link libcuda/libcudart directly) ----------- */
/* Whether p lies in this library (our own exported definitions). */
static int is_ours(const void *p) {
    static int self = -2;
    int me = __atomic_load_n(&self, __ATOMIC_ACQUIRE);
    if (me == -2) { me = range_of((const void *)init_pools); __atomic_store_n(&self, me, __ATOMIC_RELEASE); }
    return p && me >= 0 && range_of(p) == me;
}

/* The first definition of name in any loaded object other than this one (a driver loaded
 * RTLD_LOCAL is invisible to RTLD_NEXT). Paths are collected first: no dlopen inside the
 * loader's iteration. */
#define MAX_SEARCH 128
struct collect_ctx { int n; char (*paths)[CALLER_SIZE]; };
static int collect_cb(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    struct collect_ctx *c = data;
    if (info->dlpi_name && info->dlpi_name[0] == '/' && c->n < MAX_SEARCH) copy_str(c->paths[c->n++], info->dlpi_name, CALLER_SIZE);
    return 0;
}
static void *search_loaded(const char *name) {
    char (*paths)[CALLER_SIZE] = malloc(sizeof(char[CALLER_SIZE]) * MAX_SEARCH);
    if (!paths) return NULL;
    struct collect_ctx c = {0, paths};
    dl_iterate_phdr(collect_cb, &c);
    void *found = NULL;
    for (int i = 0; i < c.n && !found; i++) {
        void *h = dlopen(paths[i], RTLD_NOLOAD | RTLD_LAZY);
        if (!h) continue;
        void *p = get_real_dlsym()(h, name);
        dlclose(h);
        if (p && !is_ours(p)) found = p;
    }
    free(paths);
    return found;
}

/* The definition the caller's own scope sees (its libcuda), else the next one after us. */
static void *real_for_caller(int w, const void *ret) {
    int r = range_of(ret);
    if (r >= 0) {
        void *got = __atomic_load_n(&caller_real[w][r], __ATOMIC_ACQUIRE);
        if (got) return got;
    }
    dlsym_fn rd = get_real_dlsym();
    void *p = NULL;
    if (r >= 0 && !ranges[r].main_program) {
        void *h = dlopen(ranges[r].path, RTLD_NOLOAD | RTLD_LAZY);
        if (h) { p = rd(h, wrapped_names[w]); dlclose(h); }
    }
    if (!p || is_ours(p)) p = rd(RTLD_NEXT, wrapped_names[w]);
    if (is_ours(p)) p = NULL;
    /* A driver whose own references bind to our definitions (no -Bsymbolic) hands them out
     * from cuGetProcAddress; a caller reached that way may not see the driver itself:
     * use the driver seen through dlsym. */
    for (int i = 0; !p && i < POOL; i++) p = __atomic_load_n(&pool_real[w][i], __ATOMIC_ACQUIRE);
    if (!p) p = search_loaded(wrapped_names[w]);
    if (p && r >= 0) __atomic_store_n(&caller_real[w][r], p, __ATOMIC_RELEASE);
    return p;
}

EXPORT CUresult cuGetProcAddress_v2(const char *s, void **p, int v, uint64_t f, int *st) {
    const void *ret = __builtin_return_address(0);
    return do_gpa2((gpa2_fn)real_for_caller(W_GPA2, ret), s, p, v, f, st, ret);
}
EXPORT CUresult cuGetProcAddress(const char *s, void **p, int v, uint64_t f) {
    const void *ret = __builtin_return_address(0);
    return do_gpa1((gpa1_fn)real_for_caller(W_GPA1, ret), s, p, v, f, ret);
}
EXPORT int cudaGetDriverEntryPointByVersion(const char *s, void **p, unsigned int v, unsigned long long f, int *st) {
    const void *ret = __builtin_return_address(0);
    return do_rtbv((rtbv_fn)real_for_caller(W_RTBV, ret), s, p, v, f, st, ret);
}
EXPORT int cudaGetDriverEntryPoint(const char *s, void **p, unsigned long long f, int *st) {
    const void *ret = __builtin_return_address(0);
    return do_rt((rt_fn)real_for_caller(W_RT, ret), s, p, f, st, ret);
}
EXPORT CUresult cuDriverGetVersion(int *o) {
    return do_ver((ver_fn)real_for_caller(W_VER, __builtin_return_address(0)), o);
}

/* Our exported definitions stand for the driver's exports of the same name: -3 when p is none. */
static int own_export(const void *p) {
    static const void *const own[] = {
        (const void *)cuGetProcAddress_v2, (const void *)cuGetProcAddress, (const void *)cudaGetDriverEntryPointByVersion,
        (const void *)cudaGetDriverEntryPoint, (const void *)cuDriverGetVersion,
    };
    for (int w = 0; w < N_WRAPPED; w++) if (own[w] == p) return find_export(wrapped_names[w]) >= 0 ? find_export(wrapped_names[w]) : -2;
    return -3;
}

/* --- dlsym ------------------------------------------------------------------------------ */
static int is_driver_name(const char *name) {
    return name[0] == 'c' && name[1] == 'u' && name[2] >= 'A' && name[2] <= 'Z';
}

/* An export the emulated driver does not have: dlerror() must say why, as for any missing symbol (callers such
 * as ctypes read dlerror() after a NULL, and a NULL message crashes them). A lookup of a name no library has
 * sets the loader's own error state; the name says what happened. */
static void hidden_error(dlsym_fn rd, void *handle, const char *name, int first) {
    char why[256];
    int n = 0;
    while (name[n] && n < 128) n++;
    memcpy(why, name, (size_t)n);
    static const char said[] = " (not in the emulated driver: cuentry emulate; first in driver ";
    memcpy(why + n, said, sizeof said - 1);
    n += (int)(sizeof said - 1);
    int major = first / 1000, minor = (first % 1000) / 10;
    char digits[16];
    int k = 0;
    do { digits[k++] = (char)('0' + minor % 10); minor /= 10; } while (minor && k < 4);
    digits[k++] = '.';
    do { digits[k++] = (char)('0' + major % 10); major /= 10; } while (major && k < 12);
    while (k) why[n++] = digits[--k];
    why[n++] = ')';
    why[n] = 0;
    (void)rd(handle, why);
}

/* The slow path of dlsym: a cu* name from a handle other than RTLD_NEXT. */
static void *__attribute__((noinline)) dlsym_driver_name(void *handle, const char *name, const void *ret) {
    dlsym_fn rd = get_real_dlsym();
    int idx = find_export(name);
    int w = which_wrapped(name);
    void *p;
    int emulated = 0;
    if (emu_version && idx >= 0 && EXPORTS[idx].version > emu_version) {
        p = NULL;
        emulated = 1;
        hidden_error(rd, handle, name, EXPORTS[idx].version);
    } else {
        p = rd(handle, name);
        /* Our own exported definitions answer for a driver only when one is loaded. */
        if (w >= 0 && is_ours(p)) p = rd(RTLD_NEXT, name);
    }
    if (tracing && is_driver_name(name)) {
        int exp = p ? export_of(p) : -1;
        struct request q = {API_DLSYM, name, 0, 0, p ? 0 : -1, -1, 0, emulated, exp, ret, 0, 0};
        record(&q);
        if (exp >= 0 && !is_ours(p)) note_driver(p);
    }
    return w >= 0 ? wrap(w, p) : p;
}

EXPORT void *dlsym(void *handle, const char *name) {
    if (handle != RTLD_NEXT && name && name[0] == 'c' && name[1] == 'u' && (tracing || emu_version))
        return dlsym_driver_name(handle, name, __builtin_return_address(0));
    dlsym_fn rd = get_real_dlsym();
    return rd(handle, name);  /* a tail call: the real dlsym sees our caller's return address */
}

/* --- dlopen: $CUENTRY_DRIVER for programs that open the driver by its name ----------- */
typedef void *(*dlopen_fn)(const char *, int);
static char driver_override[4096];      /* $CUENTRY_DRIVER when absolute, else "" */
static dlopen_fn real_dlopen_ptr;

static dlopen_fn get_real_dlopen(void) {
    dlopen_fn f = __atomic_load_n(&real_dlopen_ptr, __ATOMIC_ACQUIRE);
    if (LIKELY(f != NULL)) return f;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.1", "GLIBC_2.0"};
    for (size_t i = 0; i < sizeof versions / sizeof versions[0] && !f; i++)
        f = (dlopen_fn)dlvsym(RTLD_NEXT, "dlopen", versions[i]);
    __atomic_store_n(&real_dlopen_ptr, f, __ATOMIC_RELEASE);
    return f;
}

/* The names a program opens the driver by (through the loader's search), never a path. */
static int is_driver_soname(const char *file) {
    return strcmp(file, "libcuda.so.1") == 0 || strcmp(file, "libcuda.so") == 0;
}

EXPORT void *dlopen(const char *file, int mode) {
    dlopen_fn rd = get_real_dlopen();
    if (UNLIKELY(driver_override[0] != 0) && file && is_driver_soname(file))
        return rd(driver_override, mode);  /* the driver named, or NULL with its dlerror: never another */
    return rd(file, mode);  /* a tail call: the real dlopen sees our caller (its RUNPATH, $ORIGIN) */
}

/* --- process life ------------------------------------------------------------------------ */
static void at_fork_prepare(void) { pthread_mutex_lock(&lock); }
static void at_fork_parent(void) { pthread_mutex_unlock(&lock); }
static void at_fork_child(void) {
    pthread_mutex_init(&lock, NULL);
    holding = 0;
    if (map) munmap(map, FILE_SIZE);  /* the parent's file stays the parent's; the child gets its own */
    map = NULL;
    map_failed = 0;
    rec_path[0] = 0;                  /* made on the child's first request */
    rec_fd = -1;
    driver_noted = 0;
    if (index_used) memset(slot_index, 0, sizeof slot_index);  /* untouched pages stay unallocated */
    index_used = 0;
    for (int i = 0; i < MAX_RANGES; i++) file_caller[i] = -1;
}

__attribute__((constructor)) static void cuentry_interposer_init(void) {
    init_pools();
    get_real_dlsym();
    get_real_dlopen();
    emu_version = env_int("CUENTRY_EMULATE_DRIVER");
    const char *dir = getenv("CUENTRY_TRACE_DIR");
    if (dir && dir[0] == '/') {
        static char dir_copy[3072];
        copy_str(dir_copy, dir, sizeof dir_copy);
        trace_dir = dir_copy;
        tracing = strlen(dir) < sizeof dir_copy;
        if (tracing) create_file();   /* the trace knows this process loaded the interposer */
    }
    const char *drv = getenv("CUENTRY_DRIVER");
    if (drv && drv[0] == '/' && strlen(drv) < sizeof driver_override) copy_str(driver_override, drv, sizeof driver_override);
    pthread_atfork(at_fork_prepare, at_fork_parent, at_fork_child);
}

EXPORT const char cuentryInterposer[] = "cuentry interposer";
