"""
Loupe's BLADE driver (Python side of BLADE transform evaluation).

Runs pandas code (ground-truth specs and submitted transforms), hashes column values (spec 1.4.3, BLADE
nb/df_hash.py canonicalisation) and splits submitted transform code into units by executing it statement by
statement (Loupe's replacement for BLADE's LLM conversion, spec 1.4.1). Protocol: one JSON request per stdin
line {id, op, args}, one JSON reply per stdout line {id, ok, result | error}. Code under evaluation never writes
to the protocol stream: its stdout is captured. Shipped as a file (dist/blade/blade_driver.py) and checked by
python3 -m py_compile in npm test.
"""
import sys, json, ast, hashlib, warnings, io, contextlib, traceback, re
warnings.filterwarnings("ignore")
import numpy as np
import pandas as pd
from pandas.api import types as pdt

_OUT = sys.stdout
_FRAMES = {}
_PATH_CACHE = {}
BASE_NS = {"pd": pd, "np": np}
for _mod, _name in (("scipy", "scipy"), ("scipy.stats", "stats"), ("statsmodels.api", "sm"), ("statsmodels.formula.api", "smf")):
    try:
        BASE_NS[_name] = __import__(_mod, fromlist=["_"])
    except Exception:
        pass


def frame(path):
    if path not in _FRAMES:
        _FRAMES[path] = pd.read_csv(path)
    return _FRAMES[path].copy(deep=True)


# ---------- canonical value hashing (spec 1.4.3) ----------
def canon(s):
    dt = s.dtype
    if pdt.is_numeric_dtype(dt):
        s = s.fillna(0)
    elif pdt.is_object_dtype(dt):
        s = s.fillna("")
    if pdt.is_integer_dtype(dt):
        return s.astype(str)
    if pdt.is_float_dtype(dt):
        if HASHING[0] == "vectorised":
            # Loupe <= 0.1: Series.round (numpy: scale, rint, unscale) differs from round() on half-way values
            return s.round(5).fillna(0).astype(str)
        # BLADE nb/df_hash.py DFValueHasher._prep_series: Python's round per value
        return s.apply(lambda x: round(x, 5)).fillna(0).astype(str)
    if dt == bool:
        return s.astype(str)
    if dt == object:
        try:
            s = pd.to_datetime(s, errors="raise")
            dt = s.dtype
        except Exception:
            return s.astype(str)
    if pdt.is_datetime64_any_dtype(dt):
        try:
            return s.dt.strftime("%Y-%m-%d %H:%M:%S")
        except Exception:
            return pd.to_datetime(s, errors="coerce").dt.strftime("%Y-%m-%d %H:%M:%S")
    return s.astype(str)


def canon_cat(s):
    dt = s.dtype
    if (pdt.is_object_dtype(dt) or pdt.is_integer_dtype(dt)) and len(s) > 0 and s.nunique() / len(s) < 0.5:
        return pd.Series(pd.factorize(s)[0]).astype(str)
    return canon(s)


def digest(strs):
    return hashlib.sha256(":".join(strs).encode("utf-8")).hexdigest()


# Value hashing (option value_hashing): "blade" as nb/df_hash.py (Python round per value; the prepared column
# goes through astype(str), so a date column's missing values hash as "nan"); "vectorised" as Loupe <= 0.1
# (Series.round; a column whose prepared values are not all strings, e.g. dates with NaT, hashes its raw values).
HASHING = ["blade"]


def canon_strs(s, categorical=False):
    c = canon_cat(s) if categorical else canon(s)
    if HASHING[0] == "vectorised":
        return list(c)
    return list(c.astype(str))


def column(df, name):
    pos = [i for i, c in enumerate(df.columns) if str(c) == name]
    return df.iloc[:, pos[0]]


_HASH_MEMO = {}


