/** Statistics of published benchmark numbers (issue 48): clustered means, paired differences, power. */
export * from './cluster.ts';
export * from './distributions.ts';
export * from './paired.ts';
export * from './power.ts';
