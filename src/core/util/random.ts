/**
 * The one seeded PRNG of Loupe (mulberry32): reproducible bootstraps (BLADE), order swaps (DDR novelty)
 * and seeded samples. Not numpy's generator: where a benchmark samples with numpy, the score says so.
 */

/**
 * mulberry32: small, fast, seedable PRNG.
 * @param seed any integer (taken modulo 2^32).
 * @returns a function returning floats in [0, 1).
 */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
