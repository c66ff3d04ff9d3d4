"""The clang AST lowered once into the dataflow IR of `..flow` (functions of statements, call sites).

Everything that makes a value is lowered, whatever it is spelled: declarations with their initializers (an
array of structs row by row, designated or not), assignments and compound assignments (hoisted out of the
expressions they sit in), `*(void **)&p = ...`, member and element stores, calls (direct, through any pointer,
of lambdas and of template specializations), returns, branches and loops, casts (a conversion to a function
pointer's type is where a pointer lands). Constants are read with `.values` (literals, macros, enumerators,
the toolkit's `CUDA_VERSION`). What a call does is not decided here: the solver knows that from the value it
calls. Besides the IR, lowering records what reporting needs of each call (its cursor, function and the
enclosing cursors) and of each function (its references, for "is the result tested").
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from clang.cindex import CursorKind as K
from clang.cindex import StorageClass, callbacks, conf
from clang.cindex import TypeKind as T

from .. import flow as F
from ..facts import TOOLKIT_MACROS
from .values import Env, evaluate, key, macro_value, tokens

__all__ = ["MAX_SOURCE_BYTES", "FnInfo", "Lowered", "SiteInfo", "kids", "lower", "subtree"]

_FN_KINDS = frozenset({K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR, K.DESTRUCTOR,
                       K.CONVERSION_FUNCTION})
_SCOPES = frozenset({K.NAMESPACE, K.CLASS_DECL, K.STRUCT_DECL, K.UNION_DECL, K.CLASS_TEMPLATE,
                     K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.LINKAGE_SPEC, K.UNEXPOSED_DECL})
_CASTS = frozenset({K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR, K.CXX_REINTERPRET_CAST_EXPR, K.CXX_CONST_CAST_EXPR,
                    K.CXX_FUNCTIONAL_CAST_EXPR, K.CXX_DYNAMIC_CAST_EXPR})
_CONSTS = frozenset({K.INTEGER_LITERAL, K.STRING_LITERAL, K.CHARACTER_LITERAL, K.CXX_BOOL_LITERAL_EXPR,
                     K.GNU_NULL_EXPR, K.CXX_NULL_PTR_LITERAL_EXPR, K.FLOATING_LITERAL})
_ARRAYS = frozenset({T.CONSTANTARRAY, T.INCOMPLETEARRAY, T.VARIABLEARRAY, T.DEPENDENTSIZEDARRAY})
_REFS = frozenset({T.LVALUEREFERENCE, T.RVALUEREFERENCE})
_FNTYPES = frozenset({T.FUNCTIONPROTO, T.FUNCTIONNOPROTO})
# clang's CXBinaryOperatorKind and CXUnaryOperatorKind (libclang 17+)
_BIN = {3: "*", 4: "/", 5: "%", 6: "+", 7: "-", 8: "<<", 9: ">>", 11: "<", 12: ">", 13: "<=", 14: ">=",
        15: "==", 16: "!=", 17: "&", 18: "^", 19: "|", 20: "&&", 21: "||", 22: "=", 33: ","}
_COMPOUND = {23: "*", 24: "/", 25: "%", 26: "+", 27: "-", 28: "<<", 29: ">>", 30: "&", 31: "^", 32: "|"}
_PICK = {"min", "max"}


def _visit(child: Any, _parent: Any, data: Any) -> int:
    out, tu, how = data
    child._tu = tu
    out.append(child)
    return int(how)


_VISIT = callbacks["cursor_visit"](_visit)   # one ctypes callback for every visit (none made per node)


def kids(c: Any) -> list[Any]:
    """A cursor's children: `get_children` without its per-child comparison with the null cursor."""
    out: list[Any] = []
    conf.lib.clang_visitChildren(c, _VISIT, (out, c._tu, 1))
    return out


def subtree(c: Any) -> list[Any]:
    """A cursor and its descendants in preorder, with one visit of libclang."""
    out: list[Any] = [c]
    conf.lib.clang_visitChildren(c, _VISIT, (out, c._tu, 2))
    return out


def _binop(c: Any) -> int:
    try:
        return int(conf.lib.clang_getCursorBinaryOperatorKind(c))
    except Exception:
        return 0


def _unop(c: Any) -> int:
    try:
        return int(conf.lib.clang_getCursorUnaryOperatorKind(c))
    except Exception:
        return 0


@dataclass
class SiteInfo:
    """What reporting needs of a call: the cursor, the function it is in, and the cursors around it."""

    cursor: Any
    fn: str
    parents: tuple[Any, ...]


@dataclass
class FnInfo:
    cursor: Any
    name: str
    key: str
    params: list[Any] = field(default_factory=list)


@dataclass
class Lowered:
    prog: F.Program
    sites: dict[int, SiteInfo]
    fns: dict[str, FnInfo]
    refs: dict[tuple[str, str], int]            # (function, variable) -> how often it is named there
    flag_uses: list[tuple[Any, tuple[Any, ...]]]   # (the reference, the cursors around it)
    called: set[str]
    types: list[Any]                            # type id -> the front end's type record
    misstores: list[tuple[Any, Any]] = field(default_factory=list)   # stores through a function pointer's value


class _Ctx:
    __slots__ = ("fn", "pre", "parents", "tparams")

    def __init__(self, fn: str, tparams: dict[str, int] | None = None) -> None:
        self.fn = fn
        self.pre: list[F.S] = []
        self.parents: list[Any] = []
        self.tparams = tparams or {}


