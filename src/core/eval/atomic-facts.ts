/**
 * Atomic facts of an agent's insight, for hallucination judging (issue 42 defect 4): a compound insight ("1. multiple
 * admissions 2. hypertension 3. female, aged 61") is split into facts judged one by one, each fact is checked for being
 * checkable at all (it states a value, an entity or a relation; a heading or filler such as "Diagnoses." does not),
 * and the steps relevant to a fact are the ones whose tool calls or results mention its values or entities.
 * Source: DDR-Bench paper §7 (hallucination audit of message-wise insights: "facts … derivable from what the agent
 * saw"); FActScore (Min et al., 2023) for the atomic-fact unit.
 */

/** One atomic fact of an insight: its text as judged (the lead, if any, prefixed) and where it came from. */
export interface AtomicFact {
  /** 0-based position among the facts of the insight. */
  index: number;
  /** The fact as written in the insight (list marker removed). */
  text: string;
  /** The fact with the insight's lead ("The patient has: …") in front, so that it reads as a statement; = text when no lead. */
  statement: string;
}

/**
 * Splits an insight into atomic facts: a numbered enumeration ("1. a 2. b", "1) a; 2) b", one per line or inline) or a
 * bulleted list ("- a\n- b", "• a • b") gives one fact per item, with the text before the first item as the lead; any
 * other text is one fact. Enumerations need at least two items numbered 1, 2, … in order (a lone "3." or a decimal
 * "2.5" is not a marker).
 * @param insight the insight as the agent wrote it (markdown allowed).
 * @returns at least one fact for a non-blank insight, none for a blank one.
 */
export function splitAtomicFacts(insight: string): AtomicFact[] {
  const text = insight.replace(/\r\n?/g, '\n').trim();
  if (!text) return [];
  const split = splitNumbered(text) ?? splitBulleted(text);
  if (!split) return [{ index: 0, text, statement: text }];
  const lead = split.lead.replace(/[\s:;,–—-]+$/, '').trim();
  return split.items.map((t, index) => ({ index, text: t, statement: lead ? `${lead}: ${t}` : t }));
}

const clean = (s: string) =>
  s
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s;,]*\band$/i, '')
    .replace(/^[\s;,]+|[\s;,]+$/g, '')
    .trim();

function splitNumbered(text: string): { lead: string; items: string[] } | null {
  // markers: "1." / "1)" / "(1)" not inside a number (a decimal point or a digit before it)
  const re = /(?<![\w.,])\(?(\d{1,2})[.)](?=\s|\*|$)/g;
  const marks: Array<{ n: number; at: number; end: number }> = [];
  let expect = 1;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    if (n !== expect) continue;
    marks.push({ n, at: m.index, end: m.index + m[0].length });
    expect++;
  }
  if (marks.length < 2) return null;
  const items = marks
    .map((m, k) => clean(text.slice(m.end, marks[k + 1]?.at ?? text.length).replace(/^\*+|\*+$/g, '')))
    .filter(Boolean);
  return items.length >= 2 ? { lead: text.slice(0, marks[0]!.at), items } : null;
}

function splitBulleted(text: string): { lead: string; items: string[] } | null {
  const lines = text.split('\n');
  const first = lines.findIndex((l) => /^\s*[-*•]\s+/.test(l));
  if (first >= 0) {
    const items: string[] = [];
    for (const l of lines.slice(first)) {
      if (/^\s*[-*•]\s+/.test(l)) items.push(l.replace(/^\s*[-*•]\s+/, ''));
      else if (items.length && l.trim()) items[items.length - 1] += ` ${l.trim()}`;
    }
    const kept = items.map(clean).filter(Boolean);
    if (kept.length >= 2) return { lead: lines.slice(0, first).join(' '), items: kept };
  }
  const inline = text.split(/\s+•\s+/);
  if (inline.length >= 3 || (inline.length === 2 && /\s•\s/.test(text))) {
    const [lead, ...rest] = text.split(/\s*•\s+/);
    const kept = rest.map(clean).filter(Boolean);
    if (kept.length >= 2) return { lead: lead ?? '', items: kept };
  }
  return null;
}

