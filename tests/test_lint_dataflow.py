"""The dataflow analysis under the C rules (issue 38): facts computed, whatever the spelling.

Each test states the fact of the language it checks; the metamorphic generator in tests/lint_variants checks the
same facts in many more spellings."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from cuentry.cli import main
from cuentry.lint import lint_paths
from cuentry.lint.engine import Settings


def _clang() -> None:
    from cuentry.lint import clang

    if not clang.available():
        pytest.skip("libclang is not installed (the lint extra)")


HEAD = "#include <cuda.h>\n#include <cudaTypedefs.h>\n#include <dlfcn.h>\n#include <string.h>\n"


def _lint(tmp_path: Path, body: str, name: str = "loader.c", toolkit: str | None = "13.0",
          pedantic: bool = False) -> set[tuple[int, str, str]]:
    (tmp_path / name).write_text(HEAD + textwrap.dedent(body))
    rep = lint_paths([str(tmp_path / name)], settings=Settings(toolkit=toolkit, pedantic=pedantic))
    assert not rep.problems, rep.problems
    return {(f.line - HEAD.count("\n"), f.code, f.severity) for f in rep.findings}


def test_a_call_through_a_pointer_bound_to_an_export_is_a_call_of_that_export(tmp_path: Path) -> None:
    """The seed's canonical fault through pointers: the version query and the getter are both called through
    pointers dlsym bound, in two functions; the version asked at is the driver's (CE001)."""
    _clang()
    got = _lint(tmp_path, """\
        static int ver;
        static CUresult (*gv)(int *);
        static CUresult (*gpa)(const char *, void **, int, cuuint64_t);
        static PFN_cuCtxGetDevice_v2000 get_device;
        void init(void *h) {
          gv = (CUresult (*)(int *))dlsym(h, "cuDriverGetVersion");
          gpa = (CUresult (*)(const char *, void **, int, cuuint64_t))dlsym(h, "cuGetProcAddress");
          gv(&ver);
        }
        int load(void) { return gpa("cuCtxGetDevice", (void **)&get_device, ver, 0); }
        """)
    assert (10, "CE001", "error") in got


def test_a_function_whose_parameter_reaches_a_lookup_is_a_lookup_row_by_row(tmp_path: Path) -> None:
    """A wrapper of any name that passes its parameter to dlsym and stores through another, called in a loop over
    a constant table: each row's name binds into that row's pointer only (the unversioned cuMemAlloc, the 2000
    ABI, into a 3020 typedef: CE011, at the row that names it; the other rows are right and silent)."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuMemAlloc_v3020 p_alloc;
        static PFN_cuMemFree_v3020 p_free;
        static PFN_cuInit_v2000 p_init;
        static int fetch(void *h, const char *n, void **out) { *out = dlsym(h, n); return *out != 0; }
        static const struct { const char *n; void **p; } rows[] = {
          {"cuMemAlloc", (void **)&p_alloc}, {"cuMemFree_v2", (void **)&p_free}, {"cuInit", (void **)&p_init}};
        int load(void *h) {
          for (unsigned i = 0; i < sizeof rows / sizeof *rows; i++) if (!fetch(h, rows[i].n, rows[i].p)) return -1;
          return 0;
        }
        """)
    assert got == {(6, "CE011", "error")}


def test_a_lookup_whose_body_is_not_seen_is_known_by_what_it_is_given(tmp_path: Path) -> None:
    """A function declared but not defined here, given a driver export's name and a pointer to a pointer, fills
    it with that export (a GLib-style `lookup`); a name of another library given to it is nothing of ours."""
    _clang()
    got = _lint(tmp_path, """\
        int lookup(void *lib, const char *name, void **out);
        static PFN_cuMemAlloc_v3020 p_alloc;
        static void (*p_other)(void);
        int load(void *lib) {
          return lookup(lib, "cuMemAlloc", (void **)&p_alloc) && lookup(lib, "cudnnCreate", (void **)&p_other);
        }
        """)
    assert got == {(5, "CE011", "error")}


