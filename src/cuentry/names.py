"""Names, patterns, flags and codes: the one place that spells them.

Everything in cuentry that recognises a typedef name (`PFN_cuMemAlloc_v3020`),
a suffixed export (`cuMemAlloc_v2`, `cuMemcpy_ptds`), a stream mode and its
flag value, a CUDA release number, or a CUresult / query-result code asks this
module. Nothing here imports the rest of cuentry (except the error classes), and
nothing is compiled at import: `import cuentry` stays cheap, and `re`
caches the patterns on first use.
"""

from __future__ import annotations

from .errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time: `import cuentry` stays cheap
if TYPE_CHECKING:
    from typing import Literal

    Stream = Literal["legacy", "per_thread"]
    Mode = Literal["legacy", "per_thread", "default"]
else:
    Stream = Mode = str

__all__ = [
    "BY_VERSION_DRIVER_FLOOR",
    "CAI_VERSIONS",
    "CUDA_ERROR_INVALID_VALUE",
    "CUDA_ERROR_NOT_FOUND",
    "CUDA_ERROR_NOT_INITIALIZED",
    "CUDA_ERROR_NOT_SUPPORTED",
    "CUDA_ERROR_NO_DEVICE",
    "CUDA_ERROR_OUT_OF_MEMORY",
    "CUDA_ERROR_STUB_LIBRARY",
    "CUDA_RELEASES",
    "CUDA_SUCCESS",
    "DEFAULT",
    "DEFAULT_FLAG_NAMES",
    "DLPACK_CAPSULE",
    "DLPACK_DEVICE_KINDS",
    "DLPACK_FLAG_READ_ONLY",
    "DLPACK_HOST_KINDS",
    "DLPACK_VERSIONED_CAPSULE",
    "DRIVER_GETTERS",
    "DRIVER_LIBRARY",
    "DRIVER_NAME_PATTERN",
    "FAULTS",
    "FLAGS",
    "FLAG_DEFAULT",
    "FLAG_LEGACY",
    "FLAG_NAMES",
    "FLAG_PER_THREAD",
    "GENERATED_MEMBER_PREFIX",
    "IDENTIFIER_PATTERN",
    "LEGACY",
    "LEGACY_FLAG_NAMES",
    "MAX_VERSION",
    "PER_THREAD",
    "PER_THREAD_FLAG_NAMES",
    "PER_THREAD_VARIANTS",
    "PFN_IN_TEXT",
    "PFN_PATTERN",
    "QUERY_APIS",
    "QUERY_NAMES",
    "QUERY_SUCCESS",
    "QUERY_SYMBOL_NOT_FOUND",
    "QUERY_VERSION_NOT_SUFFICIENT",
    "RELEASE_PATTERN",
    "RUNTIME_ERROR_INSUFFICIENT_DRIVER",
    "RUNTIME_ERROR_NAMES",
    "RUNTIME_GETTERS",
    "SEVERITIES",
    "STREAM_CHOICES",
    "STREAM_LEGACY_HANDLE",
    "STREAM_PER_THREAD_HANDLE",
    "SUFFIXED_EXPORT_PATTERN",
    "SUFFIXED_PATTERN",
    "SUFFIX_PATTERN",
    "TOOLKIT_MACROS",
    "UNCATALOGUED_PATTERN",
    "UNDECLARED_EXPORTS",
    "USER_SWITCHERS",
    "VALID_FLAGS_MASK",
    "VERSIONED_APIS",
    "VERSION_QUERIES",
    "catalog_stream",
    "check_symbol",
    "check_version",
    "flags_name",
    "format_version",
    "has_suffix",
    "is_identifier",
    "looks_like_release",
    "parse_pfn_name",
    "parse_stream",
    "parse_version",
    "pfn_name",
    "split_suffix",
    "stream_label",
    "stream_of_flags",
    "stream_of_variant",
]


# --- stream modes and flags ------------------------------------------------------

LEGACY: Stream = "legacy"
PER_THREAD: Stream = "per_thread"
DEFAULT: Mode = "default"