class _Lowerer:
    def __init__(self, tu: Any, ours: Callable[[Any], bool], type_of: Callable[[Any, Any], Any],
                 static_api: Callable[[Any], str], macros: Any) -> None:
        self.tu, self.ours, self.type_of, self.static_api, self.macros = tu, ours, type_of, static_api, macros
        self.env = Env(macros)
        self.funcs: dict[str, F.Func] = {}
        self.calls: dict[int, F.Call] = {}
        self.sites: dict[int, SiteInfo] = {}
        self.fns: dict[str, FnInfo] = {}
        self.refs: dict[tuple[str, str], int] = {}
        self.flag_uses: list[tuple[Any, tuple[Any, ...]]] = []
        self.called: set[str] = set()
        self.init: list[F.S] = []
        self.types: list[Any] = []
        self._type_ids: dict[tuple[str, str], int] = {}
        self.fnptr: set[int] = set()
        self.vars: dict[str, F.Var] = {}
        self.aliases: set[str] = set()           # variables that stand for another object (references, range-for)
        self.escaped: set[str] = set()           # locals a nested lambda reaches
        self.flag_names: frozenset[str] = frozenset()
        self.misstores: list[tuple[Any, Any]] = []   # (the store, the function pointer it was meant to set)
        self._texts: dict[str, list[str]] = {}
        self._defines: dict[str, dict[str, str]] = {}
        self.header_defines: Callable[[], dict[str, str]] | None = None   # the project headers' object-like macros
        self.fn_defines: Callable[[], dict[str, str]] | None = None       # function-like macros' bodies, by name
        self.cuda_version = 0                                              # the CUDA_VERSION of the headers parsed

    # -- the translation unit --
    def run(self) -> None:
        todo = [c for c in kids(self.tu.cursor) if c.kind not in (K.MACRO_DEFINITION, K.MACRO_INSTANTIATION,
                                                                   K.INCLUSION_DIRECTIVE)]
        while todo:
            c = todo.pop(0)
            if not self.ours(c):
                continue
            k = c.kind
            if k in _SCOPES:
                todo[:0] = kids(c)
            elif k in _FN_KINDS:
                if c.is_definition():
                    self.function(c)
            elif k == K.VAR_DECL:
                self.global_var(c)

    # -- types --
    def tid(self, ty: Any, anchor: Any = None) -> int:
        """The type id of a function-pointer type (with where it is spelled), -1 for any other type."""
        try:
            can = ty.get_canonical()
        except Exception:
            return -1
        if not (can.kind == T.POINTER and can.get_pointee().kind in _FNTYPES) and can.kind not in (T.UNEXPOSED,
                                                                                                  T.DEPENDENT):
            return -1
        spot = (anchor.location.file.name, str(anchor.extent.start.offset)) \
            if anchor is not None and anchor.location.file is not None else ("", "")
        k = (ty.spelling + "\0" + spot[0], spot[1])
        got = self._type_ids.get(k)
        if got is None:
            info = self.type_of(ty, anchor)
            got = len(self.types)
            self.types.append(info)
            self._type_ids[k] = got
            if info is not None and getattr(info, "sig", None) is not None:
                self.fnptr.add(got)
        return got

    # -- variables --
    def var(self, d: Any, fn: str = "") -> F.Var:
        k = key(d)
        got = self.vars.get(k)
        if got is None:
            parent = d.semantic_parent
            local = (parent is not None and parent.kind in (*_FN_KINDS, K.LAMBDA_EXPR)) or d.kind == K.PARM_DECL
            static = d.kind == K.VAR_DECL and d.storage_class == StorageClass.STATIC
            shared = not local or static or k in self.escaped
            deduced = d.type.kind == T.AUTO    # `auto p = ...` has its initializer's type, spelled there
            own = d.get_definition()
            single = own is None or own == d.canonical      # declared once: its declaration is where it is spelled
            got = F.Var(k, shared, -1 if deduced else self.tid(d.type, d if single else None))
            self.vars[k] = got
        return got

    def global_var(self, c: Any) -> None:
        v = self.var(c)
        if c.type.get_canonical().kind in _REFS:
            self.aliases.add(v.key)
        init = _initializer(c)
        if init is not None:
            ctx = _Ctx("")
            self.init_into(F.LVar(v), c.type, init, ctx, self.init, alias=v.key in self.aliases)

    # -- functions --
    def function(self, c: Any, lam: bool = False) -> str:
        k = key(c)
        if k in self.funcs:
            return k
        name = c.spelling or "<lambda>"
        children = kids(c)
        params = [p for p in children if p.kind == K.PARM_DECL]
        tparams = {p.spelling: i for i, p in enumerate(x for x in children if x.kind in (
            K.TEMPLATE_NON_TYPE_PARAMETER, K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_TEMPLATE_PARAMETER))}
        self.fns[k] = FnInfo(c, name, k, params)
        self.funcs[k] = F.Func(k, name, (), ())      # placeholder while the body is lowered (recursion)
        self._escapes(c)
        ctx = _Ctx(k, tparams)
        pvars, defaults = self._params(params, ctx)
        # a parameter a lambda reaches: the shared location holds what the caller passed
        stmts: list[F.S] = [F.SAssign(F.LVar(v), F.ELit(F.Par(k, v.param or 0, v.key))) for v in pvars if v.shared]
        body = next((x for x in children if x.kind == K.COMPOUND_STMT), None)
        if body is not None:
            ctx.parents = [c]
            stmts += self.stmt(body, ctx)
        linkage = c.linkage.name if hasattr(c, "linkage") else ""
        self.funcs[k] = F.Func(k, name, tuple(pvars), tuple(stmts), tuple(defaults),
                               exported=linkage == "EXTERNAL" and not lam)
        return k

    def _params(self, params: list[Any], ctx: _Ctx) -> tuple[list[F.Var], list[F.E | None]]:
        """A function's parameters as variables (numbered), and the default each declares."""
        pvars = []
        defaults: list[F.E | None] = []
        for i, p in enumerate(params):
            v = self.var(p)
            v = F.Var(v.key, v.shared, v.ty, i)
            self.vars[v.key] = v
            if p.type.get_canonical().kind in _REFS:
                self.aliases.add(v.key)
            pvars.append(v)
            dflt = [x for x in kids(p) if x.kind.is_expression()]
            defaults.append(self.expr(dflt[-1], ctx) if dflt else None)
        return pvars, defaults

    def _escapes(self, c: Any) -> None:
        """The locals of `c` that a lambda inside it names: they live in shared locations."""
        nodes = subtree(c)
        if not any(n.kind == K.LAMBDA_EXPR for n in nodes):
            return
        for lam in (n for n in nodes if n.kind == K.LAMBDA_EXPR):
            inner = {key(n) for n in subtree(lam) if n.kind in (K.VAR_DECL, K.PARM_DECL)}
            for n in subtree(lam):
                if n.kind == K.DECL_REF_EXPR:
                    d = n.referenced
                    if d is not None and d.kind in (K.VAR_DECL, K.PARM_DECL) and key(d) not in inner:
                        self.escaped.add(key(d))
                        self.vars.pop(key(d), None)

    # -- statements --
    def block(self, c: Any, ctx: _Ctx) -> list[F.S]:
        """A compound statement, a `try` or a `catch`: its statements in order."""
        out: list[F.S] = []
        for ch in kids(c):
            out += self.stmt(ch, ctx)
        return out

    def stmt(self, c: Any, ctx: _Ctx) -> list[F.S]:
        ctx.parents.append(c)
        try:
            return self._stmt(c, ctx)
        finally:
            ctx.parents.pop()

    def _flush(self, ctx: _Ctx, out: list[F.S]) -> None:
        if ctx.pre:
            out += ctx.pre
            ctx.pre = []

    def _stmt(self, c: Any, ctx: _Ctx) -> list[F.S]:
        k = c.kind
        how = _STMTS.get(k)
        if how is not None:
            return how(self, c, ctx)
        out: list[F.S] = []
        if k.is_expression():
            e = self.expr(c, ctx)
            self._flush(ctx, out)
            out.append(F.SExpr(e))
            return out
        if k in _FN_KINDS or k in _NOTHING:
            return out
        for x in kids(c):    # a statement of another kind: what is in it still counts
            if x.kind.is_statement() or x.kind.is_expression() or x.kind == K.VAR_DECL:
                out += self.stmt(x, ctx)
        return out

    def _s_decls(self, c: Any, ctx: _Ctx) -> list[F.S]:
        out: list[F.S] = []
        for d in (kids(c) if c.kind == K.DECL_STMT else [c]):
            if d.kind == K.VAR_DECL:
                self.local_var(d, ctx, out)
        return out

    def _s_if(self, c: Any, ctx: _Ctx) -> list[F.S]:
        out: list[F.S] = []
        ch = kids(c)
        while ch and ch[0].kind in (K.DECL_STMT, K.VAR_DECL) and len(ch) > 2:
            out += self.stmt(ch.pop(0), ctx)
        if len(ch) >= 2:
            e = self.expr(ch[0], ctx)
            self._flush(ctx, out)
            out.append(F.SExpr(e))
            then = self.stmt(ch[1], ctx)
            other = [s for x in ch[2:] for s in self.stmt(x, ctx)]
            out.append(F.SIf(tuple(then), tuple(other)))
        return out

    def _s_loop(self, c: Any, ctx: _Ctx) -> list[F.S]:
        """`for`, `while`, `do`: declarations first, then the body with the condition and the step, repeated."""
        out: list[F.S] = []
        ch = kids(c)
        if not ch:
            return out
        do = c.kind == K.DO_STMT
        body, rest = (ch[0], ch[1:]) if do else (ch[-1], ch[:-1])
        loop: list[F.S] = []
        for x in rest:
            if x.kind in (K.DECL_STMT, K.VAR_DECL):
                out += self.stmt(x, ctx)
            else:
                loop += self.stmt(x, ctx)
        out.append(F.SLoop(tuple([*self.stmt(body, ctx), *loop])))
        return out

    def _s_switch(self, c: Any, ctx: _Ctx) -> list[F.S]:
        out: list[F.S] = []
        ch = kids(c)
        if ch:
            e = self.expr(ch[0], ctx)
            self._flush(ctx, out)
            out.append(F.SExpr(e))
            out.append(F.SIf(tuple(s for x in ch[1:] for s in self.stmt(x, ctx)), ()))
        return out

    def _s_labelled(self, c: Any, ctx: _Ctx) -> list[F.S]:
        ch = kids(c)
        return [s for x in (ch[1:] if c.kind == K.CASE_STMT else ch) for s in self.stmt(x, ctx)]

    def _s_return(self, c: Any, ctx: _Ctx) -> list[F.S]:
        out: list[F.S] = []
        ch = [x for x in kids(c) if x.kind.is_expression()]
        if ch:
            e = self.expr(ch[0], ctx)
            self._flush(ctx, out)
            out.append(F.SRet(e))
        return out

    def local_var(self, d: Any, ctx: _Ctx, out: list[F.S]) -> None:
        v = self.var(d)
        alias = d.type.get_canonical().kind in _REFS
        init = _initializer(d)
        if init is not None and not alias and _record(d.type) and _lvalue_kind(init):
            alias = True     # a struct copied from an object that is there: the same values
        if alias:
            self.aliases.add(v.key)
        if init is None:
            return
        if v.shared and d.storage_class == StorageClass.STATIC:
            sub = _Ctx(ctx.fn, ctx.tparams)
            self.init_into(F.LVar(v), d.type, init, sub, self.init, alias=alias)
            return
        self.init_into(F.LVar(v), d.type, init, ctx, out, alias=alias)

    def init_into(self, lv: F.LV, ty: Any, init: Any, ctx: _Ctx, out: list[F.S], *, alias: bool = False,
                  row: bool = False) -> None:
        """The stores an initializer makes: a brace list row by row and field by field, else one value (a string or
        a version a table's row writes in this file carries where: a request of that name is that row's)."""
        rows = _init_list(init)
        if rows is not None and not alias:
            self._rows(lv, ty, rows, ctx, out)
            return
        e = self.lvalue_addr(init, ctx) if alias else self.expr(init, ctx)
        if row and isinstance(e, F.ELit) and isinstance(e.v, (F.Str, F.Tk, F.Int)):
            e = F.ELit(replace(e.v, at=self._written_here(init)))
        self._flush(ctx, out)
        out.append(F.SAssign(lv, e))

    def _rows(self, lv: F.LV, ty: Any, lst: Any, ctx: _Ctx, out: list[F.S]) -> None:
        elems = [x for x in kids(lst) if x.kind.is_expression()]
        can = ty.get_canonical() if ty is not None else None
        if (can is not None and can.kind in _ARRAYS) or _container(ty):
            for i, x in enumerate(elems):
                sub = F.LIndex(lv, F.ELit(F.Int(i)), self.tid(x.type, x))
                self.init_into(sub, x.type, x, ctx, out, row=True)
            return
        fields = _fields(lst.type if can is None or can.kind not in (T.RECORD, T.ELABORATED) else ty)
        pos = 0
        for x in elems:
            name, val = _designated(x)
            if name is not None:
                pos = next((i for i, f in enumerate(fields) if f.spelling == name), len(fields))
            if pos < len(fields):
                f = fields[pos]
                self.init_into(F.LField(lv, key(f), self.tid(f.type, f)), f.type, val, ctx, out, row=True)
            pos += 1

    def range_for(self, c: Any, ctx: _Ctx) -> list[F.S]:
        ch = kids(c)
        out: list[F.S] = []
        var = next((x for x in ch if x.kind == K.VAR_DECL), None)
        body = ch[-1] if ch else None
        rng = next((x for x in ch if x.kind.is_expression()), None)
        loop: list[F.S] = []
        if var is not None and rng is not None:
            v = self.var(var)
            self.aliases.add(v.key)
            lst = _init_list(rng)
            if lst is not None:    # `for (auto& e : {a, b})`: each element's value
                items = tuple(self.lvalue_addr(x, ctx) for x in kids(lst) if x.kind.is_expression())
                self._flush(ctx, out)
                loop.append(F.SAssign(F.LVar(v), F.EUnion(items)))
            else:
                base = self.lval(rng, ctx)
                self._flush(ctx, out)
                if base is not None:
                    loop.append(F.SAssign(F.LVar(v), F.EAddr(F.LIndex(base, F.EUnk("each row")))))
        if body is not None:
            loop += self.stmt(body, ctx)
        out.append(F.SLoop(tuple(loop)))
        return out

    # -- expressions --
    def expr(self, c: Any, ctx: _Ctx) -> F.E:
        ctx.parents.append(c)
        try:
            return self._expr(c, ctx)
        finally:
            ctx.parents.pop()

    def _expr(self, c: Any, ctx: _Ctx) -> F.E:
        k = c.kind
        if k in _CONSTS:
            return self.const(c)
        if k in _CASTS:
            return self._e_cast(c, ctx)
        how = _EXPRS.get(k)
        return how(self, c, ctx) if how is not None else self.effects(c, ctx)

    def _e_cast(self, c: Any, ctx: _Ctx) -> F.E:
        inner = [x for x in kids(c) if x.kind.is_expression()]
        e = self.expr(inner[-1], ctx) if inner else F.EUnk()
        ty = self.tid(c.type, c)
        return F.ECast(ty, e) if ty in self.fnptr else e

    def _e_member(self, c: Any, ctx: _Ctx) -> F.E:
        d = c.referenced
        if d is not None and d.kind in (K.CXX_METHOD, K.FUNCTION_DECL, K.FUNCTION_TEMPLATE):
            return F.EFun(self.fkey(d), d.spelling)
        lv = self.lval(c, ctx)
        return F.ELoad(lv) if lv is not None else F.EUnk(c.spelling)

    def _e_element(self, c: Any, ctx: _Ctx) -> F.E:
        lv = self.lval(c, ctx)
        return F.ELoad(lv) if lv is not None else F.EUnk()

    def _e_compound(self, c: Any, ctx: _Ctx) -> F.E:
        ch = kids(c)
        op = _COMPOUND.get(_binop(c), "?")
        lv = self.lval(ch[0], ctx) if len(ch) == 2 else None
        if lv is None:
            return self.effects(c, ctx)
        rhs = self.expr(ch[1], ctx)
        ctx.pre.append(F.SAssign(lv, F.EOp(op, F.ELoad(lv), rhs)))
        return F.ELoad(lv)

    def _e_conditional(self, c: Any, ctx: _Ctx) -> F.E:
        ch = kids(c)
        if len(ch) == 3:
            return F.ECond(self.expr(ch[0], ctx), self.expr(ch[1], ctx), self.expr(ch[2], ctx))
        return self.effects(c, ctx)

    def _e_lambda(self, c: Any, ctx: _Ctx) -> F.E:
        return F.EFun(self.function(c, lam=True), "<lambda>")

    def _e_braces(self, c: Any, ctx: _Ctx) -> F.E:
        items = [self.expr(x, ctx) for x in kids(c) if x.kind.is_expression()]
        return items[0] if len(items) == 1 else F.EUnk("{...}")

    def effects(self, c: Any, ctx: _Ctx) -> F.E:
        """An expression of a kind with no value of its own here: what its parts do still happens."""
        for x in kids(c):
            if x.kind.is_expression():
                e = self.expr(x, ctx)
                ctx.pre.append(F.SExpr(e))
            elif x.kind.is_statement():
                ctx.pre += self.stmt(x, ctx)
        return F.EUnk(c.kind.name)

    def through(self, c: Any, ctx: _Ctx) -> F.E:
        """An implicit conversion or parentheses: the value within; an array decays to its first element's
        address; nothing within: a constant of the tokens (a default argument, a macro)."""
        inner = [x for x in kids(c) if x.kind.is_expression()]
        if not inner:
            return self.const(c)
        x = inner[-1]
        if c.type.get_canonical().kind == T.POINTER and _is_array(x):
            held = self._const_string(x)
            if held is not None:
                return held
            lv = self.lval(x, ctx)
            if lv is not None:
                return F.EAddr(F.LIndex(lv, F.ELit(F.Int(0)), -1))
        e = self.expr(x, ctx)
        ty = self.tid(c.type, c) if c.type.get_canonical().kind == T.POINTER else -1
        return F.ECast(ty, e) if ty in self.fnptr and self.tid(x.type, x) != ty else e

    def _const_string(self, x: Any) -> F.E | None:
        """A `const char` array initialized by a string literal, decayed to a pointer, is that string (its bytes
        cannot change); None for anything else."""
        d = _variable(x)
        if d is None or not _const_chars(d.type):
            return None
        init = [y for y in kids(d) if y.kind.is_expression()]
        while init and init[-1].kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            init = [y for y in kids(init[-1]) if y.kind.is_expression()]
        if len(init) != 1 or init[0].kind != K.STRING_LITERAL:
            return None
        e = self.const(init[0])
        return e if isinstance(e, F.ELit) and isinstance(e.v, F.Str) else None

    def const(self, c: Any) -> F.E:
        """A constant: its value from `.values`, the toolkit's when it is spelled with a macro that is
        `CUDA_VERSION` (or one that names it)."""
        try:
            v = evaluate(c, self.env)
        except Exception:
            return F.EUnk()
        at, path = self.word_at(c)
        if at and (at[0].isalpha() or at[0] == "_") and self.toolkit_word(at, path):
            mv = macro_value(at, self.macros)
            n = mv.value if isinstance(mv.value, int) else v.value if isinstance(v.value, int) else None
            return F.ELit(F.Tk(n, at))
        if at and isinstance(v.value, int) and v.value == self.cuda_version:
            word = self.made_of_toolkit(c, at, path)
            if word:
                return F.ELit(F.Tk(v.value, word))
        if v.kind == "toolkit":
            return F.ELit(F.Tk(v.value if isinstance(v.value, int) else None, v.text))
        if isinstance(v.value, bool):
            return F.ELit(F.Int(int(v.value)))
        if isinstance(v.value, int):
            return F.ELit(F.Int(v.value, v.text))
        if isinstance(v.value, str):
            return F.ELit(F.Str(v.value))
        return F.EUnk(v.text)

    def made_of_toolkit(self, c: Any, macro: str, path: str) -> str:
        """Whether a constant with the toolkit's value, made by the invocation of the function-like macro `macro`,
        was written as the toolkit's version: a toolkit macro in the invocation's arguments or in the bodies of the
        macros it invokes (an X-macro list `LIST(X)` whose rows name `CUDA_VERSION`), three levels deep. The macro
        that says so, or "" when none does."""
        lines = self.lines(path)
        loc = c.location
        line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
        text = "\n".join([line[max(loc.column - 1, 0):], *lines[loc.line:loc.line + 8]])
        words = set(_WORD.findall(_invocation(text)))
        bodies = self.fn_defines() if self.fn_defines is not None else {}
        for _ in range(4):
            found = next((w for w in sorted(words) if self.toolkit_word(w, path)), "")
            more = {x for w in words if w in bodies for x in _WORD.findall(bodies[w])} - words
            if found or not more:
                return found
            words |= more
        return ""

    def lines(self, path: str) -> list[str]:
        got = self._texts.get(path)
        if got is None:
            got = self._texts[path] = _read_lines(path)
        return got

    def _written_here(self, c: Any) -> tuple[int, int]:
        """Where a cursor is written (its expansion), when in the file linted; (0, 0) elsewhere."""
        loc = c.location
        if loc.file is None or os.path.abspath(loc.file.name) != os.path.abspath(self.tu.spelling):
            return 0, 0
        return loc.line, loc.column

    def word_at(self, c: Any) -> tuple[str, str]:
        """The identifier written where a cursor was expanded (the macro's name for a constant a macro made), read
        from the file's text, and that file; "" where none is."""
        loc = c.location
        f = loc.file
        if f is None:
            return "", ""
        lines = self.lines(f.name)
        line = lines[loc.line - 1] if 0 < loc.line <= len(lines) else ""
        m = _WORD.match(line, max(loc.column - 1, 0))
        return (m.group(0) if m else ""), f.name

    def toolkit_word(self, word: str, path: str, depth: int = 0) -> bool:
        """True when a macro is the toolkit's version: `CUDA_VERSION` (and its kin), or a `#define` of the file
        that names one. A macro defined in several `#if` branches is the toolkit's when one of its definitions is
        (the caller has checked that the value is the toolkit's)."""
        if word in TOOLKIT_MACROS:
            return True
        defs = self._defines.get(path)
        if defs is None:
            defs = self._defines[path] = {}
            for name, text in _DEFINE.findall("\n".join(self.lines(path))):
                defs[name] = f"{defs[name]}\n{text}" if name in defs else text
        body = defs.get(word)
        if body is None and self.header_defines is not None:
            body = self.header_defines().get(word)
        return body is not None and depth < 8 and any(self.toolkit_word(w, path, depth + 1)
                                                      for w in _WORD.findall(body))

    def ref(self, c: Any, ctx: _Ctx) -> F.E:
        d = c.referenced
        if d is None:
            return F.EUnk(c.spelling)
        dk = d.kind
        if dk in (K.VAR_DECL, K.PARM_DECL):
            v = self.var(d)
            self.refs[(ctx.fn, v.key)] = self.refs.get((ctx.fn, v.key), 0) + 1
            if dk == K.VAR_DECL and d.type.get_canonical().kind in _ARRAYS:
                return F.EAddr(F.LIndex(F.LVar(v), F.ELit(F.Int(0))))
            if v.key in self.aliases:
                return F.ELoad(F.LDeref(F.EVar(v), None, v.ty))
            return F.EVar(v)
        if dk == K.ENUM_CONSTANT_DECL:
            if d.spelling in self.flag_names:
                self.flag_uses.append((c, tuple(ctx.parents[-9:-1])))
            return F.ELit(F.Int(d.enum_value, d.spelling))
        if dk in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE):
            return F.EFun(self.fkey(d), d.spelling)
        if dk == K.TEMPLATE_NON_TYPE_PARAMETER and d.spelling in ctx.tparams:
            return F.ELit(F.Par(ctx.fn, -1 - ctx.tparams[d.spelling], d.spelling))
        if dk == K.FIELD_DECL:
            return F.ELoad(F.LField(F.LDeref(F.EUnk("this")), key(d), self.tid(d.type, d)))
        return F.EUnk(c.spelling)

    def fkey(self, d: Any) -> str:
        """A function's key: its template's for a specialization (the body lowered is the template's)."""
        t = conf.lib.clang_getSpecializedCursorTemplate(d)
        if t is not None and t.kind != K.NO_DECL_FOUND and t != d:
            d = t
        return key(d)

    def unary(self, c: Any, ctx: _Ctx) -> F.E:
        ch = [x for x in kids(c) if x.kind.is_expression()]
        if len(ch) != 1:
            return self.effects(c, ctx)
        op = _unop(c)
        if op == 5:                                  # &x
            return self.lvalue_addr(ch[0], ctx)
        if op == 6:                                  # *p
            return F.ELoad(F.LDeref(self.expr(ch[0], ctx), None, self.tid(c.type, c)))
        if op in (1, 2, 3, 4):                       # ++ / --
            lv = self.lval(ch[0], ctx)
            if lv is None:
                return self.effects(c, ctx)
            ctx.pre.append(F.SAssign(lv, F.EOp("+" if op in (1, 3) else "-", F.ELoad(lv), F.ELit(F.Int(1)))))
            return F.ELoad(lv)
        e = self.expr(ch[0], ctx)
        if op == 8:
            return F.EOp("-", F.ELit(F.Int(0)), e)
        if op == 7:
            return e
        ctx.pre.append(F.SExpr(e))
        return F.EUnk("!")

    def binary(self, c: Any, ctx: _Ctx) -> F.E:
        ch = kids(c)
        if len(ch) != 2:
            return self.effects(c, ctx)
        op = _BIN.get(_binop(c), "?")
        if op == "=":
            lv = self.lval(ch[0], ctx)
            rhs = self.expr(ch[1], ctx)
            if lv is None:
                ctx.pre.append(F.SExpr(rhs))
                return rhs
            ctx.pre.append(F.SAssign(lv, rhs))
            return F.ELoad(lv)
        a, b = self.expr(ch[0], ctx), self.expr(ch[1], ctx)
        if op == ",":
            ctx.pre.append(F.SExpr(a))
            return b
        return F.EOp(op, a, b)

    def lvalue_addr(self, c: Any, ctx: _Ctx, *, temporary: bool = False) -> F.E:
        """`&x` of any lvalue expression (a function's address is the function); with `temporary`, the address of
        a temporary holding the value of an expression that is not an lvalue (a reference bound to it)."""
        lv = self.lval(c, ctx)
        if lv is None and temporary and not _function_pointer(c.type):
            tmp = F.Var(f"tmp:{c.hash}:{len(self.calls)}:{len(ctx.pre)}", False)
            ctx.pre.append(F.SAssign(F.LVar(tmp), self.expr(c, ctx)))
            return F.EAddr(F.LVar(tmp))
        if lv is None:
            return self.expr(c, ctx)
        if isinstance(lv, F.LDeref) and lv.index is None:
            return lv.e
        return F.EAddr(lv)

    def lval(self, c: Any, ctx: _Ctx) -> F.LV | None:
        """The place an lvalue expression names (None when it names none the analysis follows)."""
        k = c.kind
        if k in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) or k in _CASTS:
            inner = [x for x in kids(c) if x.kind.is_expression()]
            return self.lval(inner[-1], ctx) if inner else None
        how = _LVALS.get(k)
        return how(self, c, ctx) if how is not None else None

    def _l_ref(self, c: Any, ctx: _Ctx) -> F.LV | None:
        d = c.referenced
        if d is not None and d.kind == K.FIELD_DECL:
            return F.LField(F.LDeref(F.EUnk("this")), key(d), self.tid(d.type, d))
        if d is None or d.kind not in (K.VAR_DECL, K.PARM_DECL):
            return None
        v = self.var(d)
        self.refs[(ctx.fn, v.key)] = self.refs.get((ctx.fn, v.key), 0) + 1
        return F.LDeref(F.EVar(v), None, v.ty) if v.key in self.aliases else F.LVar(v)

    def _l_member(self, c: Any, ctx: _Ctx) -> F.LV | None:
        d = c.referenced
        if d is not None and d.kind == K.VAR_DECL:
            return F.LVar(self.var(d))
        if d is None or d.kind != K.FIELD_DECL:
            return None
        base = [x for x in kids(c) if x.kind.is_expression()]
        fkey, fty = key(d), self.tid(d.type, d)
        if not base:
            return F.LField(F.LDeref(F.EUnk("this")), fkey, fty)
        b = base[0]
        if _pointer(b.type):
            return F.LField(F.LDeref(self.expr(b, ctx)), fkey, fty)
        inner = self.lval(b, ctx)
        return F.LField(inner if inner is not None else F.LDeref(F.EUnk()), fkey, fty)

    def _l_element(self, c: Any, ctx: _Ctx) -> F.LV | None:
        ch = kids(c)
        if len(ch) != 2:
            return None
        base, idx = ch
        ty = self.tid(c.type, c)
        arr = _array_below(base)
        inner = self.lval(arr, ctx) if arr is not None else None
        if inner is not None:
            return F.LIndex(inner, self.expr(idx, ctx), ty)
        return F.LDeref(self.expr(base, ctx), self.expr(idx, ctx), ty)

    def _l_deref(self, c: Any, ctx: _Ctx) -> F.LV | None:
        if _unop(c) != 6:
            return None
        ch = [x for x in kids(c) if x.kind.is_expression()]
        if not ch:
            return None
        ref = _function_value(ch[0])
        if ref is not None:
            # `*(void **)(*fp) = v`, `*(void **)fp = v`: a function pointer's value (what `*fp` converts back to) made
            # an object pointer and stored through: the bytes go into the function, fp is never set (undefined
            # behaviour). Said as such (`misstores`); the value is judged as landing where it was meant to: in fp.
            self.misstores.append((c, ref.referenced))
            inner = self.lval(ref, ctx)
            if inner is not None:
                return inner
        return F.LDeref(self.expr(ch[0], ctx), None, self.tid(c.type, c))

    def _l_call(self, c: Any, ctx: _Ctx) -> F.LV | None:
        return F.LDeref(self.call(c, ctx)) if c.type.get_canonical().kind in _REFS else None

    # -- calls --
    def call(self, c: Any, ctx: _Ctx) -> F.E:
        ref = c.referenced
        args = list(c.get_arguments())
        if c.spelling:
            self.called.add(c.spelling)
        known = self._known_call(c, ref, args, ctx)
        if known is not None:
            return known
        callee, callee_cursor, args = self._callee(c, ref, args, ctx)
        refs = _reference_params(ref)
        args = _with_defaults(args, ref)
        lowered = tuple(self.lvalue_addr(a, ctx, temporary=True) if i in refs else self.expr(a, ctx)
                        for i, a in enumerate(args))
        sid = len(self.calls)
        static = self.static_api(callee_cursor) if callee_cursor is not None else ""
        outs = tuple(i for i, a in enumerate(args) if _pointer_to_pointer(a.type))
        typed = ref is not None and (ref.kind == K.FUNCTION_TEMPLATE or self.fkey(ref) != key(ref))
        self.calls[sid] = F.Call(sid, ctx.fn, callee, lowered, c.spelling or "", static, outs,
                                 self.tid(c.type, c) if typed and _function_pointer(c.type) else -1,
                                 tuple(F.ELit(F.Int(n)) for n in _template_args(ref)))
        self.sites[sid] = SiteInfo(c, ctx.fn, tuple(ctx.parents))
        return F.ECall(sid)

    def _known_call(self, c: Any, ref: Any, args: list[Any], ctx: _Ctx) -> F.E | None:
        """The value of a call of the C++ library known by what it does (None for any other call): a
        constructor of one value (`std::string("cuX")`), `.c_str()`, operators, `std::min`/`std::max`."""
        if ref is None:
            return None
        if ref.kind == K.CONSTRUCTOR:
            given = [a for a in args if not _is_default_arg(a)]   # `std::string("cuX")`: the value it is made of
            return self.expr(given[0], ctx) if len(given) == 1 else self.effects(c, ctx)
        if ref.kind == K.CXX_METHOD and ref.spelling in ("c_str", "data", "get") and not args:
            ch = kids(c)
            member = ch[0] if ch and ch[0].kind == K.MEMBER_REF_EXPR else None
            obj = [x for x in kids(member) if x.kind.is_expression()] if member is not None else []
            return self.expr(obj[0], ctx) if obj else F.EUnk()
        if ref.spelling.startswith("operator") and ref.spelling != "operator()":
            return self._operator(c, ref.spelling[8:].strip(), ctx)
        if ref.spelling in _PICK and len(args) == 2 and _std_or_global(ref):
            return F.EOp(ref.spelling, self.expr(args[0], ctx), self.expr(args[1], ctx))
        return None

    def _operator(self, c: Any, op: str, ctx: _Ctx) -> F.E:
        operands = [a for a in kids(c) if a.kind.is_expression()][-2:]
        xs = [self.expr(a, ctx) for a in operands]
        if op in ("+", "-", "*", "/") and len(xs) == 2:
            return F.EOp(op, xs[0], xs[1])
        if op == "=" and len(xs) == 2:
            lv = self.lval(operands[0], ctx)
            if lv is not None:
                ctx.pre.append(F.SAssign(lv, xs[1]))
            return xs[1]
        for x in xs:
            ctx.pre.append(F.SExpr(x))
        return F.EUnk(op)

    def _callee(self, c: Any, ref: Any, args: list[Any], ctx: _Ctx) -> tuple[F.E, Any, list[Any]]:
        """What a call calls (a function by key, a lambda object's value, any expression's value), the callee's
        cursor, and the arguments (the object of `obj(...)` and of a call clang kept with an error left out)."""
        ch = kids(c)
        callee_cursor = ch[0] if ch else None
        if ref is not None and ref.kind == K.CXX_METHOD and ref.spelling == "operator()":
            obj = next((x for x in ch if _the_object(x)), None)
            callee = self.expr(obj, ctx) if obj is not None else F.EUnk()
            return callee, callee_cursor, args[1:] if args and obj is not None and args[0] == obj else args
        if ref is not None and ref.kind in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE):
            return F.EFun(self.fkey(ref), ref.spelling), callee_cursor, args
        if callee_cursor is None:
            return F.EUnk(), None, args
        return self._unresolved(c, ref, callee_cursor, ctx), callee_cursor, \
            args or [x for x in ch[1:] if x.kind.is_expression()]

    def _unresolved(self, c: Any, ref: Any, callee_cursor: Any, ctx: _Ctx) -> F.E:
        """A callee that is no declared function: a name clang kept (or only the source spells) when it could not
        resolve it, else the value of the expression called."""
        name = c.spelling or _named_callee(callee_cursor) or _written_name(callee_cursor)
        return F.EFun("name:" + name, name) if ref is None and name else self.expr(callee_cursor, ctx)