def test_memcpy_stores_keep_a_tables_rows_together(tmp_path: Path) -> None:
    """`memcpy(row->dest, &tmp, sizeof tmp)` after a request of `row->name`: the bytes land in that row's pointer
    only; every row right is silent, one row wrong is one error, at that row."""
    _clang()
    body = """\
        static PFN_cuCtxGetDevice_v2000 a;
        static PFN_cuInit_v2000 b;
        struct row { const char *name; void **dest; int version; };
        static const struct row rows[] = {{"cuCtxGetDevice", (void **)&a, VA}, {"cuInit", (void **)&b, 2000}};
        int load(void) {
          for (size_t i = 0; i < 2; ++i) {
            const struct row *e = &rows[i];
            void *tmp = NULL;
            CUdriverProcAddressQueryResult st;
            if (cuGetProcAddress(e->name, &tmp, e->version, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st) || st) return -1;
            memcpy(e->dest, &tmp, sizeof tmp);
          }
          return 0;
        }
        """
    assert _lint(tmp_path, body.replace("VA", "2000")) == set()
    assert _lint(tmp_path, body.replace("VA", "13000")) == {(4, "CE002", "error")}


@pytest.mark.parametrize("how", ["caller", "helper", "static", "field"])
def test_the_drivers_version_reaches_the_pin_by_any_route(tmp_path: Path, how: str) -> None:
    """The driver's version is the pin whether it comes in as a caller's argument, a helper's return, a static
    another function sets, or a struct field (CE001 each time)."""
    _clang()
    routes = {
        "caller": ("static int get(const char *n, void **p, int v) {\n"
                   "  CUdriverProcAddressQueryResult q; return cuGetProcAddress(n, p, v, 0, &q) || q; }\n"
                   "int load(void) { int v; cuDriverGetVersion(&v); return get(\"cuCtxGetDevice\", (void **)&p, v); }\n"),
        "helper": ("static int version(void) { int v = 0; cuDriverGetVersion(&v); return v; }\n"
                   "int load(void) { CUdriverProcAddressQueryResult q;\n"
                   "  return cuGetProcAddress(\"cuCtxGetDevice\", (void **)&p, version(), 0, &q) || q; }\n"),
        "static": ("static int v;\nvoid init(void) { cuDriverGetVersion(&v); }\n"
                   "int load(void) { CUdriverProcAddressQueryResult q;\n"
                   "  return cuGetProcAddress(\"cuCtxGetDevice\", (void **)&p, v, 0, &q) || q; }\n"),
        "field": ("static struct { int version; } st;\nvoid init(void) { cuDriverGetVersion(&st.version); }\n"
                  "int load(void) { CUdriverProcAddressQueryResult q;\n"
                  "  return cuGetProcAddress(\"cuCtxGetDevice\", (void **)&p, st.version, 0, &q) || q; }\n"),
    }
    got = _lint(tmp_path, "static PFN_cuCtxGetDevice_v2000 p;\n" + routes[how])
    assert {c for _, c, s in got if s == "error"} == {"CE001"}


def test_a_local_assigned_again_holds_the_last_value(tmp_path: Path) -> None:
    """`int ver = 0; ver = 2000;`: the request asks at 2000, not at 0 (an assignment replaces a local's value);
    a zero initializer of a static set elsewhere is the value before it is set, not a pin."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuCtxGetDevice_v2000 p;
        static int g = 0;
        void set(void) { g = 2000; }
        int load(void) {
          int ver = 0;
          ver = 2000;
          CUdriverProcAddressQueryResult q;
          if (cuGetProcAddress("cuCtxGetDevice", (void **)&p, ver, 0, &q) || q) return 1;
          return cuGetProcAddress("cuCtxGetDevice", (void **)&p, g, 0, &q) || q;
        }
        """)
    assert got == set()


def test_a_query_result_a_lambda_captures_is_tested_where_it_is_declared(tmp_path: Path) -> None:
    """The status a lambda passes to the getter by reference and its enclosing function tests: tested (no
    CE006); never tested anywhere: CE006."""
    _clang()
    body = """\
        static PFN_cuMemAlloc_v3020 p;
        int load(void) {
          CUdriverProcAddressQueryResult q;
          auto get = [&](const char *n, void **out) {
            return cuGetProcAddress(n, out, 3020, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q); };
          CUresult r = get("cuMemAlloc", (void **)&p);
          return TEST;
        }
        """
    assert _lint(tmp_path, body.replace("TEST", "r != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS"),
                 name="loader.cpp") == set()
    assert {c for _, c, _ in _lint(tmp_path, body.replace("TEST", "r != CUDA_SUCCESS"), name="loader.cpp")} == {
        "CE006"}