# CU_GET_PROC_ADDRESS_* (cudaEnable* of the runtime has the same values).
FLAG_DEFAULT = 0
FLAG_LEGACY = 1
FLAG_PER_THREAD = 2
FLAGS: dict[str, int] = {DEFAULT: FLAG_DEFAULT, LEGACY: FLAG_LEGACY, PER_THREAD: FLAG_PER_THREAD}
FLAG_NAMES: dict[int, str] = {
    FLAG_DEFAULT: "CU_GET_PROC_ADDRESS_DEFAULT",
    FLAG_LEGACY: "CU_GET_PROC_ADDRESS_LEGACY_STREAM",
    FLAG_PER_THREAD: "CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM",
}
# The spellings of each flag in source code (driver API and runtime API).
LEGACY_FLAG_NAMES = frozenset({"CU_GET_PROC_ADDRESS_LEGACY_STREAM", "cudaEnableLegacyStream"})
PER_THREAD_FLAG_NAMES = frozenset({"CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM", "cudaEnablePerThreadDefaultStream"})
DEFAULT_FLAG_NAMES = frozenset({"CU_GET_PROC_ADDRESS_DEFAULT", "cudaEnableDefault"})

# Suffixes of the per-thread-default-stream typedefs and exports.
PER_THREAD_VARIANTS = ("ptds", "ptsz")

# What a user may write for a stream mode (API, CLI and manifests alike).
_STREAM_SPELLINGS: dict[str, Mode] = {
    "legacy": LEGACY, "per_thread": PER_THREAD, "ptds": PER_THREAD, "perthread": PER_THREAD, "default": DEFAULT,
}
STREAM_CHOICES = ("legacy", "per_thread", "per-thread", "ptds", "default")


def parse_stream(mode: object) -> Mode:
    """Accept 'legacy', 'per_thread'/'per-thread'/'ptds', or 'default' (any case)."""
    if not isinstance(mode, str):
        raise UsageError(f"stream mode must be a string, got {type(mode).__name__}",
                         hint="use 'legacy' or 'per_thread'")
    got = _STREAM_SPELLINGS.get(mode.strip().lower().replace("-", "_"))
    if got is None:
        raise UsageError(f"unknown stream mode {mode!r}",
                         hint="use 'legacy' or 'per_thread' ('default' only by explicit request)")
    return got


def catalog_stream(mode: str) -> Stream:
    """The catalog's stream for a mode: 'default' asks for what legacy code gets."""
    return PER_THREAD if mode == PER_THREAD else LEGACY


def stream_of_flags(flags: int) -> Stream:
    """Which ABIs a driver picks for these flags (only 2 selects the per-thread ones)."""
    return PER_THREAD if flags == FLAG_PER_THREAD else LEGACY


def stream_of_variant(variant: str) -> Stream:
    """The stream mode of a typedef's variant suffix ('' legacy; 'ptds'/'ptsz' per-thread)."""
    return PER_THREAD if variant else LEGACY


def flags_name(flags: int) -> str:
    return FLAG_NAMES.get(flags, f"flags({flags})")


def stream_label(mode: str) -> str:
    """How people write a mode: 'per-thread', 'legacy'."""
    return mode.replace("_", "-")


# --- name patterns ------------------------------------------------------------------

# A typedef name: PFN_<symbol>_v<version>[_ptds|_ptsz].
PFN_PATTERN = r"PFN_(?P<api>\w+?)_v(?P<ver>\d+)(?:_(?P<var>ptds|ptsz))?"
# The same inside text (lint): groups 1-3 are symbol, version, variant.
PFN_IN_TEXT = r"\bPFN_(\w+?)_v(\d+)(?:_(ptds|ptsz))?\b"
# A name that may carry an export suffix: base[_vN][_ptds|_ptsz].
SUFFIXED_PATTERN = r"(?P<base>\w+?)(?:_v(?P<n>\d+))?(?:_(?P<var>ptds|ptsz))?"
# The export suffix at the end of a name.
SUFFIX_PATTERN = r"_(?:v\d+|ptds|ptsz)$"
# A driver export written with its suffix (cuMemAlloc_v2, cuMemcpy_ptds, cuMemcpyHtoD_v2_ptds).
SUFFIXED_EXPORT_PATTERN = r"cu[A-Z]\w*?_(?:v\d+(?:_pt(?:ds|sz))?|pt(?:ds|sz))"
IDENTIFIER_PATTERN = r"[A-Za-z_][A-Za-z0-9_]*"
# How the driver names its functions (cuMemAlloc); the runtime's are cuda..., other libraries' cudnn..., cublas...
DRIVER_NAME_PATTERN = r"cu[A-Z]\w*"
# Driver functions of headers the catalog does not read (the Direct3D interop of cudaD3D9.h, cudaD3D10.h,
# cudaD3D11.h: Windows drivers export them): a name of this family is never judged unexported.
UNCATALOGUED_PATTERN = r"cu(?:Graphics)?D3D\d+\w*"
# Names a real driver exports that no toolkit's headers declare (580.159.04, CUDA 13.0: every other cu* export is
# an ABI of the catalog; tests/test_lint_clang.py checks this against the recorded driver).
UNDECLARED_EXPORTS = frozenset({"cuEGLApiInit", "cuMemGetAttribute", "cuMemGetAttribute_v2"})
RELEASE_PATTERN = r"(?P<major>\d+)\.(?P<minor>\d+)(?:\.\d+)?"