_STMTS: dict[Any, Callable[[_Lowerer, Any, _Ctx], list[F.S]]] = {
    K.COMPOUND_STMT: _Lowerer.block, K.CXX_TRY_STMT: _Lowerer.block, K.CXX_CATCH_STMT: _Lowerer.block,
    K.DECL_STMT: _Lowerer._s_decls, K.VAR_DECL: _Lowerer._s_decls, K.IF_STMT: _Lowerer._s_if,
    K.FOR_STMT: _Lowerer._s_loop, K.WHILE_STMT: _Lowerer._s_loop, K.DO_STMT: _Lowerer._s_loop,
    K.CXX_FOR_RANGE_STMT: _Lowerer.range_for, K.SWITCH_STMT: _Lowerer._s_switch,
    K.CASE_STMT: _Lowerer._s_labelled, K.DEFAULT_STMT: _Lowerer._s_labelled, K.LABEL_STMT: _Lowerer._s_labelled,
    K.RETURN_STMT: _Lowerer._s_return,
}
_NOTHING = frozenset({K.BREAK_STMT, K.CONTINUE_STMT, K.GOTO_STMT, K.NULL_STMT, K.ASM_STMT})
_EXPRS: dict[Any, Callable[[_Lowerer, Any, _Ctx], F.E]] = {
    K.UNEXPOSED_EXPR: _Lowerer.through, K.PAREN_EXPR: _Lowerer.through, K.DECL_REF_EXPR: _Lowerer.ref,
    K.MEMBER_REF_EXPR: _Lowerer._e_member, K.ARRAY_SUBSCRIPT_EXPR: _Lowerer._e_element,
    K.UNARY_OPERATOR: _Lowerer.unary, K.BINARY_OPERATOR: _Lowerer.binary,
    K.COMPOUND_ASSIGNMENT_OPERATOR: _Lowerer._e_compound, K.CONDITIONAL_OPERATOR: _Lowerer._e_conditional,
    K.CALL_EXPR: _Lowerer.call, K.LAMBDA_EXPR: _Lowerer._e_lambda, K.INIT_LIST_EXPR: _Lowerer._e_braces,
}
_LVALS: dict[Any, Callable[[_Lowerer, Any, _Ctx], F.LV | None]] = {
    K.DECL_REF_EXPR: _Lowerer._l_ref, K.MEMBER_REF_EXPR: _Lowerer._l_member,
    K.ARRAY_SUBSCRIPT_EXPR: _Lowerer._l_element, K.UNARY_OPERATOR: _Lowerer._l_deref, K.CALL_EXPR: _Lowerer._l_call,
}


