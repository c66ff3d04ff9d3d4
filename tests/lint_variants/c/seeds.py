"""The faulty seeds, each with its fixed twin. Each is one serious fault of the guide (docs/lint.md, the rules
table); `expect` is what today's rules name it (the codes and severities of src/cuentry/lint/rules.py), judged by
hand on the seed as written. Every row of a seed is asked at the same version and flags, so the companions (the
rows that are right in both) are chosen with the twin's pin as their own ABI."""

from __future__ import annotations

from .model import Row, Seed, Shape, handwritten, pfn

__all__ = ["SEEDS", "seed"]


def _rows(*rows: tuple[str, str, str]) -> tuple[Row, ...]:
    return tuple(Row(name, var, pfn(t)) for name, var, t in rows)


_CTX_2000 = _rows(("cuCtxGetDevice", "p_ctx_get_device", "PFN_cuCtxGetDevice_v2000"),
                  ("cuInit", "p_init", "PFN_cuInit_v2000"),
                  ("cuDeviceGet", "p_device_get", "PFN_cuDeviceGet_v2000"))
_MEM_3020 = _rows(("cuMemAlloc", "p_mem_alloc", "PFN_cuMemAlloc_v3020"),
                  ("cuMemFree", "p_mem_free", "PFN_cuMemFree_v3020"),
                  ("cuMemGetInfo", "p_mem_get_info", "PFN_cuMemGetInfo_v3020"))
_CTX_3020 = _rows(("cuCtxCreate", "p_ctx_create", "PFN_cuCtxCreate_v3020"),
                  ("cuMemAlloc", "p_mem_alloc", "PFN_cuMemAlloc_v3020"),
                  ("cuMemFree", "p_mem_free", "PFN_cuMemFree_v3020"))
_SYNC_2000 = _rows(("cuCtxSynchronize", "p_ctx_synchronize", "PFN_cuCtxSynchronize_v2000"),
                   ("cuInit", "p_init", "PFN_cuInit_v2000"),
                   ("cuDeviceGet", "p_device_get", "PFN_cuDeviceGet_v2000"))
_STREAM_PTSZ = _rows(("cuStreamQuery", "p_stream_query", "PFN_cuStreamQuery_v7000_ptsz"),
                     ("cuEventRecord", "p_event_record", "PFN_cuEventRecord_v7000_ptsz"),
                     ("cuStreamSynchronize", "p_stream_synchronize", "PFN_cuStreamSynchronize_v7000_ptsz"))
_ASYNC_4000 = _rows(("cuMemcpyAsync", "p_memcpy_async", "PFN_cuMemcpyAsync_v4000"),
                    ("cuCtxSetCurrent", "p_ctx_set_current", "PFN_cuCtxSetCurrent_v4000"),
                    ("cuCtxDestroy", "p_ctx_destroy", "PFN_cuCtxDestroy_v4000"))
_VMM_10020 = _rows(("cuMemCreate", "p_mem_create", "PFN_cuMemCreate_v10020"),
                   ("cuMemMap", "p_mem_map", "PFN_cuMemMap_v10020"),
                   ("cuMemRelease", "p_mem_release", "PFN_cuMemRelease_v10020"))
_EXPORTS = _rows(("cuMemAlloc_v2", "p_mem_alloc", "PFN_cuMemAlloc_v3020"),
                 ("cuMemFree_v2", "p_mem_free", "PFN_cuMemFree_v3020"),
                 ("cuInit", "p_init", "PFN_cuInit_v2000"))
_GETTER_EXPORTS = _rows(("cuGetProcAddress_v2", "p_get_proc_address", "PFN_cuGetProcAddress_v12000"),
                        ("cuDriverGetVersion", "p_driver_get_version", "PFN_cuDriverGetVersion_v2020"),
                        ("cuInit", "p_init", "PFN_cuInit_v2000"))
_CTX_EXPORTS = _rows(("cuCtxGetDevice", "p_ctx_get_device", "PFN_cuCtxGetDevice_v2000"),
                     ("cuDeviceGet", "p_device_get", "PFN_cuDeviceGet_v2000"),
                     ("cuInit", "p_init", "PFN_cuInit_v2000"))
_SYNC_EXPORTS = _rows(("cuCtxSynchronize", "p_ctx_synchronize", "PFN_cuCtxSynchronize_v2000"),
                      ("cuDeviceGet", "p_device_get", "PFN_cuDeviceGet_v2000"),
                      ("cuInit", "p_init", "PFN_cuInit_v2000"))


def _getter(rows: tuple[Row, ...], pin: int, **kw: object) -> Shape:
    return Shape("getter", rows, pin=pin, **kw)  # type: ignore[arg-type]


def _rt_getter(rows: tuple[Row, ...], pin: int, **kw: object) -> Shape:
    return Shape("rt_getter", rows, pin=pin, **kw)  # type: ignore[arg-type]


def _dlsym(rows: tuple[Row, ...]) -> Shape:
    return Shape("dlsym", rows)


def _seed(id_: str, fault: str, bad: Shape, good: Shape, *codes: str) -> Seed:
    return Seed(id_, fault, bad, good, frozenset(codes))