/** Why a fact can or cannot be checked against what the agent saw. */
export interface Checkability {
  checkable: boolean;
  /** What makes it checkable; null when it is not. */
  kind: 'value' | 'relation' | 'entity' | null;
  /** One line for the expert: what it states, or why it is shown apart. */
  reason: string;
}

const STOP = new Set(
  (
    'a an the and or but of in on at to for from by with without as is are was were be been being has have had do does did ' +
    'this that these those it its their there here than then so such very also not no yes which who whom whose what when where why how ' +
    'into over under about after before during per each both either neither all any some other more most less least few many much'
  ).split(' '),
);

/**
 * Words that name a kind of information rather than state anything about it: section headings and labels an agent
 * writes before (or instead of) a finding ("Diagnoses.", "Key findings:", "Lab results"). A fact made only of such
 * words and stop words states nothing checkable.
 */
const LABEL_WORDS = new Set(
  (
    'summary overview finding findings insight insights result results analysis analyses conclusion conclusions observation ' +
    'observations note notes detail details data information info diagnosis diagnoses medication medications procedure procedures ' +
    'demographic demographics admission admissions lab labs laboratory vital vitals measurement measurements record records ' +
    'table tables column columns field fields value values statistic statistics trend trends pattern patterns key main important ' +
    'interesting notable general next step steps query queries patient patients subject subjects item items category categories list ' +
    'section topic topics further additional relevant following below above section overall'
  ).split(' '),
);

/** Quantities stated in words ("multiple admissions", "most visits", "twice"). */
const QUANTITY =
  /\b(?:none|zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozens?|hundreds?|thousands?|millions?|single|multiple|several|many|most|few|all|every|majority|minority|half|twice|thrice|once|double|triple)\b/i;
/** A number, percentage, date or time (digits). */
const NUMBER = /\d/;
/** Words that relate two things: verbs of being, having and change, comparisons, associations. */
const RELATION =
  /\b(?:is|are|was|were|has|have|had|shows?|showed|indicates?|indicated|suggests?|suggested|increase[sd]?|decrease[sd]?|rise[sn]?|rose|fell|falls?|drops?|dropped|grows?|grew|declined?|improved?|worsened?|higher|lower|greater|smaller|larger|more|less|fewer|than|exceeds?|exceeded|above|below|between|versus|vs\.?|compared|correlat\w*|associat\w*|linked|predicts?|causes?|caused|leads?|led|peaks?|peaked|equals?|remains?|remained|became|becomes|received|underwent|diagnosed|prescribed|admitted|discharged|died|took|takes|uses?|used|contains?|includes?|included|accounts?|represents?|dominated?)\b|[<>=≈≤≥]/i;