def _function_value(c: Any) -> Any:
    """The reference to a function-pointer variable or field whose *value* an expression converts to an object
    pointer: `(void **)(*fp)` (`*fp` is the function, which converts back to fp's value) or `(void **)fp`. None
    for any other expression (`(void **)&fp` takes fp's address: a store through it sets fp)."""
    can = c.type.get_canonical()
    if can.kind != T.POINTER or can.get_pointee().kind in _FNTYPES:
        return None
    x = _beneath(c)
    if x.kind == K.UNARY_OPERATOR and _unop(x) == 6:
        inner = [y for y in kids(x) if y.kind.is_expression()]
        x = _beneath(inner[0]) if inner else x
    d = x.referenced if x.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR) else None
    if d is None or d.kind not in (K.VAR_DECL, K.FIELD_DECL, K.PARM_DECL):
        return None
    return x if _function_pointer(d.type) and d.type.get_canonical().kind == T.POINTER else None


def _beneath(c: Any) -> Any:
    """An expression under its conversions and parentheses."""
    x = c
    for _ in range(8):
        if x.kind not in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and x.kind not in _CASTS:
            break
        inner = [y for y in kids(x) if y.kind.is_expression()]
        if not inner:
            break
        x = inner[-1]
    return x


def _the_object(x: Any) -> bool:
    """The object expression of a call of a closure or functor (`load(...)`: the variable `load`), not the
    reference to its `operator()`."""
    if not x.kind.is_expression():
        return False
    if x.kind != K.UNEXPOSED_EXPR:
        return True
    ch = kids(x)
    if not ch:
        return False
    ref = ch[0].referenced
    return ch[0].kind != K.DECL_REF_EXPR or (ref is not None and ref.kind in (K.VAR_DECL, K.PARM_DECL))