def column_hashes(s, with_cat):
    # identical columns (same dtype, same values in order) recur across steps and paths: memoise
    try:
        fp = (str(s.dtype), hashlib.sha1(pd.util.hash_pandas_object(s, index=False).values.tobytes()).hexdigest(), with_cat, HASHING[0])
    except Exception:
        fp = None
    if fp is not None and fp in _HASH_MEMO:
        return _HASH_MEMO[fp]
    try:
        h = digest(canon_strs(s.copy()))
    except Exception:
        h = digest([str(v) for v in s])
    c = None
    if with_cat:
        try:
            c = digest(canon_strs(s.copy(), True))
        except Exception:
            c = h
    if fp is not None:
        if len(_HASH_MEMO) > 200000:
            _HASH_MEMO.clear()
        _HASH_MEMO[fp] = (h, c)
    return h, c


WITH_CAT = [False]


def state_of(obj):
    if isinstance(obj, pd.DataFrame):
        cols, hashes, cats = [], {}, {}
        for c in df_cols(obj):
            if c in hashes:
                continue
            s = column(obj, c)
            cols.append(c)
            h, ch = column_hashes(s, WITH_CAT[0])
            hashes[c] = h
            if ch is not None:
                cats[c] = ch
        return {"kind": "frame", "columns": cols, "hashes": hashes, "catHashes": cats if WITH_CAT[0] else None, "rows": int(len(obj))}
    if isinstance(obj, pd.core.groupby.DataFrameGroupBy):
        try:
            cols = [str(c) for c in obj.any().columns]
        except Exception:
            keys = set(str(k) for k in group_keys_of(obj))
            cols = [str(c) for c in obj.obj.columns if str(c) not in keys]
        return {"kind": "groupby", "columns": cols}
    return {"kind": "other", "type": type(obj).__name__}


def df_cols(df):
    return [str(c) for c in df.columns]


def group_keys_of(gb):
    try:
        return [str(n) for n in gb.grouper.names if n is not None]
    except Exception:
        return []


# ---------- ground truth: cumulative execution as BLADE does (spec 1.4.2) ----------
class _GroupbyRename(ast.NodeTransformer):
    def visit_Assign(self, node):
        v = node.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "groupby":
            for t in node.targets:
                if isinstance(t, ast.Name) and t.id.startswith("df") and not t.id.endswith("_grp"):
                    t.id = t.id + "_grp"
        return node


def rename_groupby(code):
    try:
        return ast.unparse(_GroupbyRename().visit(ast.parse(code)))
    except SyntaxError:
        return code


def run_in_function(data_path, code):
    tree = ast.parse(code)
    fn = ast.parse("def __blade_t(df):\n    df = df.copy(deep=True)\n    return df").body[0]
    fn.body = [fn.body[0]] + list(tree.body) + [fn.body[1]]
    mod = ast.Module(body=[fn], type_ignores=[])
    ast.fix_missing_locations(mod)
    ns = dict(BASE_NS)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(mod, "<blade-spec>", "exec"), ns)
        return ns["__blade_t"](frame(data_path))


_NS_CACHE = {}


def snapshot(ns):
    out = {}
    for k, v in ns.items():
        out[k] = v.copy(deep=True) if isinstance(v, (pd.DataFrame, pd.Series)) else v
    return out


def exec_spec(ns, code):
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(ast.parse(code), "<blade-spec>", "exec"), ns)


