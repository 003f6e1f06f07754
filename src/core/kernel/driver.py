"""Loupe kernel driver: one persistent Python process executing cells for an agent.

Protocol (newline-delimited JSON). The host writes requests to our stdin:
  {"op": "execute", "id": N, "code": "...", "cpuSeconds": S|null}
  {"op": "interrupt"}
  {"op": "ping", "id": N}
and reads replies from our original stdout (fd 1 is moved to a private fd at start; the cell's
fd 1 then points at stderr so stray C-level writes cannot corrupt the protocol):
  {"type": "ready", "python": "3.11.2", "pid": P}
  {"type": "result", "id": N, "status": "ok"|"error"|"timeout", "stdout", "stderr", "result"?,
   "tables"?, "figures"?, "error"?, "memoryError"?: true}
  {"type": "pong", "id": N}

Configuration comes from environment variables read once at start (and removed from os.environ):
  LOUPE_KERNEL_MEMORY_MB   address-space limit (RLIMIT_AS) per process in MiB, 0/absent = none. The aggregate
                           limits (memory, processes and CPU rate of the whole tree) are the host's cgroup, and
                           between cells the host freezes the whole tree (driver included) or stops it with
                           SIGSTOP: nothing here needs to stop threads a cell left (issue 37)
  LOUPE_KERNEL_FSIZE_MB    largest file any process may write (RLIMIT_FSIZE) in MiB, 0/absent = none;
                           SIGXFSZ is ignored so a write past it fails with OSError EFBIG
  LOUPE_KERNEL_ALLOWLIST   JSON list of import patterns for user code ("pkg" or "pkg.*"), absent = all
  LOUPE_KERNEL_MAX_OUTPUT  max characters kept per stream per cell (head + tail), default 1,000,000
  LOUPE_KERNEL_PRELOAD     JSON list of modules imported after "ready", before the first request is read (their
                           import cost is paid while the host's model thinks; a failing import is ignored)

Execution is IPython-like: all statements run, a trailing expression is evaluated and its repr
returned; a DataFrame result also yields a table (text, bounded values as strings, raw html kept as evidence); open matplotlib figures are rendered to
PNG (Agg) at the end of the cell and closed.
"""
import ast
import base64
import builtins
import errno
import io
import json
import os
import queue
import signal
import sys
import threading
import traceback

# ---- protocol channel: keep fds 0/1 for ourselves, give user code /dev/null and stderr ----
_proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
_proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
_devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(_devnull, 0)
os.close(_devnull)
# C-level / subprocess writes to fd 1 land in an unlinked temp file, read back after each cell.
import tempfile

_fd1_file = tempfile.TemporaryFile()
os.dup2(_fd1_file.fileno(), 1)
sys.stdin = open(os.devnull, "r")


def _close_inherited_fds():
    """Closes every fd the host's parents passed down (e.g. one open on a hidden file): user code gets none."""
    keep = {0, 1, 2, _proto_in.fileno(), _proto_out.fileno(), _fd1_file.fileno(), sys.stdin.fileno()}
    try:
        fds = [int(f) for f in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


_close_inherited_fds()


def _fd1_reset():
    try:
        os.ftruncate(1, 0)
        os.lseek(1, 0, os.SEEK_SET)
    except OSError:
        pass


def _fd1_read(limit):
    try:
        size = os.lseek(1, 0, os.SEEK_END)
        os.lseek(1, 0, os.SEEK_SET)
        data = os.read(1, min(size, limit * 4)) if size else b""
    except OSError:
        return ""
    finally:
        _fd1_reset()
    text = data.decode("utf-8", "replace")
    if len(text) > limit or size > limit * 4:
        text = text[:limit] + "\n[... fd-level output cut by the kernel ...]\n"
    return text
_write_lock = threading.Lock()


_BLOCKED = {signal.SIGINT} | ({signal.SIGXCPU} if hasattr(signal, "SIGXCPU") else set())


def _send(obj):
    """Writes one JSON line, whole: interrupts are held back and partial writes resumed."""
    data = memoryview((json.dumps(obj) + "\n").encode("utf-8", "surrogatepass"))
    with _write_lock:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, _BLOCKED)
        try:
            while data:
                n = _proto_out.write(data)
                data = data[n or 0:]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