def test_a_file_is_judged_against_the_headers_its_getter_calls_compile_with(tmp_path: Path) -> None:
    """A 4-argument cuGetProcAddress compiles only against an 11.x cuda.h: without --toolkit the file is judged
    against the newest 11.x release's headers, and its requests are judged (not lost to the arity error)."""
    _clang()
    (tmp_path / "old.cpp").write_text(HEAD + "static PFN_cuCtxCreate_v3020 p;\n"
                                      "int load() { return cuGetProcAddress(\"cuCtxCreate\", (void**)&p, 11040, "
                                      "CU_GET_PROC_ADDRESS_LEGACY_STREAM); }\n")
    rep = lint_paths([str(tmp_path / "old.cpp")], settings=Settings())
    assert [(f.code, f.severity) for f in rep.findings] == [("CE002", "error")]
    (j,) = rep.judged
    assert "11." in j.headers and (j.requests, j.judged) == (1, 1)


def test_a_lookup_of_a_name_no_driver_exports_never_resolves(tmp_path: Path) -> None:
    """dlsym of a misspelled driver name, of a suffix the entry point never had, or of a driver function's name no
    toolkit declares and no driver exports: CE003 (the lookup never resolves); another library's name is not ours
    to judge, nor a Direct3D interop function (headers the catalog does not read), nor a real export no header
    declares."""
    _clang()
    got = _lint(tmp_path, """\
        void load(void *h) {
          void *a = dlsym(h, "cuCtxSyncronize");
          void *b = dlsym(h, "cuMemAlloc_v7");
          void *c = dlsym(h, "cudnnCreate");
          void *d = dlsym(h, "cublasCreate_v2");
          void *e = dlsym(h, "cuDevResourceDestroyDesc");
          void *f = dlsym(h, "cuD3D11GetDevice");
          void *g = dlsym(h, "cuEGLApiInit");
          void *i = dlsym(h, "cuvidCreateDecoder");
          (void)a; (void)b; (void)c; (void)d; (void)e; (void)f; (void)g; (void)i;
        }
        """)
    assert got == {(2, "CE003", "error"), (3, "CE003", "error"), (6, "CE003", "error")}


def test_the_runtimes_version_is_a_release_number_not_a_pin(tmp_path: Path) -> None:
    """cudaRuntimeGetVersion's answer as the pin binds whatever ABI is newest at that release (CE001)."""
    _clang()
    got = _lint(tmp_path, """\
        #include <cuda_runtime_api.h>
        static PFN_cuCtxCreate_v3020 p;
        int load(void) {
          int rt = 0;
          cudaRuntimeGetVersion(&rt);
          CUdriverProcAddressQueryResult q;
          return cuGetProcAddress("cuCtxCreate", (void **)&p, rt, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q;
        }
        """)
    assert {(c, s) for _, c, s in got} == {("CE001", "error")}


