/**
 * CPython's `set` of numbers: which elements it keeps and the order it iterates them in, for readers that must
 * reproduce `list(ast.literal_eval("{2, 1}"))` (issue 47 item 1). Numbers hash by CPython's numeric hash (equal
 * numbers hash equal: `1 == 1.0 == True`), the table starts with 8 slots, probes 9 neighbours then perturbs, and
 * grows ×4 when 3/5 full; iteration walks the table in slot order.
 * Sources: CPython 3.11 `Objects/setobject.c` (`set_add_entry`, `set_insert_clean`, `set_table_resize`,
 * `LINEAR_PROBES` 9, `PERTURB_SHIFT` 5, `PySet_MINSIZE` 8), `Python/pyhash.c` `_Py_HashDouble`,
 * `Objects/longobject.c` `long_hash`, `Objects/complexobject.c` `complex_hash` (`_PyHASH_MODULUS` 2^61−1,
 * `_PyHASH_INF` 314159, `_PyHASH_IMAG` 1000003); the numeric-hash rule of the Python reference
 * ("Hashing of numeric types", stdtypes).
 */

/** A number as Python holds it: a float/int that fits a double, a big int, a bool, or a complex. */
export type PyNumber =
  number | bigint | boolean | { readonly kind: 'complex'; readonly re: number; readonly im: number };

const P = (1n << 61n) - 1n;
const U64 = 1n << 64n;
const INF_HASH = 314159n;
const IMAG = 1000003n;

function fixMinusOne(h: bigint): bigint {
  return h === -1n ? -2n : h;
}

/** CPython's `hash(int)`: sign · (|n| mod 2^61−1), −1 becoming −2. */
function hashBigInt(n: bigint): bigint {
  const a = (n < 0n ? -n : n) % P;
  return fixMinusOne(n < 0n ? -a : a);
}

/** CPython's `hash(float)` of a finite or infinite double (NaN hashes by identity: not reproducible, refused). */
function hashDouble(v: number): bigint {
  if (Number.isNaN(v)) throw new Error('NaN has no reproducible hash');
  if (v === Infinity) return INF_HASH;
  if (v === -Infinity) return -INF_HASH;
  if (v === 0) return 0n;
  const dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, v);
  const hi = dv.getUint32(0);
  const lo = dv.getUint32(4);
  const expBits = (hi >>> 20) & 0x7ff;
  let mant = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  let k: number;
  if (expBits === 0) k = -1074;
  else {
    mant |= 1n << 52n;
    k = expBits - 1075;
  }
  // |v| = mant · 2^k; 2^61 ≡ 1 (mod P), so 2^k ≡ 2^(k mod 61).
  const e = BigInt(((k % 61) + 61) % 61);
  const x = ((mant % P) << e) % P;
  return fixMinusOne(v < 0 ? -x : x);
}

/**
 * CPython's `hash()` of a number.
 * @param x a Python number. @returns the signed 64-bit hash as a bigint.
 * @throws Error for NaN (CPython hashes NaN by object identity since 3.10).
 */
export function pyNumberHash(x: PyNumber): bigint {
  if (typeof x === 'boolean') return x ? 1n : 0n;
  if (typeof x === 'bigint') return hashBigInt(x);
  if (typeof x === 'number') return Number.isInteger(x) ? hashBigInt(BigInt(x)) : hashDouble(x);
  // complex_hash: hashreal + _PyHASH_IMAG * hashimag in unsigned arithmetic, −1 → −2
  let h = (BigInt.asUintN(64, pyNumberHash(x.re)) + IMAG * BigInt.asUintN(64, pyNumberHash(x.im))) % U64;
  h = BigInt.asIntN(64, h);
  return fixMinusOne(h);
}