# ---- helpers --------------------------------------------------------------------------------------------------


def _initializer(d: Any) -> Any:
    got = [x for x in kids(d) if x.kind.is_expression()]
    return got[-1] if got else None


def _init_list(c: Any) -> Any:
    """The brace list an initializer is (through conversions and a container's constructor), or None."""
    for _ in range(6):
        if c is None:
            return None
        if c.kind == K.INIT_LIST_EXPR:
            return c
        if c.kind in (K.UNEXPOSED_EXPR, K.CALL_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR) or c.kind in _CASTS:
            inner = [x for x in kids(c) if x.kind.is_expression()]
            if len(inner) != 1:
                return None
            c = inner[0]
            continue
        return None
    return None


def _fields(ty: Any) -> list[Any]:
    try:
        d = ty.get_canonical().get_declaration()
    except Exception:
        return []
    return [f for f in kids(d) if f.kind == K.FIELD_DECL] if d is not None else []


def _designated(x: Any) -> tuple[str | None, Any]:
    """(field name, value) of a designated initializer `.name = value`; (None, x) otherwise."""
    if x.kind == K.UNEXPOSED_EXPR:
        ch = kids(x)
        if len(ch) == 2 and ch[0].kind == K.MEMBER_REF:
            return ch[0].spelling, ch[1]
    return None, x


