/**
 * numpy's summation of float64 arrays, for scores that must equal numpy bit for bit (issue 47 item 4).
 * `np.add.reduce` over a contiguous float64 array (what `np.sum`, `np.mean`, `Series.sum` call) starts from the
 * identity 0.0 and adds `pairwise_sum` of the whole array: blocks of at most 128 elements summed with 8 accumulators,
 * larger arrays split in two halves whose sizes are multiples of 8. Source: numpy 1.24.2
 * `numpy/core/src/umath/loops_utils.h.src` (`@TYPE@_pairwise_sum`, `PW_BLOCKSIZE` 128) and the `DOUBLE_add` reduce loop
 * of `loops_arithm_fp.dispatch.c.src` (`io1 += pairwise_sum(...)`), called per iterator chunk of `NPY_BUFSIZE` (8192)
 * elements (`numpy/core/include/numpy/ndarraytypes.h`), checked against numpy 1.24.2 up to 10,007 elements.
 */

const PW_BLOCKSIZE = 128;
const NPY_BUFSIZE = 8192;

function pairwise(a: ArrayLike<number>, start: number, n: number): number {
  if (n < 8) {
    let res = 0;
    for (let i = 0; i < n; i++) res += a[start + i]!;
    return res;
  }
  if (n <= PW_BLOCKSIZE) {
    const r = [a[start]!, a[start + 1]!, a[start + 2]!, a[start + 3]!, a[start + 4]!, a[start + 5]!, a[start + 6]!, a[start + 7]!];
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j]! += a[start + i + j]!;
    }
    let res = ((r[0]! + r[1]!) + (r[2]! + r[3]!)) + ((r[4]! + r[5]!) + (r[6]! + r[7]!));
    for (; i < n; i++) res += a[start + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return pairwise(a, start, n2) + pairwise(a, start + n2, n - n2);
}

/**
 * numpy's `np.sum` of a float64 array: `0.0 + pairwise_sum(chunk)` for each chunk of 8192 elements, in order.
 * @param a the values (float64). @returns their sum, rounded as numpy rounds it (not left to right).
 * Source: numpy 1.24.2 `loops_utils.h.src` `DOUBLE_pairwise_sum` (block size 128, 8-way unrolled).
 */
export function numpySum(a: ArrayLike<number>): number {
  // the reduction's iterator hands the loop at most NPY_BUFSIZE (8192) elements at a time; each call adds its
  // pairwise sum to the running total
  let res = 0;
  for (let start = 0; start < a.length; start += NPY_BUFSIZE) res += pairwise(a, start, Math.min(NPY_BUFSIZE, a.length - start));
  return res;
}

/**
 * numpy's `np.mean` of a float64 array: {@link numpySum} divided by the count.
 * @param a the values. @returns the mean; NaN for an empty array (numpy warns and returns nan).
 * Source: numpy 1.24.2 `numpy/core/_methods.py` `_mean` (`umr_sum(arr) / rcount`).
 */
export function numpyMean(a: ArrayLike<number>): number {
  return numpySum(a) / a.length;
}

/**
 * Python's left-to-right sum (`sum(xs)`, numpy's reduce over an object array, `functools.reduce(add)`): the first
 * element, then each next one added.
 * @param a the values. @returns their sum; 0 for none.
 */
export function sequentialSum(a: ArrayLike<number>): number {
  if (a.length === 0) return 0;
  let s = a[0]!;
  for (let i = 1; i < a.length; i++) s += a[i]!;
  return s;
}