SEEDS: tuple[Seed, ...] = (
    _seed("driver_version_pin", "cuCtxGetDevice asked at the driver's version (cuDriverGetVersion) into "
          "PFN_cuCtxGetDevice_v2000: a 13.x driver binds cuCtxGetDevice_v2 (13000)",
          _getter(_CTX_2000, 2000, version="driver"), _getter(_CTX_2000, 2000), "CE001"),
    _seed("toolkit_version_pin", "cuMemAlloc asked at CUDA_VERSION into PFN_cuMemAlloc_v3020",
          _getter(_MEM_3020, 3020, version="toolkit"), _getter(_MEM_3020, 3020), "CE001"),
    _seed("runtime_version_pin", "cuCtxCreate asked at the runtime's version (cudaRuntimeGetVersion) into "
          "PFN_cuCtxCreate_v3020: a 12.5+ runtime binds the 12050 ABI",
          _getter(_CTX_3020, 3020, version="runtime"), _getter(_CTX_3020, 3020), "CE001"),
    _seed("pin_binds_other_abi", "cuCtxCreate pinned at 11040 into PFN_cuCtxCreate_v3020 (binds the 11040 ABI)",
          _getter(_CTX_3020, 11040), _getter(_CTX_3020, 3020), "CE002"),
    _seed("pin_13000_into_v2000", "cuCtxSynchronize pinned at 13000 into PFN_cuCtxSynchronize_v2000 "
          "(binds cuCtxSynchronize_v2, 13000)",
          _getter(_SYNC_2000, 13000), _getter(_SYNC_2000, 2000), "CE002"),
    _seed("dlsym_old_export", "dlsym of the unversioned export cuMemAlloc (the 2000 ABI, 32-bit sizes) into "
          "PFN_cuMemAlloc_v3020", _dlsym(_EXPORTS).renamed(0, "cuMemAlloc"), _dlsym(_EXPORTS), "CE011"),
    _seed("dlsym_getter_export", "dlsym of the export cuGetProcAddress (the 11030 getter, 4 arguments) into "
          "PFN_cuGetProcAddress_v12000 (5 arguments)",
          _dlsym(_GETTER_EXPORTS).renamed(0, "cuGetProcAddress"), _dlsym(_GETTER_EXPORTS), "CE011"),
    _seed("dlsym_new_export_old_type", "dlsym of cuCtxGetDevice_v2 (the 13000 ABI) into PFN_cuCtxGetDevice_v2000",
          _dlsym(_CTX_EXPORTS).renamed(0, "cuCtxGetDevice_v2"), _dlsym(_CTX_EXPORTS), "CE011"),
    _seed("suffix_v2_by_hand", "\"cuMemAlloc_v2\" asked of the getter (the _v2 appended by hand)",
          _getter(_MEM_3020, 3020).renamed(0, "cuMemAlloc_v2"), _getter(_MEM_3020, 3020), "CE003"),
    _seed("suffix_ptsz_by_hand", "\"cuStreamQuery_ptsz\" asked of the getter (the _ptsz appended by hand)",
          _getter(_STREAM_PTSZ, 7000, flags="per_thread").renamed(0, "cuStreamQuery_ptsz"),
          _getter(_STREAM_PTSZ, 7000, flags="per_thread"), "CE003"),
    _seed("decltype_type", "decltype(&cuCtxCreate) (the 13.0 headers' cuCtxCreate_v4, 12050) for a request pinned "
          "at 3020", _getter(_CTX_3020, 3020).retyped(0, pfn("decltype(&cuCtxCreate)")), _getter(_CTX_3020, 3020),
          "CE002"),
    _seed("handwritten_type", "a hand-written CUresult (*)(CUdeviceptr *, unsigned int) for cuMemAlloc at 3020 "
          "(the ABI takes size_t)",
          _getter(_MEM_3020, 3020).retyped(0, handwritten("CUresult", "CUdeviceptr *, unsigned int")),
          _getter(_MEM_3020, 3020), "CE002"),
    _seed("default_stream_flags", "cuMemcpyAsync asked with CU_GET_PROC_ADDRESS_DEFAULT (the stream mode not "
          "pinned; it has a per-thread ABI)", _getter(_ASYNC_4000, 4000, flags="default"),
          _getter(_ASYNC_4000, 4000), "CE007"),
    _seed("unchecked_query", "the query result (CUdriverProcAddressQueryResult) is passed but never tested",
          _getter(_MEM_3020, 3020, check_query=False), _getter(_MEM_3020, 3020), "CE006"),
    _seed("pin_below_first_abi", "cuMemCreate pinned at 10000, below its first ABI (10020): never resolves",
          _getter(_VMM_10020, 10000), _getter(_VMM_10020, 10020), "CE009"),
    _seed("runtime_getter_cudart_version", "cudaGetDriverEntryPointByVersion asked at CUDART_VERSION for "
          "cuCtxCreate into PFN_cuCtxCreate_v3020 (a 13.0 runtime binds the 12050 ABI)",
          _rt_getter(_CTX_3020, 3020, version="toolkit"), _rt_getter(_CTX_3020, 3020), "CE001"),
    _seed("runtime_getter_default_flags", "cudaGetDriverEntryPointByVersion with cudaEnableDefault for "
          "cuMemcpyAsync (the stream mode not pinned)", _rt_getter(_ASYNC_4000, 4000, flags="default"),
          _rt_getter(_ASYNC_4000, 4000), "CE007"),
    _seed("getter_misspelled", "\"cuCtxSyncronize\" asked of the getter, a name no driver has: never resolves",
          _getter(_SYNC_2000, 2000).renamed(0, "cuCtxSyncronize"), _getter(_SYNC_2000, 2000), "CE003"),
    _seed("dlsym_misspelled", "dlsym of \"cuCtxSyncronize\", a name no driver exports: never resolves",
          _dlsym(_SYNC_EXPORTS).renamed(0, "cuCtxSyncronize"), _dlsym(_SYNC_EXPORTS), "CE003"),
)


def seed(id_: str) -> Seed:
    """The seed named `id_`."""
    return next(s for s in SEEDS if s.id == id_)