def test_json_says_how_many_times_a_file_was_parsed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--json` carries each C file's parses (the cost the issue bounds: two per configuration for a loader)."""
    _clang()
    (tmp_path / "a.c").write_text(HEAD + "static PFN_cuInit_v2000 p;\nint f(void) { CUdriverProcAddressQueryResult q;"
                                  " return cuGetProcAddress(\"cuInit\", (void **)&p, 2000, 0, &q) || q; }\n")
    assert main(["lint", "--json", "--toolkit", "13.0", str(tmp_path / "a.c")]) == 0
    (row,) = json.loads(capsys.readouterr().out)["judged"]
    assert 1 <= row["parses"] <= 2


def test_a_table_filled_in_a_loop_keeps_each_rows_export_in_its_slot(tmp_path: Path) -> None:
    """`t[i].fn = dlsym(h, t[i].name)` in a loop stores each row's export in that row's slot; a slot read at a
    constant index (an enumerator) and called through a cast is that row's export only: the wrong ABI of one row
    is one error, the other row's own ABI a note (no row's export lands in another's cast)."""
    _clang()
    (tmp_path / "slots.c").write_text(HEAD + textwrap.dedent("""\
        typedef struct { const char *name; void *fn; } entry_t;
        enum { E_INIT, E_MEMGETINFO, E_END };
        static entry_t table[] = {{"cuInit", 0}, {"cuMemGetInfo", 0}};
        void fill(void *h) { for (int i = 0; i < E_END; i++) table[i].fn = dlsym(h, table[i].name); }
        CUresult info(size_t *f, size_t *t) { return ((CUresult (*)(size_t *, size_t *))table[E_MEMGETINFO].fn)(f, t); }
        CUresult init(unsigned int fl) { return ((CUresult (*)(unsigned int))table[E_INIT].fn)(fl); }
        """))
    rep = lint_paths([str(tmp_path / "slots.c")], settings=Settings(toolkit="13.0", pedantic=True))
    got = sorted((f.code, f.severity, f.message.split(")")[0]) for f in rep.findings)
    assert got == [("CE004", "note", "dlsym('cuInit'"), ("CE011", "error", "dlsym('cuMemGetInfo'")]


def test_a_runtime_function_taken_by_name_is_not_a_misspelt_driver_function(tmp_path: Path) -> None:
    """`cudaMemcpyAsync` (the runtime's, an interposer's next definition) is close to `cuMemcpyAsync` but is another
    library's name: no CE003."""
    _clang()
    got = _lint(tmp_path, """\
        void *next(void) { return dlsym(RTLD_NEXT, "cudaMemcpyAsync"); }
        """)
    assert got == set()


def test_the_length_of_a_constant_string_is_known(tmp_path: Path) -> None:
    """strlen of a constant string is its length: a name built by a condition on it (a macro's optional suffix,
    `strlen(s) > 0 ? base "_" s : base`) is the branch the length picks, never the one it rules out; the empty
    suffix looks up the export as written (no CE003), a real suffix looks up that ABI."""
    _clang()
    got = _lint(tmp_path, """\
        #define NAME(base, sfx) (strlen(sfx) > 0 ? #base "_" sfx : #base)
        void *a, *b;
        void load(void *h) {
          a = dlsym(h, NAME(cuCtxSynchronize, ""));
          b = dlsym(h, NAME(cuMemAlloc, "v2"));
        }
        """)
    assert all(code != "CE003" for _, code, _ in got), got


def test_a_projects_own_copy_of_an_enum_is_passed_as_its_integer(tmp_path: Path) -> None:
    """A loader that declares its own `CUresult`-like enum (no cuda.h) passes it as the integer it is: a pointer
    type spelled with it is the export's type (no CE011); a parameter passed in another register (a float for a
    device pointer) is still wrong."""
    _clang()
    (tmp_path / "own.c").write_text(textwrap.dedent("""\
        #include <dlfcn.h>
        #include <stddef.h>
        typedef enum my_status { MY_OK = 0, MY_BAD = 1 } my_status;
        typedef unsigned long long my_ptr;
        static my_status (*mem_alloc)(my_ptr *, size_t);
        static my_status (*mem_free)(float);
        void load(void *h) {
          mem_alloc = (my_status (*)(my_ptr *, size_t))dlsym(h, "cuMemAlloc_v2");
          mem_free = (my_status (*)(float))dlsym(h, "cuMemFree_v2");
        }
        """))
    rep = lint_paths([str(tmp_path / "own.c")], settings=Settings(toolkit="13.0"))
    assert not rep.problems, rep.problems
    got = {(f.line, f.code) for f in rep.findings}
    assert (8, "CE011") not in got and (9, "CE011") in got, got


def test_a_parameter_declared_as_an_array_is_a_pointer(tmp_path: Path) -> None:
    """`const char name[]` as a parameter is `const char *name` (C11 6.7.6.3p7): its value is what the caller
    passed, through any number of calls (a template's and a helper's, as a loader macro expands them)."""
    _clang()
    got = _lint(tmp_path, """\
        using gpa_t = CUresult (*)(const char *, void **, int, cuuint64_t);
        static void *load_impl(gpa_t gpa, const char name[], int ver) {
          void *ret = nullptr;
          return gpa(name, &ret, ver, CU_GET_PROC_ADDRESS_DEFAULT) ? nullptr : ret;
        }
        template <typename F> void load(gpa_t gpa, const char name[], F **dest, int ver) {
          *dest = reinterpret_cast<F *>(load_impl(gpa, name, ver));
        }
        struct Api { gpa_t gpa; PFN_cuMemAllocAsync_v11020 alloc_async; void read(); };
        void Api::read() {
          gpa = reinterpret_cast<gpa_t>(dlsym(RTLD_DEFAULT, "cuGetProcAddress"));
          load(gpa, "cuMemAllocAsync", &alloc_async, CUDA_VERSION);
        }
        """, name="loader.cpp")
    assert {(12, "CE001", "error"), (12, "CE007", "warning")} <= got, got


def test_an_export_macro_of_a_missing_header_is_read_as_empty(tmp_path: Path) -> None:
    """`class ACME_EXPORT Loader {` parses only when ACME_EXPORT expands to nothing: with its header missing, the
    class is still a class and its members' definitions are judged. And a macro defined in two `#if` branches, one
    of them `CUDA_VERSION`, is the toolkit's where its value is the toolkit's."""
    _clang()
    got = _lint(tmp_path, """\
        #include "acme_defines.h"
        #if defined(__has_include) && __has_include(<cuda.h>)
        #define ACME_CUDA_VERSION CUDA_VERSION
        #else
        #define ACME_CUDA_VERSION 9999999
        #endif
        #define ACME_LOAD(sym, out) load_one(#sym, (void **)(out), ACME_CUDA_VERSION)
        class ACME_EXPORT Loader {
         public:
          void load();
         private:
          static int load_one(const char *name, void **out, int ver) {
            CUdriverProcAddressQueryResult q;
            return cuGetProcAddress(name, out, ver, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q) || q;
          }
          PFN_cuCtxCreate_v3020 ctx_create_;
        };
        void Loader::load() { ACME_LOAD(cuCtxCreate, &ctx_create_); }
        """, name="loader.cpp")
    assert any(code == "CE001" and sev == "error" for _, code, sev in got), got


def test_a_request_through_a_getter_passed_as_a_parameter_is_made_at_the_call_that_passes_it(tmp_path: Path) -> None:
    """A helper that calls whatever getter it is given (a pointer dlsym bound, of a hand-written type) makes each
    request at its caller's call (the row), as a wrapper does: each row's pin and flags are judged at its own line
    (12000 for cuCtxGetDevice, a release: CE010; the stream-ordered cuMemcpyAsync with default flags: CE007), not
    once at the helper's call of the getter."""
    _clang()
    got = _lint(tmp_path, """\
        typedef int (*getter_t)(const char *, void **, int, unsigned long long);
        static void *ask(getter_t g, const char *name, int ver, unsigned long long flags) {
          void *p = 0;
          if (g(name, &p, ver, flags) != 0) return 0;
          return p;
        }
        static PFN_cuCtxGetDevice_v2000 get_device;
        static PFN_cuMemcpyAsync_v4000 copy_async;
        static PFN_cuInit_v2000 init;
        void load(void *h) {
          getter_t g = (getter_t)dlsym(h, "cuGetProcAddress");
          get_device = (PFN_cuCtxGetDevice_v2000)ask(g, "cuCtxGetDevice", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
          copy_async = (PFN_cuMemcpyAsync_v4000)ask(g, "cuMemcpyAsync", 4000, CU_GET_PROC_ADDRESS_DEFAULT);
          init = (PFN_cuInit_v2000)ask(g, "cuInit", 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
        }
        """)
    assert (12, "CE010", "warning") in got and (13, "CE007", "warning") in got
    assert not {f for f in got if f[0] == 4}


def test_a_version_a_macros_body_spells_is_one_cause_at_its_define(tmp_path: Path) -> None:
    """The rows a macro writes share the version its body spells (CUDA_VERSION, not a parameter): one CE001 at the
    `#define`, naming each entry's pin; a macro given the version as an argument is judged at each row."""
    _clang()
    body = """\
        static CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
        static CUdriverProcAddressQueryResult q;
        #define LOAD(name, slot) gpa(#name, (void **)&slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q)
        #define LOAD_AT(name, slot, v) gpa(#name, (void **)&slot, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q)
        static PFN_cuCtxCreate_v3020 create;
        static PFN_cuMemAlloc_v3020 alloc;
        static PFN_cuCtxGetDevice_v2000 get_device;
        int load(void *h) {
          gpa = dlsym(h, "cuGetProcAddress_v2");
          if (LOAD(cuCtxCreate, create) || LOAD(cuMemAlloc, alloc) || LOAD(cuCtxGetDevice, get_device)) return 1;
          return LOAD_AT(cuCtxCreate, create, CUDA_VERSION);
        }
        """
    got = _lint(tmp_path, body)
    assert (3, "CE001", "error") in got and (11, "CE001", "error") in got
    assert not {f for f in got if f[0] == 10 and f[1] == "CE001"}


def test_an_export_a_tables_row_names_is_reported_at_that_row(tmp_path: Path) -> None:
    """A loop over a constant table looks up the name each row holds: the row that names the unversioned
    cuMemAlloc (the 2000 ABI) for a `PFN_cuMemAlloc_v3020` pointer is the fault (CE011), at that row, not at the
    loop's call; so is the getter row asking for a name with `_v2` added by hand (CE003)."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuInit_v2000 init;
        static PFN_cuMemAlloc_v3020 alloc;
        static PFN_cuCtxGetDevice_v2000 get_device;
        struct row { const char *name; void **slot; };
        int load(void *h) {
          struct row rows[] = {
            {"cuInit", (void **)&init},
            {"cuMemAlloc", (void **)&alloc},
            {"cuCtxGetDevice", (void **)&get_device},
          };
          for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++)
            if (!(*rows[i].slot = dlsym(h, rows[i].name))) return 1;
          return 0;
        }
        """)
    assert (8, "CE011", "error") in got
    assert not {f for f in got if f[0] == 12}