def op_run_path(a):
    """States after each step of one path. Same results as BLADE's re-execution of the cumulative
    code in a fresh function per step (earlier steps with groupby targets renamed), computed
    incrementally from cached namespace snapshots of each prefix."""
    data_path, out, prefix = a["dataPath"], [], ""
    if len(_NS_CACHE) > 3000:
        _NS_CACHE.clear()
        _PATH_CACHE.clear()
    base_key = (data_path, "")
    if base_key not in _NS_CACHE:
        ns0 = dict(BASE_NS)
        ns0["df"] = frame(data_path)
        _NS_CACHE[base_key] = ns0
    for step in a["steps"]:
        code = step.get("code") or ""
        if not code.strip():
            out.append(None)
            continue
        key = (data_path, prefix, code, HASHING[0], WITH_CAT[0])  # the state's hashes depend on the hashing mode
        renamed = rename_groupby(code)
        next_key = (data_path, prefix + renamed + "\n")
        if key not in _PATH_CACHE:
            base = _NS_CACHE.get((data_path, prefix))
            if base is None:
                _PATH_CACHE[key] = {"kind": "error", "message": "an earlier step failed"}
            else:
                try:
                    ns = snapshot(base)
                    exec_spec(ns, code)
                    _PATH_CACHE[key] = state_of(ns.get("df"))
                    if renamed != code:
                        ns = snapshot(base)
                        exec_spec(ns, renamed)
                    _NS_CACHE[next_key] = ns
                except BaseException as e:
                    _PATH_CACHE[key] = {"kind": "error", "message": "%s: %s" % (type(e).__name__, e)}
        out.append(_PATH_CACHE[key])
        prefix = prefix + renamed + "\n"
    return out


# ---------- submission: statement-by-statement splitting (spec 1.4.1, improved) ----------
class _Rename(ast.NodeTransformer):
    def __init__(self, old):
        self.old = old

    def visit_Name(self, node):
        if node.id == self.old:
            node.id = "df"
        return node


def extract_body(code):
    """Returns (prelude statements, body statements) of the function whose name contains 'transform'."""
    tree = ast.parse(code)
    fn = None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and "transform" in node.name.lower():
            fn = node
            break
    if fn is None:
        body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and "model" in n.name.lower())]
        return [], body
    prelude = [n for n in tree.body if n is not fn and isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.Assign)) and not (isinstance(n, ast.FunctionDef) and "model" in n.name.lower())]
    arg = fn.args.args[0].arg if fn.args.args else "df"
    body = []
    for st in fn.body:
        if isinstance(st, ast.Return):
            if st.value is not None and not (isinstance(st.value, ast.Name) and st.value.id == arg):
                body.append(ast.Assign(targets=[ast.Name(id=arg, ctx=ast.Store())], value=st.value, lineno=st.lineno))
            break
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            continue  # docstring
        body.append(st)
    if arg != "df":
        body = [_Rename(arg).visit(st) for st in body]
    return prelude, body


def names_and_strings(node):
    strs, names, attrs = set(), set(), set()
    for n in ast.walk(node):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            strs.add(n.value)
        elif isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            names.add(n.id)
        elif isinstance(n, ast.Attribute):
            attrs.add(n.attr)
    return strs, names, attrs


def resolve(ns, names):
    out = set()
    for nm in names:
        v = ns.get(nm)
        if isinstance(v, str):
            out.add(v)
        elif isinstance(v, (list, tuple, set, pd.Index)):
            for x in list(v)[:500]:
                if isinstance(x, str):
                    out.add(x)
    return out


# methods whose string arguments (positional, keyword, list items, dict keys) name columns
COL_METHODS = {"groupby", "sort_values", "drop_duplicates", "dropna", "set_index", "get_dummies", "drop",
               "pivot_table", "pivot", "melt", "merge", "join", "rename", "agg", "aggregate", "value_counts",
               "nlargest", "nsmallest", "filter", "reindex", "explode", "duplicated", "crosstab", "fillna"}
QUERY_METHODS = {"query", "eval"}


def _strings_in(node, dict_keys_only=False, tuple_first=False):
    out = set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        out.add(node.value)
    elif isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        elts = node.elts[:1] if (tuple_first and isinstance(node, ast.Tuple)) else node.elts
        for e in elts:
            out |= _strings_in(e)
    elif isinstance(node, ast.Dict):
        for k in node.keys:
            if k is not None:
                out |= _strings_in(k)
        if not dict_keys_only:
            for v in node.values:
                out |= _strings_in(v)
    return out