def _record(ty: Any) -> bool:
    return bool(ty.get_canonical().kind == T.RECORD)


def _container(ty: Any) -> bool:
    """A standard container of rows (`std::vector<Row>`, `std::array<Row, N>`, `std::initializer_list`)."""
    try:
        return bool(ty.get_num_template_arguments() > 0 and ty.get_canonical().kind == T.RECORD)
    except Exception:
        return False


def _lvalue_kind(c: Any) -> bool:
    inner = c
    while inner.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
        ch = [x for x in kids(inner) if x.kind.is_expression()]
        if len(ch) != 1:
            break
        inner = ch[0]
    return bool(inner.kind in (K.DECL_REF_EXPR, K.MEMBER_REF_EXPR, K.ARRAY_SUBSCRIPT_EXPR))


def _variable(x: Any) -> Any:
    """The variable an expression names, through parentheses and implicit conversions; None otherwise."""
    while x.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
        ch = [y for y in kids(x) if y.kind.is_expression()]
        if len(ch) != 1:
            return None
        x = ch[0]
    d = x.referenced if x.kind == K.DECL_REF_EXPR else None
    return d if d is not None and d.kind == K.VAR_DECL else None


def _const_chars(ty: Any) -> bool:
    """Whether a type, as written, is an array of `const char` (a typedef of an array is not followed)."""
    try:
        el = ty.element_type
        return bool(el.is_const_qualified()) and el.get_canonical().kind in (T.CHAR_S, T.CHAR_U, T.SCHAR, T.UCHAR)
    except Exception:   # no element type: not an array as written
        return False