def test_decltype_of_a_pointer_object_is_that_objects_declared_type(tmp_path: Path) -> None:
    """`decltype(p)` of a pointer object is the type `p` was declared with, whatever `p` is called (a member named
    like the driver's function): a hand-written type of the export's own ABI is CE004's note, one of another ABI
    is CE011."""
    _clang()
    got = _lint(tmp_path, """\
        namespace api {
        CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream);
        CUresult (*cuDeviceGet)(CUdevice *, long long);
        void load(void *h) {
          cuMemFreeAsync = decltype(cuMemFreeAsync)(dlsym(h, "cuMemFreeAsync"));
          cuDeviceGet = decltype(cuDeviceGet)(dlsym(h, "cuDeviceGet"));
        }
        }
        """, name="loader.cpp", pedantic=True)
    assert (5, "CE004", "note") in got and (6, "CE011", "error") in got


def test_a_const_char_array_initialized_by_a_string_is_that_string(tmp_path: Path) -> None:
    """`static const char kName[] = "cuX";` passed where a name is expected decays to that string: a request of it
    is a request of cuX (default flags for the stream-ordered cuLaunchKernel: CE007; the export of
    cuDeviceTotalMem, the 2000 ABI, into a 3020 pointer: CE011)."""
    _clang()
    got = _lint(tmp_path, """\
        static const char kLaunch[] = "cuLaunchKernel";
        static const char kTotal[] = "cuDeviceTotalMem";
        static PFN_cuLaunchKernel_v4000 launch;
        static PFN_cuDeviceTotalMem_v3020 total;
        int load(void *h) {
          CUdriverProcAddressQueryResult q;
          if (cuGetProcAddress(kLaunch, (void **)&launch, 4000, CU_GET_PROC_ADDRESS_DEFAULT, &q) || q) return 1;
          total = (PFN_cuDeviceTotalMem_v3020)dlsym(h, kTotal);
          return 0;
        }
        """)
    assert (7, "CE007", "warning") in got and (8, "CE011", "error") in got


