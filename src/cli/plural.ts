/** `1 step`, `2 steps`, `1 item`, `0 items`: counts in CLI output agree with their nouns. */
export function plural(n: number, noun: string, pluralNoun = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : pluralNoun}`;
}