# ---- configuration ----
_MEMORY_MB = int(os.environ.pop("LOUPE_KERNEL_MEMORY_MB", "0") or "0")
_ALLOW_RAW = os.environ.pop("LOUPE_KERNEL_ALLOWLIST", "")
_PRELOAD_RAW = os.environ.pop("LOUPE_KERNEL_PRELOAD", "")
_MAX_OUTPUT = int(os.environ.pop("LOUPE_KERNEL_MAX_OUTPUT", "1000000") or "1000000")
_MAX_REPR = 200_000

try:
    import resource
except ImportError:  # pragma: no cover - non-POSIX
    resource = None

if resource is not None and _MEMORY_MB > 0:
    _lim = _MEMORY_MB * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (_lim, _lim))
    except (ValueError, OSError) as e:  # report, do not die
        sys.stderr.write("loupe kernel: could not set RLIMIT_AS: %s\n" % e)


# ---- file size limit ----
# RLIMIT_FSIZE bounds every file written by this process and its children (the run folder is on the
# host's disk). SIGXFSZ would kill the writer: ignored here (inherited across exec), so write()
# fails with EFBIG and agent code sees OSError "File too large". Python's subprocess restores the
# default in its children, which then die alone; the kernel survives.
_FSIZE_MB = int(os.environ.pop("LOUPE_KERNEL_FSIZE_MB", "0") or "0")
if hasattr(signal, "SIGXFSZ"):
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
if resource is not None and _FSIZE_MB > 0 and hasattr(resource, "RLIMIT_FSIZE"):
    _flim = _FSIZE_MB * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (_flim, _flim))
    except (ValueError, OSError) as e:  # report, do not die
        sys.stderr.write("loupe kernel: could not set RLIMIT_FSIZE: %s\n" % e)


# ---- process limit (sandbox only) ----
# RLIMIT_NPROC bounds forks inside the sandbox's user namespace for an unprivileged user; the kernel
# exempts host root, so the host also counts the sandbox's processes and kills it above the limit.
_MAX_PROCS = int(os.environ.pop("LOUPE_KERNEL_MAX_PROCS", "0") or "0")
if _MAX_PROCS > 0 and resource is not None and hasattr(resource, "RLIMIT_NPROC"):
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (_MAX_PROCS, _MAX_PROCS))
    except (ValueError, OSError):
        pass


class CpuTimeExceeded(BaseException):
    """Raised in the cell when its CPU budget (RLIMIT_CPU soft limit, SIGXCPU) is used up."""


def _on_xcpu(signum, frame):
    raise CpuTimeExceeded("CPU time limit for this cell exceeded")


if hasattr(signal, "SIGXCPU"):
    signal.signal(signal.SIGXCPU, _on_xcpu)


def _cpu_used():
    import time

    return time.process_time()  # CLOCK_PROCESS_CPUTIME_ID: what RLIMIT_CPU counts


def _set_cpu_budget(seconds):
    """Moves the RLIMIT_CPU soft limit to `seconds` of CPU from now (per process: children get their own). Between
    cells the limit is lifted, but nothing runs then: the host freezes the kernel (issue 37)."""
    if resource is None:
        return
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if seconds is None or seconds <= 0:
        new = hard
    else:
        new = int(_cpu_used() + seconds) + 1
        if hard != resource.RLIM_INFINITY:
            new = min(new, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (new, hard))
    except (ValueError, OSError):
        pass


# ---- import allowlist for user code (spec §2.3: LongTA additional_authorized_imports) ----
_USER_FILE_PREFIX = "<cell-"
_allow_exact = set()
_allow_prefix = []
if _ALLOW_RAW:
    for pat in json.loads(_ALLOW_RAW):
        if pat == "*":
            _allow_exact = None
            break
        if pat.endswith(".*"):
            _allow_exact.add(pat[:-2])
            _allow_prefix.append(pat[:-2] + ".")
        else:
            _allow_exact.add(pat)


def _allowed(name):
    if _allow_exact is None or not _ALLOW_RAW:
        return True
    if name in _allow_exact:
        return True
    return any(name.startswith(p) for p in _allow_prefix)