def test_a_query_result_a_wrapper_passes_on_is_its_callers_to_test(tmp_path: Path) -> None:
    """A wrapper that only forwards its caller's query result to the getter leaves the test to the caller: a
    caller that never reads it is CE006; one that tests it, or a wrapper that tests it itself, is right; a query
    result kept in a struct's field is tested where the field is read."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuMemMap_v10020 map;
        static PFN_cuInit_v2000 init;
        static CUresult ask(const char *n, void **p, int v, CUdriverProcAddressQueryResult *q) {
          return cuGetProcAddress(n, p, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, q);
        }
        static CUresult ask_checked(const char *n, void **p, int v, CUdriverProcAddressQueryResult *q) {
          CUresult r = cuGetProcAddress(n, p, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, q);
          return r ? r : *q != CU_GET_PROC_ADDRESS_SUCCESS ? CUDA_ERROR_NOT_FOUND : CUDA_SUCCESS;
        }
        int load_unchecked(void) {
          CUdriverProcAddressQueryResult q;
          return ask("cuMemMap", (void **)&map, 10020, &q) != CUDA_SUCCESS;
        }
        int load_checked(void) {
          CUdriverProcAddressQueryResult q;
          return ask("cuInit", (void **)&init, 2000, &q) != CUDA_SUCCESS || q != CU_GET_PROC_ADDRESS_SUCCESS;
        }
        int load_by_checker(void) {
          CUdriverProcAddressQueryResult q;
          return ask_checked("cuMemMap", (void **)&map, 10020, &q) != CUDA_SUCCESS;
        }
        int load_into_field(void) {
          struct { CUdriverProcAddressQueryResult q; CUresult r; } st;
          st.r = cuGetProcAddress("cuInit", (void **)&init, 2000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st.q);
          return st.r != CUDA_SUCCESS || st.q != CU_GET_PROC_ADDRESS_SUCCESS;
        }
        """)
    assert {f for f in got if f[1] == "CE006"} == {(12, "CE006", "warning")}