const words = (s: string) => s.toLowerCase().match(/[\p{L}][\p{L}\p{N}_'-]*/gu) ?? [];

/**
 * The checkability rule: an insight (or one of its atomic facts) goes to judgement only when it states
 * - a **value**: a number, percentage, date or a quantity in words ("multiple admissions", "aged 61");
 * - a **relation**: a verb of being/having/change or a comparison between at least two content words ("A1c rose
 *   above 7", "women have higher BMI");
 * - an **entity**: at least one content word that is not a label word ("hypertension", "metformin", "NHANES"); a
 *   quoted literal or an identifier (letters with digits or `_`) counts as an entity.
 * Everything else — blank text, a heading ending in ":", a line made only of label words ("Diagnoses.", "Key
 * findings", "Lab results") or stop words — is filler: shown apart and not queued for judgement.
 * @param fact the fact's text (without its lead: a lead alone does not make a fact checkable).
 * @returns whether it is checkable, by which part, and a one-line reason.
 */
export function checkability(fact: string): Checkability {
  const t = fact
    .replace(/[*`#>]+|(?<!\w)_+|_+(?!\w)/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  if (!t) return { checkable: false, kind: null, reason: 'blank' };
  if (/:$/.test(t)) {
    return { checkable: false, kind: null, reason: 'a heading (ends in ":"): it introduces facts but states none' };
  }
  const ws = words(t);
  const content = ws.filter((w) => !STOP.has(w));
  if (NUMBER.test(t) || QUANTITY.test(t)) return { checkable: true, kind: 'value', reason: 'states a value' };
  if (/["“'‘][^"”'’]{2,}["”'’]/.test(t) || /\b(?=[\w]*\d)(?=[\w]*[A-Za-z])\w{2,}\b|\b\w+_\w+\b/.test(t)) {
    return { checkable: true, kind: 'entity', reason: 'names an entity (a literal or an identifier)' };
  }
  const substantive = content.filter((w) => !LABEL_WORDS.has(w) && w.length >= 3);
  if (RELATION.test(t) && content.length >= 2) {
    return { checkable: true, kind: 'relation', reason: 'states a relation' };
  }
  if (substantive.length) {
    return { checkable: true, kind: 'entity', reason: `names an entity (${substantive.slice(0, 3).join(', ')})` };
  }
  return {
    checkable: false,
    kind: null,
    reason: ws.length
      ? 'a label or filler: it names a kind of information but states no value, entity or relation'
      : 'no words',
  };
}

/**
 * The terms of a fact that a step must mention to be relevant to it: its numbers (as written, and without thousands
 * separators) and its words of three or more letters that are neither stop words nor quantities, lower-cased, a plural
 * `s` removed.
 * @returns distinct terms, numbers first; at most 40.
 */
export function factTerms(fact: string): string[] {
  const out = new Set<string>();
  for (const m of fact.matchAll(/(?<![\w.])-?\d[\d,]*(?:\.\d+)?%?/g)) {
    const n = m[0].replace(/,(?=\d{3}\b)/g, '').replace(/%$/, '');
    out.add(n);
  }
  for (const w of words(fact)) {
    // label words stay (a query of the admissions table is relevant to "multiple admissions"); quantities do not
    if (STOP.has(w) || QUANTITY.test(w) || w.length < 3 || /^\d/.test(w)) continue;
    out.add(stem(w));
  }
  return [...out].slice(0, 40);
}

const stem = (w: string) =>
  w.length > 4 && w.endsWith('ies')
    ? `${w.slice(0, -3)}y`
    : w.length > 3 && w.endsWith('s') && !w.endsWith('ss')
      ? w.slice(0, -1)
      : w;
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Which of `terms` a text mentions: a number as a whole number (not inside a longer one), a word at a word start
 * (so "admission" finds "admissions" and "admission_type"), case-insensitively.
 */
export function termsMentioned(terms: readonly string[], text: string): string[] {
  const low = text.toLowerCase();
  return terms.filter((t) =>
    /^-?\d/.test(t)
      ? new RegExp(`(?<![\\d.])${escape(t)}(?![\\d]|\\.\\d)`).test(low)
      : new RegExp(`(?<![\\p{L}\\p{N}])${escape(t)}`, 'u').test(low),
  );
}

/** A step as the relevance rule reads it: its index and the text of its calls and their results. */
export interface StepText {
  index: number;
  text: string;
}

/**
 * The steps relevant to a fact: every step up to `upTo` (what the agent had seen when it wrote the fact) whose text
 * mentions one of the fact's terms, plus the step `upTo` itself, in step order, with the terms each mentions.
 * @param steps the run's steps (any order); `upTo` the step the insight follows (inclusive bound).
 * @returns the relevant steps and the terms of the fact that no step mentions (shown to the expert as "never seen").
 */
export function relevantSteps(
  fact: string,
  steps: readonly StepText[],
  upTo: number,
): { steps: Array<{ index: number; terms: string[] }>; unseen: string[] } {
  const terms = factTerms(fact);
  const out: Array<{ index: number; terms: string[] }> = [];
  const seen = new Set<string>();
  for (const s of [...steps].filter((x) => x.index <= upTo).sort((a, b) => a.index - b.index)) {
    const hit = termsMentioned(terms, s.text);
    for (const t of hit) seen.add(t);
    if (hit.length || s.index === upTo) out.push({ index: s.index, terms: hit });
  }
  return { steps: out, unseen: terms.filter((t) => !seen.has(t)) };
}