def _from_user_code(depth):
    """True when the import statement runs in agent code: a cell, or code a cell ran with
    exec()/eval() (filename "<string>" etc., directly above a cell frame). Libraries' own
    imports, including those in code libraries exec(), are not checked. The allowlist mirrors LongTA; it is not the security boundary
    (the sandbox is)."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return False
    name = f.f_code.co_filename
    if name.startswith(_USER_FILE_PREFIX):
        return True
    # Synthetic code (exec/eval strings): decided by the nearest real frame above it.
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith(_USER_FILE_PREFIX):
            return True
        if not name.startswith("<") or name.startswith("<frozen"):
            return False
        f = f.f_back
    return False


_real_import = builtins.__import__


def _guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and _ALLOW_RAW and _from_user_code(2) and not _allowed(name):
        raise ImportError("Import of '%s' is not allowed in this kernel. Allowed: %s" % (name, ", ".join(json.loads(_ALLOW_RAW))), name=name)
    return _real_import(name, globals, locals, fromlist, level)


if _ALLOW_RAW:
    builtins.__import__ = _guarded_import
    import importlib

    _real_import_module = importlib.import_module

    def _guarded_import_module(name, package=None):
        if not name.startswith(".") and _from_user_code(2) and not _allowed(name):
            raise ImportError("Import of '%s' is not allowed in this kernel" % name, name=name)
        return _real_import_module(name, package)

    importlib.import_module = _guarded_import_module
    importlib.__import__ = _guarded_import


# ---- capped output capture ----
class _Capture(io.TextIOBase):
    """A text stream keeping the first and the last `limit // 2` characters written."""

    def __init__(self, limit):
        self.half = max(limit, 2) // 2
        self.head = []
        self.head_len = 0
        self.tail = []
        self.tail_len = 0
        self.dropped = 0

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        n = len(s)
        if self.head_len < self.half:
            take = s[: self.half - self.head_len]
            self.head.append(take)
            self.head_len += len(take)
            s = s[len(take):]
        if s:
            self.tail.append(s)
            self.tail_len += len(s)
            if self.tail_len > 2 * self.half:
                self._trim()
        return n

    def _trim(self):
        t = "".join(self.tail)
        if len(t) > self.half:
            self.dropped += len(t) - self.half
            t = t[-self.half:]
        self.tail = [t]
        self.tail_len = len(t)

    def flush(self):
        pass

    @property
    def buffer(self):
        """Binary view for code writing bytes to sys.stdout.buffer (decoded as UTF-8)."""
        cap = self

        class _Bin:
            def write(self, b):
                cap.write(bytes(b).decode("utf-8", "replace"))
                return len(b)

            def flush(self):
                pass

        return _Bin()

    @property
    def encoding(self):
        return "utf-8"

    def isatty(self):
        return False

    def value(self):
        self._trim()
        text = "".join(self.head)
        if self.dropped:
            text += "\n[... %d characters dropped by the kernel ...]\n" % self.dropped
        return text + "".join(self.tail)


# ---- execution ----
import types

_driver_module = sys.modules["__main__"]
_user_module = types.ModuleType("__main__")
_user_module.__dict__["__builtins__"] = builtins
sys.modules["__main__"] = _user_module  # user classes/functions pickle as __main__.X
user_ns = _user_module.__dict__
_cell_counter = [0]


def _safe_repr(value):
    try:
        r = repr(value)
    except BaseException as e:  # noqa: BLE001 - a broken __repr__ must not kill the kernel
        r = "<repr failed: %s: %s>" % (type(e).__name__, e)
    if len(r) > _MAX_REPR:
        r = r[:_MAX_REPR] + "... [repr cut at %d characters]" % _MAX_REPR
    return r


_TABLE_ROWS = 60  # rows shown of a DataFrame result (first and last half when longer), as to_html(max_rows=60)
_TABLE_COLS = 30  # columns shown (first and last half when wider)
_TABLE_CELL = 200  # characters kept of one cell, column or index label


def _cell_text(v):
    try:
        t = str(v)
    except BaseException as e:  # noqa: BLE001 - a broken __str__ must not lose the table
        t = "<str failed: %s>" % type(e).__name__
    return t if len(t) <= _TABLE_CELL else t[:_TABLE_CELL] + "..."


def _table_data(df):
    """The values of a DataFrame (bounded rows/cols, each cell as str, cut), for the host to render itself.

    Issue 38: the notebook never shows an agent's HTML (a DataFrame's to_html can be patched to return
    <script>); the host builds an escaped Markdown table from these values instead.
    """
    n_rows, n_cols = (int(x) for x in df.shape)

    def pick(n, cap):
        if n <= cap:
            return list(range(n)), None
        h = cap // 2
        return list(range(h)) + list(range(n - h, n)), h

    rows_at, row_gap = pick(n_rows, _TABLE_ROWS)
    cols_at, col_gap = pick(n_cols, _TABLE_COLS)
    sub = df.iloc[rows_at, cols_at]
    return {
        "columns": [_cell_text(c) for c in sub.columns],
        "index": [_cell_text(i) for i in sub.index],
        "rows": [[_cell_text(v) for v in row] for row in sub.itertuples(index=False, name=None)],
        "shape": [n_rows, n_cols],
        "rowGap": row_gap,
        "colGap": col_gap,
    }


def _tables_for(value):
    """A DataFrame result: its text, its values (`data`, what the notebook renders) and its raw to_html (evidence only)."""
    pd = sys.modules.get("pandas")
    if pd is None:
        return None
    try:
        if isinstance(value, pd.DataFrame):
            table = {"text": value.to_string(max_rows=60, max_cols=30)}
            try:
                table["data"] = _table_data(value)
            except BaseException:  # noqa: BLE001
                pass
            try:
                table["html"] = str(value.to_html(max_rows=60, max_cols=30))
            except BaseException:  # noqa: BLE001
                table["html"] = ""
            return [table]
    except BaseException:  # noqa: BLE001
        return None
    return None


def _figures():
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return []
    out = []
    try:
        for num in plt.get_fignums():
            fig = plt.figure(num)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
            out.append({"png": base64.b64encode(buf.getvalue()).decode("ascii")})
    finally:
        try:
            plt.close("all")
        except BaseException:  # noqa: BLE001
            pass
    return out


_DRIVER_FILE = os.path.abspath(__file__)


def _format_error(exc_type, exc, tb, cell_file):
    """ename / evalue / traceback lines, starting at the first agent-code frame, without driver frames."""
    frames = [fr for fr in traceback.extract_tb(tb) if os.path.abspath(fr.filename) != _DRIVER_FILE]
    first = next((i for i, fr in enumerate(frames) if fr.filename.startswith(_USER_FILE_PREFIX)), None)
    lines = []
    if first is not None:
        lines.append("Traceback (most recent call last):\n")
        lines.extend(traceback.format_list(frames[first:]))
    lines.extend(traceback.format_exception_only(exc_type, exc))
    return {"ename": exc_type.__name__, "evalue": str(exc), "traceback": [ln for chunk in lines for ln in chunk.rstrip("\n").split("\n")]}


class _CellSource:
    """Registers cell source with linecache so tracebacks show the offending line."""

    @staticmethod
    def register(filename, code):
        import linecache

        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)


# Background processes a cell started (`subprocess.Popen`, `os.fork`, `nohup ... &`) are ended when the cell
# ends: LongTA's executor runs code synchronously, so nothing a cell starts outlives it (issue 11). In the
# sandbox's own pid namespace every process but the namespace's init (pid 1) and this driver belongs to agent
# code; outside it, the driver's descendants are.
_OWN_PIDNS = os.environ.pop("LOUPE_KERNEL_OWN_PIDNS", "") == "1"


def _pids_to_end():
    me = os.getpid()
    procs = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for n in names:
        if not n.isdigit():
            continue
        pid = int(n)
        if pid == me:
            continue
        try:
            with open("/proc/%d/stat" % pid, "rb") as f:
                stat = f.read().decode("utf-8", "replace")
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        procs[pid] = ppid
    if _OWN_PIDNS:
        return [p for p in procs if p != 1]
    out, frontier = [], {me}
    while frontier:
        kids = [p for p, pp in procs.items() if pp in frontier and p not in out]
        out.extend(kids)
        frontier = set(kids)
    return out


def _end_background(err):
    ended = 0
    for _ in range(5):  # a process may fork while we kill: a few passes
        pids = _pids_to_end()
        if not pids:
            break
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
                ended += 1
            except OSError:
                pass
        for pid in pids:
            try:
                os.waitpid(pid, 0)  # our own children: reap the zombie; others raise ChildProcessError at once
            except OSError:
                pass
    if ended:
        err.write("loupe: ended %d background process(es) this cell started (nothing a cell starts outlives it)\n" % ended)


def _execute(req, answered):
    code = req.get("code", "")
    _cell_counter[0] += 1
    filename = "%s%d>" % (_USER_FILE_PREFIX, _cell_counter[0])
    out = _Capture(_MAX_OUTPUT)
    err = _Capture(_MAX_OUTPUT)
    reply = {"type": "result", "id": req.get("id"), "status": "ok"}
    old_out, old_err = sys.stdout, sys.stderr
    value = None
    has_value = False
    _fd1_reset()
    try:
        _CellSource.register(filename, code)
        sys.stdout, sys.stderr = out, err
        _set_cpu_budget(req.get("cpuSeconds"))
        try:
            tree = ast.parse(code, filename=filename, mode="exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            if tree.body:
                exec(compile(tree, filename, "exec"), user_ns)
            if last is not None:
                value = eval(compile(last, filename, "eval"), user_ns)
                has_value = True
        finally:
            _set_cpu_budget(None)
    except KeyboardInterrupt as e:
        reply["status"] = "error"
        reply["error"] = _format_error(type(e), e, e.__traceback__, filename)
        reply["interrupted"] = True
    except CpuTimeExceeded as e:
        reply["status"] = "timeout"
        reply["error"] = {"ename": "CpuTimeExceeded", "evalue": str(e), "traceback": _format_error(type(e), e, e.__traceback__, filename)["traceback"]}
    except MemoryError as e:
        reply["status"] = "error"
        reply["memoryError"] = True
        reply["error"] = _format_error(type(e), e, e.__traceback__, filename)
    except BaseException as e:  # noqa: BLE001 - SystemExit included: the kernel keeps running
        reply["status"] = "error"
        reply["error"] = _format_error(type(e), e, e.__traceback__, filename)
        if isinstance(e, OSError) and e.errno == errno.EFBIG and _FSIZE_MB > 0:
            note = "loupe: files are limited to %d MiB each (kernel option maxFileSizeMb)" % _FSIZE_MB
            reply["error"]["traceback"].append(note)
            reply["error"]["evalue"] = "%s; %s" % (reply["error"]["evalue"], note)
    finally:
        sys.stdout, sys.stderr = old_out, old_err
    try:
        if has_value and value is not None:
            user_ns["_"] = value
            reply["result"] = _safe_repr(value)
            tables = _tables_for(value)
            if tables:
                reply["tables"] = tables
        figs = _figures()
        if figs:
            reply["figures"] = figs
    except BaseException as e:  # noqa: BLE001
        err.write("loupe kernel: could not render the result: %s: %s\n" % (type(e).__name__, e))
    try:
        _end_background(err)
    except BaseException as e:  # noqa: BLE001
        err.write("loupe kernel: could not end background processes: %s\n" % e)
    reply["stdout"] = out.value() + _fd1_read(_MAX_OUTPUT)
    reply["stderr"] = err.value()
    _busy.clear()  # no new interrupts for this cell from here on
    _send(reply)
    answered[0] = True


# ---- main loop: a reader thread takes requests; interrupts are delivered to the main thread ----
_requests = queue.Queue()
_busy = threading.Event()
_main_ident = threading.main_thread().ident


def _reader():
    while True:
        line = _proto_in.readline()
        if not line:
            _requests.put(None)
            return
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        op = msg.get("op")
        if op == "interrupt":
            if _busy.is_set():
                signal.pthread_kill(_main_ident, signal.SIGINT)
        elif op == "ping":
            _send({"type": "pong", "id": msg.get("id")})
        else:
            _requests.put(msg)


def main():
    import warnings

    warnings.filterwarnings("ignore", message=".*FigureCanvasAgg is non-interactive.*")
    signal.signal(signal.SIGINT, signal.default_int_handler)
    threading.Thread(target=_reader, name="loupe-reader", daemon=True).start()
    _send({"type": "ready", "python": sys.version.split()[0], "pid": os.getpid()})
    # Modules the cells will import anyway (pandas: ~0.5 s), imported now, while the model writes the first cell
    # (issue 23). Requests wait in the queue meanwhile; an interrupt is ignored (not busy). Not user code: the
    # allowlist does not apply, and nothing is bound in the cells' namespace.
    for name in json.loads(_PRELOAD_RAW) if _PRELOAD_RAW else []:
        try:
            __import__(name)
        except BaseException:  # noqa: B036 - a broken optional module must not stop the kernel
            pass
    while True:
        req = None
        answered = [False]
        try:
            req = _requests.get()
            if req is None:
                break
            if req.get("op") == "execute":
                _busy.set()
                _execute(req, answered)
        except KeyboardInterrupt:
            # An interrupt that landed outside the cell (idle, or between the cell and its reply).
            if req is not None and not answered[0]:
                _busy.clear()
                _send({"type": "result", "id": req.get("id"), "status": "error", "stdout": "", "stderr": "",
                       "error": {"ename": "KeyboardInterrupt", "evalue": "", "traceback": []}, "interrupted": True})
        finally:
            _busy.clear()
    os._exit(0)


if __name__ == "__main__":
    main()
