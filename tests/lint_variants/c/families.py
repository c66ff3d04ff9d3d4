"""The rewrite families: each is one choice on one axis of a loader, and none changes what the loader does.

A variant picks at most one family per axis (two choices of one axis cannot compose: a lookup is wrapped one
way). `Opts` is the set of choices the renderer reads; a family that does not apply to a seed (a version route
for a `dlsym` loader, which asks at no version) is left out for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .model import Seed

__all__ = ["AXES", "FAMILIES", "Family", "Opts", "applies", "compatible", "opts"]


@dataclass(frozen=True)
class Family:
    name: str
    axis: str
    option: str
    doc: str
    cxx: bool = False          # needs C++ (the variant is written as .cpp, or .cu)
    getter_only: bool = False  # applies to loaders that ask a getter at a version


FAMILIES: tuple[Family, ...] = (
    # the lookup: how the getter or dlsym is reached
    Family("rename_lookup", "wrap", "rename", "a forwarding function of another name (fetch_entry, resolve_entry)"),
    Family("load_sym", "wrap", "load_sym", "a project load_sym(h, name[, ver]) whose parameter reaches the lookup; "
           "it returns the pointer"),
    Family("out_param", "wrap", "out_param", "a GLib-style lookup(h, \"cuX\", (void **)&p[, ver]) that stores "
           "through its out-parameter (the name parameter declared as an array: const char name[])"),
    Family("macro_lookup", "wrap", "macro", "a function-like macro that calls the lookup"),
    Family("lambda", "wrap", "lambda", "a lambda that calls the lookup; the getter's query result is captured by "
           "reference and tested by the caller", cxx=True),
    Family("template", "wrap", "template", "a template load_fn(name, F &out) that stores (F)p through a reference",
           cxx=True),
    Family("template_return", "wrap", "template_return", "a template load_as<T>(name) that returns (T)p (the type "
           "is the explicit template argument)", cxx=True),
    Family("via_pointer", "callee", "pointer", "the getter and the version query called through pointers bound by "
           "dlsym (a dlsym loader: dlsym through a function pointer)"),
    Family("getter_param", "callee", "param", "the getter (bound by dlsym in the caller) passed as a parameter to the "
           "loader and its helpers (a dlsym loader: the lookup function passed so)"),
    # the version: where the number asked at comes from
    Family("version_static", "version", "static_elsewhere", "a static set in another function (init_version)",
           getter_only=True),
    Family("version_field", "version", "struct_field", "a field of a configuration struct", getter_only=True),
    Family("version_helper", "version", "helper_return", "a helper's return value", getter_only=True),
    Family("version_param", "version", "caller_param", "a parameter the caller passes", getter_only=True),
    Family("version_macro", "version", "macro", "an object-like macro (or a function-like one around the query)",
           getter_only=True),
    Family("version_late", "version", "late_assign", "int ver = 0; ... ver = N; (assigned after its declaration)",
           getter_only=True),
    # the store: how the pointer lands in its variable
    Family("cast_store", "store", "cast_store", "*(void **)&p = ... (the POSIX idiom)"),
    Family("memcpy_store", "store", "memcpy", "memcpy(&p, &tmp, sizeof p)"),
    Family("struct_member", "dest", "struct_member", "the pointers are members of a struct"),
    Family("struct_param", "dest", "struct_param", "the pointers are members of a struct the caller passes by "
           "pointer (api->p = ...)"),
    Family("array_element", "dest", "array_element", "each pointer is an element of an array"),
    # the structure of the loader
    Family("table_loop", "table", "table_loop", "a constant table {name, void **dest[, version]} walked in a loop"),
    Family("xmacro", "xlist", "xmacro", "an X-macro list of the rows, expanded into declarations and loads"),
    Family("typedef_chain", "typing", "typedef_chain", "the pointer types through two typedefs"),
    Family("using_alias", "typing", "using_alias", "the pointer types through C++ using-aliases", cxx=True),
    Family("cxx_casts", "casts", "cxx", "C++ casts: reinterpret_cast<decltype(p)>(...), reinterpret_cast<void **>(&p)",
           cxx=True),
    # the preprocessor
    Family("ifdef_macro", "pp", "ifdef_macro", "the loader under #if defined(ACME_WITH_CUDA) (not defined)"),
    Family("ifdef_win32", "pp", "win32", "the loader under #if defined(_WIN32), with LoadLibraryA/GetProcAddress"),
    Family("portable_lookup", "pp", "portable", "the library opened and searched through macros defined per "
           "platform (#if defined(_WIN32) GetProcAddress #else dlsym)"),
    Family("missing_header", "pp", "missing_header", "an #include \"acme_config.h\" that does not exist, whose "
           "ACME_API and acme_lib_t the loader uses"),
    # C++ and the files
    Family("namespace", "scope", "namespace", "everything in nested namespaces", cxx=True),
    Family("class_members", "scope", "class", "the pointers and the loader are members of a class", cxx=True),
    Family("in_header", "layout", "header", "the declarations, wrappers and lists in a project header"),
    Family("renamed_vars", "names", "renamed", "every identifier of the project renamed (no hint in a name)"),
    Family("cuda_file", "lang", "cu", "a .cu file (CUDA mode, host side) with a kernel", cxx=True),
)
BY_NAME = {f.name: f for f in FAMILIES}
AXES: tuple[str, ...] = tuple(dict.fromkeys(f.axis for f in FAMILIES))
_INCOMPATIBLE: frozenset[frozenset[str]] = frozenset({
    frozenset({"struct_param", "class_members"}),   # a class's members are its own struct: nothing to pass
})


@dataclass(frozen=True)
class Opts:
    """The choice on each axis ("" is the seed's own way)."""

    wrap: str = ""
    callee: str = ""
    version: str = ""
    store: str = ""
    dest: str = ""
    table: str = ""
    xlist: str = ""
    typing: str = ""
    casts: str = ""
    pp: str = ""
    scope: str = ""
    layout: str = ""
    names: str = ""
    lang: str = ""


def opts(families: Iterable[str]) -> Opts:
    """The options a set of families sets."""
    kw = {}
    for name in families:
        f = BY_NAME[name]
        if f.axis in kw:
            raise ValueError(f"{name} and another family both choose the {f.axis} axis")
        kw[f.axis] = f.option
    return Opts(**kw)


def applies(f: Family, s: Seed) -> bool:
    """Whether family `f` can rewrite seed `s` (and its twin)."""
    return not f.getter_only or s.lookup != "dlsym"


def compatible(names: Iterable[str]) -> bool:
    """Whether families compose: one per axis, and no pair known not to."""
    names = list(names)
    axes = [BY_NAME[n].axis for n in names]
    if len(set(axes)) != len(axes):
        return False
    return not any(frozenset((a, b)) in _INCOMPATIBLE for i, a in enumerate(names) for b in names[i + 1:])