def parse_pfn_name(name: str) -> tuple[str, int, str] | None:
    """`PFN_cuMemcpy_v7000_ptds` -> ('cuMemcpy', 7000, 'ptds'); None when it is not a typedef name."""
    import re

    m = re.fullmatch(PFN_PATTERN, name)  # no strip(): " PFN_x\n" is not a typedef name
    if m is None:
        return None
    return m.group("api"), int(m.group("ver")), m.group("var") or ""


def pfn_name(symbol: str, version: int, variant: str = "") -> str:
    """The typedef name of one ABI: `PFN_cuMemAlloc_v3020`."""
    return f"PFN_{symbol}_v{version}" + (f"_{variant}" if variant else "")


def split_suffix(name: str) -> tuple[str, int | None, str] | None:
    """`cuMemAlloc_v2` -> ('cuMemAlloc', 2, ''); `cuMemcpy_ptds` -> ('cuMemcpy', None, 'ptds');
    None when `name` carries no export suffix."""
    import re

    m = re.fullmatch(SUFFIXED_PATTERN, name)
    if m is None or not (m.group("n") or m.group("var")):
        return None
    return m.group("base"), int(m.group("n")) if m.group("n") else None, m.group("var") or ""


def has_suffix(name: str) -> bool:
    """Whether `name` ends in an export suffix (_vN, _ptds, _ptsz)."""
    import re

    return re.search(SUFFIX_PATTERN, name) is not None


def is_identifier(text: str) -> bool:
    """An ASCII C identifier (no control characters, no NUL)."""
    # == IDENTIFIER_PATTERN for ASCII text, without importing re on the resolve path
    return text.isascii() and text.isidentifier()


def check_symbol(symbol: object) -> str:
    """A symbol's text, validated before it goes anywhere near C (a real driver crashes on NULL)."""
    if symbol is None:
        raise UsageError("symbol is None", hint="pass a driver function name such as 'cuMemAlloc'")
    if isinstance(symbol, bytes):
        try:
            symbol = symbol.decode("ascii")
        except UnicodeDecodeError:
            raise UsageError(f"symbol {symbol!r} is not ASCII", hint="driver function names are ASCII identifiers") from None
    if not isinstance(symbol, str):
        raise UsageError(f"symbol must be a str, got {type(symbol).__name__}", hint="pass a name such as 'cuMemAlloc'")
    if not symbol:
        raise UsageError("symbol is empty", hint="pass a driver function name such as 'cuMemAlloc'")
    if not is_identifier(symbol):
        raise UsageError(f"symbol {symbol!r} is not a C identifier",
                         hint="driver function names are ASCII identifiers like cuMemAlloc")
    return symbol


MAX_VERSION = 0x7FFFFFFF  # the C int the driver takes
BY_VERSION_DRIVER_FLOOR = 12000
"""The driver cudaGetDriverEntryPointByVersion and cuGetProcAddress_v2 imply: ByVersion needs a 12.x runtime, and a
12.x runtime a 12.0 driver; the 12000 getter is exported from the 12.0 driver on."""


