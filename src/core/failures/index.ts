/**
 * Failure-mode analysis (issue 19): taxonomies as data, failure tags / cases / hallucination checks as annotations,
 * seeded stratified sampling queues, unit-based agreement and the papers' figures.
 */
export * from './taxonomy.ts';
export * from './tags.ts';
export * from './agreement.ts';
export * from './figures.ts';
