/** What annotation.perf.ts bundles with the shipped esbuild settings: the host side of the annotation panel. */
export { openStore } from '../../src/core/store/run-store.ts';
export { annotationStoreOf } from '../../src/core/annotations/index.ts';
export { annotationState } from '../../src/app/annotation/annotation.ts';