def referenced_cols(node, ns, cols):
    """Columns a statement reads: subscripts (df['a'], df[['a', 'b']], .loc[mask, 'a'], row['a']),
    attribute access that is not a method call (df.a), string arguments of column-taking methods
    (groupby, dropna(subset=...), rename keys, named aggregations, ...), identifiers of query strings,
    and variables holding column names. Other strings (astype('category'), == 'male') are values."""
    colset = set(cols)
    cand = set()
    called = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            called.add(id(n.func))
    for n in ast.walk(node):
        if isinstance(n, ast.Subscript):
            sl = n.slice
            cand |= _strings_in(sl)
            if isinstance(sl, ast.Tuple):
                for e in sl.elts:
                    cand |= _strings_in(e)
        elif isinstance(n, ast.Attribute) and id(n) not in called and n.attr in colset:
            cand.add(n.attr)
        elif isinstance(n, ast.Call):
            fname = n.func.attr if isinstance(n.func, ast.Attribute) else (n.func.id if isinstance(n.func, ast.Name) else "")
            if fname in COL_METHODS:
                agg = fname in ("agg", "aggregate")
                for a in n.args:
                    cand |= _strings_in(a, dict_keys_only=agg or fname == "rename")
                for kw in n.keywords:
                    if agg:
                        cand |= _strings_in(kw.value, tuple_first=True)
                    elif kw.arg in ("columns", "subset", "by", "on", "left_on", "right_on", "index", "values", "id_vars", "value_vars", "keys", "items", "column"):
                        cand |= _strings_in(kw.value, dict_keys_only=(fname == "rename"))
            elif fname in QUERY_METHODS and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
                q = n.args[0].value
                bt = chr(96)  # backtick-quoted names
                cand |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", q)) | set(re.findall(bt + "([^" + bt + "]+)" + bt, q))
    cand |= resolve(ns, names_and_strings(node)[1])
    return [c for c in cols if c in cand]


def groupby_keys(node, ns, grp_vars):
    keys = []
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "groupby":
            arg = n.args[0] if n.args else None
            for kw in n.keywords:
                if kw.arg == "by":
                    arg = kw.value
            if arg is not None:
                strs, names, _ = names_and_strings(arg)
                keys += sorted(strs | resolve(ns, names))
        elif isinstance(n, ast.Name) and n.id in grp_vars:
            keys += grp_vars[n.id]
    seen = []
    for k in keys:
        if k not in seen:
            seen.append(k)
    return seen


def agg_sources(node):
    """Named aggregations out=('col', fn) and dict aggregations {'col': fn}: output -> [input]."""
    m = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("agg", "aggregate"):
            for kw in n.keywords:
                v = kw.value
                if kw.arg and isinstance(v, ast.Tuple) and v.elts and isinstance(v.elts[0], ast.Constant) and isinstance(v.elts[0].value, str):
                    m[kw.arg] = [v.elts[0].value]
                elif kw.arg and isinstance(v, ast.Call) and v.args and isinstance(v.args[0], ast.Constant):
                    m[kw.arg] = [str(v.args[0].value)]
            for a in n.args:
                if isinstance(a, ast.Dict):
                    for k in a.keys:
                        if isinstance(k, ast.Constant) and isinstance(k.value, str):
                            m[k.value] = [k.value]
    return m


def method_names(node):
    return {n.func.attr for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}


def same_values(a, b):
    try:
        a = a.reset_index(drop=True)
        b = b.reset_index(drop=True)
        if len(a) != len(b):
            return False
        if a.dtype != b.dtype:
            return False
        return bool(a.equals(b))
    except Exception:
        return False


def is_imputation(src, out):
    """out equals src where src is present, and fills some of src's missing values."""
    try:
        src = src.reset_index(drop=True)
        out = out.reset_index(drop=True)
        miss = src.isna()
        if not miss.any() or len(src) != len(out):
            return False
        if out[miss].isna().sum() >= miss.sum():
            return False
        keep = ~miss
        return bool((src[keep].astype(str) == out[keep].astype(str)).all())
    except Exception:
        return False