def test_a_query_result_field_a_lambda_writes_is_the_enclosing_functions(tmp_path: Path) -> None:
    """A lambda that captures `st` by reference passes `&st.q` to the getter: the enclosing function's test of
    `st.q` tests it (no CE006)."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuMemMap_v10020 map;
        int load(void) {
          struct { CUdriverProcAddressQueryResult q; CUresult r; } st;
          auto get = [&](const char *n, void **p, int v) -> CUresult {
            return cuGetProcAddress(n, p, v, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st.q); };
          st.r = get("cuMemMap", (void **)&map, 10020);
          return st.r != CUDA_SUCCESS || st.q != CU_GET_PROC_ADDRESS_SUCCESS;
        }
        """, name="loader.cpp")
    assert not {f for f in got if f[1] == "CE006"}


def test_a_request_a_tables_row_names_is_reported_at_that_row_and_a_shared_version_at_the_call(
        tmp_path: Path) -> None:
    """A getter called in a loop over {pointer, name, version} rows: each row's pin is that row's (a release
    number, 11030, for cuCtxSynchronize: CE010 at its row, a note as the query result is tested; the stream-ordered
    cuMemcpy with the call's default flags: CE007 at its row); a version the call spells for every row
    (CUDA_VERSION) is one cause, at the call."""
    _clang()
    got = _lint(tmp_path, """\
        static PFN_cuCtxSynchronize_v2000 sync;
        static PFN_cuMemcpy_v4000 copy;
        static PFN_cuInit_v2000 init;
        struct row { void **slot; const char *name; int ver; };
        int load(void) {
          static const struct row rows[] = {
            {(void **)&sync, "cuCtxSynchronize", 11030},
            {(void **)&copy, "cuMemcpy", 4000},
            {(void **)&init, "cuInit", 2000},
          };
          CUdriverProcAddressQueryResult q;
          for (unsigned i = 0; i < 3; i++)
            if (cuGetProcAddress(rows[i].name, rows[i].slot, rows[i].ver, 0, &q) || q) return 1;
          for (unsigned i = 0; i < 3; i++)
            if (cuGetProcAddress(rows[i].name, rows[i].slot, CUDA_VERSION, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &q)
                || q) return 1;
          return 0;
        }
        """, pedantic=True)
    assert {(7, "CE010", "note"), (8, "CE007", "warning"), (15, "CE001", "error")} <= got
    assert not {f for f in got if f[0] == 13}


def test_a_typedef_of_an_array_passed_as_a_name_is_not_a_crash(tmp_path: Path) -> None:
    """An array whose type is a typedef (`const name_t n = ...`) or deduced decays like any array: the file is
    linted (it was once "not linted: Element type not available")."""
    _clang()
    got = _lint(tmp_path, """\
        typedef char name_t[16];
        static const name_t kName = "cuInit";
        static PFN_cuInit_v2000 init;
        void load(void *h) { init = (PFN_cuInit_v2000)dlsym(h, kName); }
        """)
    assert not {f for f in got if f[2] == "error"}
