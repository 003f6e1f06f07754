/**
 * Import allowlists for agent code, per suite. A pattern is a module name (`json`) or a package with
 * all its submodules (`numpy.*`, which also allows `numpy` itself). Only imports written in agent
 * code are checked; libraries import what they need.
 *
 * NOT a security boundary. The allowlist exists for benchmark fidelity only (LongTA's agents could not
 * import what it forbids, so Loupe's cannot either). It is easy to get past (`importlib._bootstrap._gcd_import`,
 * `numpy.ctypeslib`, `os.popen`); containment is the bubblewrap sandbox's job (read-only mounts of the
 * block's files only, writable workspace with a quota, no network, pids cgroup, background processes
 * ended per cell). With the sandbox off nothing contains agent code.
 */

/**
 * LongTA's `additional_authorized_imports` for the smolagents `LocalPythonExecutor`
 * (spec §2.3, LongTA `my_agent.py`), plus smolagents' base builtin modules that are always allowed
 * (`collections`, `datetime`, `itertools`, `math`, `queue`, `random`, `re`, `stat`, `statistics`,
 * `time`, `unicodedata`). `builtins.*` is kept as LongTA lists it.
 */
export const LONGTA_IMPORT_ALLOWLIST: readonly string[] = Object.freeze([
  'builtins.*',
  'numpy.*',
  'pandas.*',
  'scipy.*',
  'statsmodels.*',
  'sklearn.*',
  'csv',
  'json',
  'math',
  'os',
  'os.path',
  'pathlib',
  're',
  'sys',
  'datetime',
  'time',
  'collections.*',
  'itertools',
  'functools',
  'operator',
  'typing',
  'statistics',
  'decimal',
  'fractions',
  'random',
  // smolagents BASE_BUILTIN_MODULES
  'queue',
  'stat',
  'unicodedata',
]);