def unit(verb, code, mapping, groupby_cols, df, note=""):
    return {"verb": verb, "code": code, "mapping": mapping, "groupbyCols": groupby_cols, "state": state_of(df), "note": note}


def analyse(stmt, code, prev, cur, ns, grp_vars, pending, var_refs):
    """Units produced by one statement that changed df from prev to cur (spec 1.4.1 verbs)."""
    pcols, ccols = df_cols(prev), df_cols(cur)
    added = [c for c in ccols if c not in pcols]
    removed = [c for c in pcols if c not in ccols]
    refs = referenced_cols(stmt, ns, pcols)
    # columns read through helper variables (e.g. subset = df[df['a'] == 1]; df = pd.concat([subset, ...]))
    for n in names_and_strings(stmt)[1]:
        for c in var_refs.get(n, ()):
            if c in pcols and c not in refs:
                refs.append(c)
    keys = [k for k in (pending or []) + groupby_keys(stmt, ns, grp_vars) if k in pcols]
    keys = list(dict.fromkeys(keys))
    methods = method_names(stmt)
    same_index = len(prev) == len(cur) and prev.index.equals(cur.index)
    common = [c for c in ccols if c in pcols]
    units = []

    def changed_cols(base):
        out = []
        for c in common:
            try:
                if not same_values(column(base, c), column(cur, c)):
                    out.append(c)
            except Exception:
                out.append(c)
        return out

    def inputs_for(o, src_frame, pool):
        srcs = [c for c in pool if c != o or o in pcols]
        if o in pcols and o not in srcs:
            srcs.append(o)
        if not srcs:
            for r in removed:
                try:
                    if same_values(column(prev, r), column(cur, o)):
                        return [r]
                except Exception:
                    pass
        return srcs

    def derive_units(base, outputs):
        if not outputs:
            return []
        mapping = []
        verb = "derive"
        imputes = 0
        pool = [c for c in refs if c not in keys] if keys else refs
        for o in outputs:
            if len(outputs) > 1 and o in pcols:
                # several columns changed in place by one statement (a loop, df[cols] = ...): each
                # column comes from itself plus whatever else the statement read
                ins = [o] + [c for c in pool if c not in outputs]
            else:
                ins = inputs_for(o, base, pool)
            mapping.append([ins, o])
            if len(ins) == 1 and ins[0] in df_cols(base) and is_imputation(column(base, ins[0]), column(cur, o)):
                imputes += 1
        if imputes == len(outputs) and ("fillna" in methods or "interpolate" in methods or "loc" in {a for a in names_and_strings(stmt)[2]} or "where" in methods or "mask" in methods or "replace" in methods):
            verb = "impute"
        u = unit(verb, code, mapping, [], cur)
        u["created"] = [o for o in outputs if o not in df_cols(base)]
        return [u]

    if keys and not (same_index and not added and not changed_cols(prev)):
        if len(cur) == len(prev) and same_index:
            outs = added + changed_cols(prev)
            mapping = [[inputs_for(o, prev, [c for c in refs if c not in keys]), o] for o in outs]
            return [unit("rollup", code, mapping, keys, cur, "group-wise values kept on every row")]
        src = agg_sources(stmt)
        mapping = []
        for o in ccols:
            if o in keys:
                continue
            if o in src:
                ins = src[o]
            elif o in pcols:
                ins = [o]
            else:
                ins = [c for c in refs if c not in keys]
            mapping.append([ins, o])
        return [unit("groupby", code, mapping, keys, cur)]

    if same_index:
        return derive_units(prev, added + changed_cols(prev))

    if len(cur) == len(prev) and set(prev.index) == set(cur.index) and prev.index.is_unique:
        base = prev.loc[cur.index]
        units.append(unit("orderby", code, [[refs, ""]], [], cur))
        return units + derive_units(base, added + changed_cols(base))

    if len(cur) < len(prev):
        verb = "deduplicate" if "drop_duplicates" in methods else "filter"
        base = None
        if prev.index.is_unique and set(cur.index) <= set(prev.index):
            base = prev.loc[cur.index]
        units.append(unit(verb, code, [[refs, ""]], [], cur))
        if base is not None:
            units += derive_units(base, added + changed_cols(base))
        elif added:
            units += derive_units(cur, added)
        return units

    # rows added or re-keyed (merge, explode, concat): not splittable by execution alone
    outs = added + [c for c in common]
    return [dict(unit("other", code, [[refs, o] for o in outs], [], cur), unsplittable="row count grew from %d to %d" % (len(prev), len(cur)))]