def check_version(version: object) -> int:
    """A version given as an ABI pin: a positive int the driver's C int can hold."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise UsageError(f"version must be an int ABI version such as 3020, got {version!r}",
                         hint="use the number in PFN_cuX_vNNNNN")
    if version <= 0 or version > MAX_VERSION:
        raise UsageError(f"version {version} is out of range", hint="use the number in PFN_cuX_vNNNNN, e.g. 3020")
    return version


# --- versions ---------------------------------------------------------------------------


CUDA_RELEASES = (2000, 2010, 2020, 2030, 3000, 3010, 3020, 4000, 4010, 4020, 5000, 5050, 6000, 6050, 7000, 7050, 8000,
                 9000, 9010, 9020, 10000, 10010, 10020, 11000, 11010, 11020, 11030, 11040, 11050, 11060, 11070, 11080,
                 12000, 12010, 12020, 12030, 12040, 12050, 12060, 12080, 12090, 13000)
"""The CUDA releases that have a driver API (2.0 to 13.0; later ones are the catalog's history): a driver floor is
one of these, or one the catalog knows (`lint.config.releases`)."""


def format_version(version: int) -> str:
    """A CUDA version number as people write it: 12050 -> '12.5', 3020 -> '3.2'."""
    return f"{version // 1000}.{(version % 1000) // 10}"


def parse_version(text: str | int) -> int:
    """Accept 12050, '12050', '12.5' or '12.5.1'; return the CUDA version number."""
    if isinstance(text, bool):
        raise UsageError(f"invalid CUDA version {text!r}", hint="give a number like 12050 or a release like 12.5")
    if isinstance(text, int):
        if text < 0:
            raise UsageError(f"invalid CUDA version {text}", hint="versions are positive, e.g. 12050")
        return text
    s = str(text).strip()
    if len(s) > 16:  # int() of thousands of digits is slow, and refused above 4300 (a ValueError)
        raise UsageError(f"invalid CUDA version {s[:16]!r}... ({len(s)} characters)",
                         hint="give a number like 12050 or a release like 12.5")
    if s.isascii() and s.isdigit():
        return _in_range(int(s), text)
    import re

    m = re.fullmatch(RELEASE_PATTERN, s, flags=re.ASCII)
    if m:
        if len(m.group("minor")) > 2:  # 12.100 is not 13.0: the number has room for two minor digits
            raise UsageError(f"invalid CUDA release {text!r}: the minor number has at most two digits",
                             hint="give a release like 12.5 or 12.10, or the number like 12050")
        return _in_range(int(m.group("major")) * 1000 + int(m.group("minor")) * 10, text)
    raise UsageError(f"invalid CUDA version {text!r}", hint="give a number like 12050 or a release like 12.5")


def _in_range(version: int, text: object) -> int:
    if version > MAX_VERSION:
        raise UsageError(f"CUDA version {text!r} is out of range", hint="give a number like 12050 or a release like 12.5")
    return version


def looks_like_release(version: int) -> bool:
    """A number people write for a release (12000, 12040, 13000), not a typical ABI pin."""
    return version >= 10000 and version % 10 == 0


# --- result codes ------------------------------------------------------------------------

# CUresult values cuentry acts on (the catalog's copy of the enum names all of them).
CUDA_SUCCESS = 0
CUDA_ERROR_INVALID_VALUE = 1
CUDA_ERROR_OUT_OF_MEMORY = 2
CUDA_ERROR_NOT_INITIALIZED = 3
CUDA_ERROR_STUB_LIBRARY = 34
CUDA_ERROR_NO_DEVICE = 100
CUDA_ERROR_NOT_FOUND = 500
CUDA_ERROR_NOT_SUPPORTED = 801

# CUdriverProcAddressQueryResult (cudaDriverEntryPointQueryResult has the same values).
QUERY_SUCCESS = 0
QUERY_SYMBOL_NOT_FOUND = 1
QUERY_VERSION_NOT_SUFFICIENT = 2
QUERY_NAMES: dict[int, str] = {
    QUERY_SUCCESS: "CU_GET_PROC_ADDRESS_SUCCESS",
    QUERY_SYMBOL_NOT_FOUND: "CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND",
    QUERY_VERSION_NOT_SUFFICIENT: "CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT",
}

# cudaError_t values of the runtime path.
RUNTIME_ERROR_INSUFFICIENT_DRIVER = 35  # cudaErrorInsufficientDriver: libcudart found no usable driver
RUNTIME_ERROR_NAMES: dict[int, str] = {
    0: "cudaSuccess", 1: "cudaErrorInvalidValue", 34: "cudaErrorStubLibrary", 35: "cudaErrorInsufficientDriver",
    127: "cudaErrorSymbolNotFound", 500: "cudaErrorSymbolNotFound",
}

# Device memory exchange protocols (typed calls' CUdeviceptr parameters).
# The special stream handles: CU_STREAM_LEGACY ((CUstream)0x1) and CU_STREAM_PER_THREAD ((CUstream)0x2);
# __cuda_array_interface__'s `stream` and __dlpack__'s `stream=` use the same 1 and 2.
STREAM_LEGACY_HANDLE = 1
STREAM_PER_THREAD_HANDLE = 2
# DLDeviceType codes (dlpack.h): the CUDA device kinds a device pointer may come from, and the host kinds.
DLPACK_DEVICE_KINDS: dict[int, str] = {2: "kDLCUDA", 13: "kDLCUDAManaged"}
DLPACK_HOST_KINDS: dict[int, str] = {1: "kDLCPU", 3: "kDLCUDAHost", 11: "kDLROCMHost"}
DLPACK_CAPSULE = b"dltensor"
DLPACK_VERSIONED_CAPSULE = b"dltensor_versioned"
DLPACK_FLAG_READ_ONLY = 1  # DLPACK_FLAG_BITMASK_READ_ONLY
CAI_VERSIONS = (2, 3)  # __cuda_array_interface__ versions read


# --- the entry-point APIs themselves -----------------------------------------------------

DRIVER_GETTERS = ("cuGetProcAddress", "cuGetProcAddress_v2")
RUNTIME_GETTERS = ("cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion")
QUERY_APIS = frozenset(DRIVER_GETTERS + RUNTIME_GETTERS)
VERSION_QUERIES = frozenset({"cuDriverGetVersion", "cudaDriverGetVersion", "cudaRuntimeGetVersion"})
TOOLKIT_MACROS = frozenset({"CUDA_VERSION", "CUDART_VERSION", "__CUDACC_VER_MAJOR__", "CUDA_API_VERSION"})

# The prefix of every member of a generated C table (`pfn_cuMemAlloc`): cuda.h's macros rename identifiers
# equal to a driver function's name (cuMemAlloc -> cuMemAlloc_v2), never pfn_cuMemAlloc, so a file that
# includes cuda.h and one that does not see the same struct. The generator, its template and its
# documentation all take it from here.
GENERATED_MEMBER_PREFIX = "pfn_"

# Library file names.
DRIVER_LIBRARY = {"linux": "libcuda.so.1", "windows": "nvcuda.dll"}


# --- what can be wrong with one request -----------------------------------------------------

# Each kind of fault that Catalog.judge can find in one request (symbol, version, flags, the API that
# asked): its default severity and its word in each vocabulary — the linter's rule (CE), the trace's
# finding (CT) and the diagnostic's classification. One row per kind; lint, trace, audit and the
# diagnostics all read their codes from here.
#
#   kind                 severity   CE       CT       classification
FAULTS: dict[str, tuple[str, str | None, str | None, str | None]] = {
    "unknown_symbol":    ("error",   "CE003", "CT001", "unknown_symbol"),
    "misspelled":        ("error",   "CE003", "CT001", "misspelled"),
    "suffixed_name":     ("error",   "CE003", "CT001", "suffixed_name"),
    "negative_version":  ("error",   "CE010", "CT003", "not_an_abi_version"),
    "below_first_abi":   ("error",   "CE009", "CT002", "not_an_abi_version"),
    "no_abi_of_mode":    ("error",   "CE009", "CT002", "version_not_sufficient"),
    "mixed_stream_modes": ("error",  "CE002", "CT006", "mixed_stream_modes"),
    "release_number":    ("warning", "CE010", "CT003", "not_an_abi_version"),
    "between_abis":      ("warning", "CE010", "CT003", "not_an_abi_version"),
    "above_newest_abi":  ("note",    "CE009", "CT003", "not_an_abi_version"),
    "above_every_driver": ("error",  "CE009", "CT003", "not_an_abi_version"),
    "driver_too_old":    ("error",   None,    "CT004", "driver_too_old"),
    "above_driver":      ("error",   None,    "CT004", "version_above_driver"),
    "default_flags":     ("warning", "CE007", "CT005", None),
    "bad_flags":         ("error",   None,    "CT009", "bad_flags"),
    "deprecated_api":    ("warning", "CE005", "CT008", None),
    "old_export":        ("note",    "CE011", "CT007", None),
}
SEVERITIES = ("error", "warning", "note")
VALID_FLAGS_MASK = 3  # legacy | per-thread: accepted by the driver (3 acts as legacy); anything else is refused

# APIs whose requests carry a version (cudaGetDriverEntryPoint and dlsym do not).
VERSIONED_APIS = frozenset({"cuGetProcAddress", "cuGetProcAddress_v2", "cudaGetDriverEntryPointByVersion"})

# Programs that run a command as another user (the container entrypoint's gosu/su-exec pattern): run as root under
# `cuentry trace`, their command cannot load root's private interposer nor write root's private records.
USER_SWITCHERS = frozenset({"gosu", "su-exec", "setpriv", "runuser", "s6-setuidgid", "setuidgid", "chpst", "su"})