def _is_array(c: Any) -> bool:
    """Whether an expression is an array (it decays to its first element's address). A parameter declared with an
    array type is a pointer (C11 6.7.6.3p7: `const char name[]` is `const char *name`), whatever type libclang
    reports for it: its value is what the caller passed."""
    if c.type.get_canonical().kind not in _ARRAYS:
        return False
    x = c
    for _ in range(4):
        if x.kind == K.DECL_REF_EXPR:
            d = x.referenced
            return d is None or d.kind != K.PARM_DECL
        ch = [y for y in kids(x) if y.kind.is_expression()] if x.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) else []
        if len(ch) != 1:
            return True
        x = ch[0]
    return True


def _array_below(c: Any) -> Any:
    """The array expression under an implicit array-to-pointer conversion (None: the base is a pointer)."""
    x = c
    for _ in range(4):
        if _is_array(x):
            return x
        if x.kind not in (K.UNEXPOSED_EXPR, K.PAREN_EXPR):
            return None
        ch = [y for y in kids(x) if y.kind.is_expression()]
        if len(ch) != 1:
            return None
        x = ch[0]
    return None


def _pointer(ty: Any) -> bool:
    return bool(ty.get_canonical().kind == T.POINTER)


def _function_pointer(ty: Any) -> bool:
    can = ty.get_canonical()
    return bool((can.kind == T.POINTER and can.get_pointee().kind in _FNTYPES) or can.kind in (T.UNEXPOSED,
                                                                                             T.DEPENDENT))