def track_helper_vars(st, ns, cols, var_refs):
    """Remembers which df columns each helper variable (not df) was computed from."""
    targets = []
    if isinstance(st, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        for t in (st.targets if isinstance(st, ast.Assign) else [st.target]):
            for n in (t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]):
                if isinstance(n, ast.Name) and n.id != "df":
                    targets.append(n.id)
    if not targets:
        return
    refs = set(referenced_cols(st, ns, cols))
    for n in names_and_strings(st)[1]:
        refs |= set(var_refs.get(n, ()))
    for t in targets:
        var_refs[t] = sorted(refs)


def merge_same_column(units, created_by):
    """Consecutive statements building the same new column become one unit (e.g. copy, then fill NaNs)."""
    out = []
    for u in units:
        last = out[-1] if out else None
        outs = [m[1] for m in u["mapping"]]
        if (last is not None and u["verb"] in ("derive", "impute") and last["verb"] in ("derive", "impute") and
                len(outs) == 1 and [m[1] for m in last["mapping"]] == outs and created_by.get(outs[0]) is last and
                outs[0] in last.get("created", [])):
            o = outs[0]
            ins = [c for c in last["mapping"][0][0]] + [c for c in u["mapping"][0][0] if c != o and c not in last["mapping"][0][0]]
            verb = "impute" if u["verb"] == "impute" else last["verb"]
            merged = dict(last, code=last["code"] + "\n" + u["code"], mapping=[[ins, o]], verb=verb, state=u["state"])
            out[-1] = merged
            created_by[o] = merged
            continue
        # a helper column created by the previous unit and consumed and removed by this one (e.g.
        # df['c'] = f(df['a']); df = pd.get_dummies(df, columns=['c'])) is not a unit of its own:
        # this unit reads the helper's inputs instead (how BLADE's annotators map columns)
        if (last is not None and last.get("created") and u["verb"] in ("derive", "impute") and
                last["verb"] in ("derive", "impute") and set(last["created"]) <= set(u.get("removed", [])) and
                any(c in last["created"] for m in u["mapping"] for c in m[0])):
            src = {m[1]: m[0] for m in last["mapping"]}
            mapping = []
            for ins, o in u["mapping"]:
                new_ins = []
                for c in ins:
                    for x in (src[c] if c in src else [c]):
                        if x not in new_ins:
                            new_ins.append(x)
                mapping.append([new_ins, o])
            u = dict(u, code=last["code"] + "\n" + u["code"], mapping=mapping)
            out[-1] = u
        else:
            out.append(u)
        for o in outs:
            if o not in created_by or created_by[o] is last:
                created_by[o] = u
    return out