/** Exact value of a finite double as a fraction num/2^k (k ≥ 0), for comparing with big ints. */
function equalNumbers(a: PyNumber, b: PyNumber): boolean {
  const cx = (x: PyNumber): { re: PyNumber; im: number } =>
    typeof x === 'object' ? { re: x.re, im: x.im } : { re: x, im: 0 };
  const A = cx(a);
  const B = cx(b);
  if (A.im !== B.im) return false;
  return realEq(A.re, B.re);
}

function realEq(a: PyNumber, b: PyNumber): boolean {
  const n = (x: PyNumber): number | bigint => (typeof x === 'boolean' ? (x ? 1 : 0) : (x as number | bigint));
  const x = n(a);
  const y = n(b);
  if (typeof x === 'number' && typeof y === 'number') return x === y;
  if (typeof x === 'bigint' && typeof y === 'bigint') return x === y;
  const f = (typeof x === 'number' ? x : y) as number;
  const i = (typeof x === 'bigint' ? x : y) as bigint;
  return Number.isInteger(f) && BigInt(f) === i;
}

const LINEAR_PROBES = 9;
const PERTURB_SHIFT = 5n;
const MINSIZE = 8;

interface Slot<T> {
  key: T;
  hash: bigint;
}

/**
 * The elements of `set(values)` in CPython's iteration order: duplicates (by numeric equality) dropped, the first
 * of equal elements kept, order by hash-table slot.
 * @param values the elements in insertion (source) order, each with its Python number.
 * @returns the kept elements in iteration order.
 * @throws Error when an element is NaN (its hash is its address in CPython).
 */
export function cpythonSetOrder<T>(values: readonly T[], numberOf: (v: T) => PyNumber): T[] {
  let mask = MINSIZE - 1;
  let table: Array<Slot<T> | null> = new Array<Slot<T> | null>(MINSIZE).fill(null);
  let fill = 0;
  let used = 0;
  const insertClean = (tab: Array<Slot<T> | null>, m: number, s: Slot<T>) => {
    const hash = BigInt.asUintN(64, s.hash);
    let perturb = hash;
    let i = Number(hash & BigInt(m));
    for (;;) {
      if (tab[i] === null) {
        tab[i] = s;
        return;
      }
      if (i + LINEAR_PROBES <= m) {
        for (let j = 0; j < LINEAR_PROBES; j++) {
          const at = i + j + 1;
          if (tab[at] === null) {
            tab[at] = s;
            return;
          }
        }
      }
      perturb >>= PERTURB_SHIFT;
      i = Number((BigInt(i) * 5n + 1n + perturb) & BigInt(m));
    }
  };
  for (const v of values) {
    const num = numberOf(v);
    const hash = pyNumberHash(num);
    const uh = BigInt.asUintN(64, hash);
    let perturb = uh;
    let i = Number(uh & BigInt(mask));
    let placed = false;
    let dup = false;
    while (!placed && !dup) {
      let probes = i + LINEAR_PROBES <= mask ? LINEAR_PROBES : 0;
      let at = i;
      do {
        const e = table[at];
        if (e === null || e === undefined) {
          table[at] = { key: v, hash };
          placed = true;
          break;
        }
        if (e.hash === hash && equalNumbers(numberOf(e.key), num)) {
          dup = true;
          break;
        }
        at++;
      } while (probes-- > 0);
      if (placed || dup) break;
      perturb >>= PERTURB_SHIFT;
      i = Number((BigInt(i) * 5n + 1n + perturb) & BigInt(mask));
    }
    if (dup) continue;
    fill++;
    used++;
    if (fill * 5 < mask * 3) continue;
    const minused = used > 50000 ? used * 2 : used * 4;
    let newsize = MINSIZE;
    while (newsize <= minused) newsize <<= 1;
    const old = table;
    table = new Array<Slot<T> | null>(newsize).fill(null);
    mask = newsize - 1;
    for (const s of old) if (s) insertClean(table, mask, s);
    fill = used;
  }
  return table.filter((s): s is Slot<T> => s !== null).map((s) => s.key);
}