def _pointer_to_pointer(ty: Any) -> bool:
    can = ty.get_canonical()
    return bool(can.kind == T.POINTER and can.get_pointee().get_canonical().kind == T.POINTER)


def _std_or_global(f: Any) -> bool:
    parent = f.semantic_parent
    return parent is None or parent.kind == K.TRANSLATION_UNIT or (parent.kind == K.NAMESPACE and parent.spelling == "std")


def _named_callee(c: Any) -> str:
    """The name a call clang kept with an error in it calls (its callee an unresolved or overloaded reference)."""
    for _ in range(4):
        if c is None:
            return ""
        if c.kind in (K.OVERLOADED_DECL_REF, K.DECL_REF_EXPR) and c.spelling:
            return str(c.spelling)
        if c.kind not in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.DECL_REF_EXPR):
            return ""
        ch = kids(c)
        c = ch[0] if ch else None
    return ""


def _written_name(c: Any) -> str:
    """The name a callee is written as when clang kept nothing of it (a function whose declaration did not parse,
    a header not found): its one identifier token, read through a macro's expansion."""
    toks = tokens(c)
    named = [t for t in toks if _WORD.fullmatch(t)]
    return named[0] if len(named) == 1 and toks[0] == named[0] else ""


def _with_defaults(args: list[Any], ref: Any) -> list[Any]:
    """A call's arguments, each default argument the compiler filled in replaced by the default the called
    declaration (the one this translation unit sees) writes."""
    if ref is None or not any(_is_default_arg(a) for a in args):
        return args
    params = [p for p in kids(ref) if p.kind == K.PARM_DECL]
    out = []
    for i, a in enumerate(args):
        if _is_default_arg(a) and i < len(params):
            d = [x for x in kids(params[i]) if x.kind.is_expression()]
            out.append(d[-1] if d else a)
        else:
            out.append(a)
    return out


def _is_default_arg(a: Any) -> bool:
    """A default argument the compiler filled in (no extent in the file, nothing under it)."""
    return bool(a.kind == K.UNEXPOSED_EXPR and a.extent.start.file is None and not kids(a))


def _reference_params(ref: Any) -> set[int]:
    """The parameters of a called function that are references (the call passes its argument's address)."""
    if ref is None or ref.kind not in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONSTRUCTOR):
        return set()
    params = [p for p in kids(ref) if p.kind == K.PARM_DECL]
    return {i for i, p in enumerate(params) if p.type.get_canonical().kind in _REFS}


def _template_args(ref: Any) -> list[int]:
    out: list[int] = []
    if ref is None:
        return out
    try:
        n = ref.get_num_template_arguments()
        for i in range(max(n, 0)):
            out.append(int(ref.get_template_argument_value(i)))
    except Exception:
        return out
    return out


_WORD = re.compile(r"[A-Za-z_]\w*")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+(.+)$", re.M)
MAX_SOURCE_BYTES = 8 << 20


def _invocation(text: str) -> str:
    """The text of a macro invocation at the start of `text`, its name and its parenthesized arguments."""
    depth, end = 0, len(text)
    for i, ch in enumerate(text[:4096]):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                end = i + 1
                break
    return text[:end]


def _read_lines(path: str) -> list[str]:
    """A source file's lines (a regular file, at most `MAX_SOURCE_BYTES`; none when it cannot be read)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read(MAX_SOURCE_BYTES).decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    finally:
        os.close(fd)


def lower(tu: Any, ours: Callable[[Any], bool], type_of: Callable[[Any, Any], Any], static_api: Callable[[Any], str],
          macros: Any, flag_names: frozenset[str], texts: dict[str, str] | None = None,
          header_defines: Callable[[], dict[str, str]] | None = None,
          fn_defines: Callable[[], dict[str, str]] | None = None, cuda_version: int = 0) -> Lowered:
    """The translation unit's code (what `ours` accepts) as the dataflow IR, with what reporting needs; `texts`:
    the files whose text is not (or not yet) what is on disk."""
    lo = _Lowerer(tu, ours, type_of, static_api, macros)
    lo.flag_names = flag_names
    lo.header_defines = header_defines
    lo.fn_defines = fn_defines
    lo.cuda_version = cuda_version
    for path, text in (texts or {}).items():
        lo._texts[path] = text.splitlines()
    lo.run()
    prog = F.Program(lo.funcs, lo.calls, tuple(lo.init), frozenset(lo.fnptr))
    return Lowered(prog, lo.sites, lo.fns, lo.refs, lo.flag_uses, lo.called, lo.types, lo.misstores)