def op_split(a):
    code = a["code"]
    try:
        prelude, body = extract_body(code)
    except SyntaxError as e:
        return {"status": "syntax_error", "error": "SyntaxError: %s" % e, "units": []}
    if not body:
        return {"status": "empty", "error": "transform code is empty", "units": []}
    ns = dict(BASE_NS)
    ns["df"] = frame(a["dataPath"])
    stdout = io.StringIO()
    units, grp_vars, pending, pending_code, created_by, pending_frame, var_refs = [], {}, None, "", {}, None, {}
    with contextlib.redirect_stdout(stdout):
        for st in prelude:
            try:
                exec(compile(ast.Module(body=[ast.fix_missing_locations(st)], type_ignores=[]), "<prelude>", "exec"), ns)
            except Exception:
                pass
        for st in body:
            ast.fix_missing_locations(st)
            src = ast.unparse(st)
            before = ns.get("df")
            prev = before.copy(deep=True) if isinstance(before, pd.DataFrame) else before
            try:
                exec(compile(ast.Module(body=[st], type_ignores=[]), "<transform>", "exec"), ns)
            except BaseException as e:  # SystemExit / KeyboardInterrupt from submitted code too
                return {"status": "execution_failed", "error": "%s: %s (statement: %s)" % (type(e).__name__, e, src[:200]), "units": units}
            cur = ns.get("df")
            if isinstance(prev, pd.DataFrame):
                track_helper_vars(st, ns, df_cols(prev), var_refs)
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "groupby":
                for t in st.targets:
                    if isinstance(t, ast.Name) and t.id != "df":
                        grp_vars[t.id] = groupby_keys(st.value, ns, {})
            if isinstance(cur, pd.core.groupby.DataFrameGroupBy):
                pending = (pending or []) + [k for k in group_keys_of(cur)]
                if isinstance(prev, pd.DataFrame):
                    pending_frame = prev
                pending_code += src + "\n"
                continue
            if not isinstance(cur, pd.DataFrame):
                return {"status": "execution_failed", "error": "df is a %s after statement: %s" % (type(cur).__name__, src[:200]), "units": units}
            if pending is not None and pending_frame is not None:
                prev = pending_frame
                src = pending_code + src
            new = analyse(st, src, prev, cur, ns, grp_vars, pending, var_refs)
            gone = [c for c in df_cols(prev) if c not in df_cols(cur)] if isinstance(prev, pd.DataFrame) else []
            for u in new:
                u["removed"] = gone
            pending, pending_code = None, ""
            units.extend(new)
    units = merge_same_column(units, created_by)
    final = ns.get("df")
    if not isinstance(final, pd.DataFrame):
        return {"status": "execution_failed", "error": "transform did not return a DataFrame", "units": units}
    return {"status": "ok", "units": units, "finalColumns": df_cols(final), "stdout": stdout.getvalue()[-2000:]}


def op_run_units(a):
    """Executes externally supplied units (LLM fallback) one after another; each gets its df state."""
    ns = dict(BASE_NS)
    ns["df"] = frame(a["dataPath"])
    out = []
    with contextlib.redirect_stdout(io.StringIO()):
        for u in a["units"]:
            try:
                exec(compile(u["code"], "<unit>", "exec"), ns)
                out.append(state_of(ns.get("df")))
            except BaseException as e:
                out.append({"kind": "error", "message": "%s: %s" % (type(e).__name__, e)})
    return out


def op_columns(a):
    df = frame(a["dataPath"])
    return {"columns": df_cols(df), "rows": int(len(df))}


def op_hash_frame(a):
    return state_of(run_in_function(a["dataPath"], a.get("code") or "df = df"))


OPS = {"run_path": op_run_path, "split": op_split, "run_units": op_run_units, "columns": op_columns, "hash_frame": op_hash_frame}

for line in sys.stdin:
    line = line.strip()
    if not line:
        continue
    req = json.loads(line)
    WITH_CAT[0] = bool((req.get("args") or {}).get("withCategorical"))
    HASHING[0] = (req.get("args") or {}).get("hashing") or "blade"
    try:
        res = {"id": req["id"], "ok": True, "result": OPS[req["op"]](req.get("args") or {})}
    except Exception as e:
        res = {"id": req["id"], "ok": False, "error": "%s: %s" % (type(e).__name__, e), "trace": traceback.format_exc()[-2000:]}
    _OUT.write(json.dumps(res) + "\n")
    _OUT.flush()
