/** Loupe's version, recorded in every run. Kept in step with package.json by a unit test. */
export const LOUPE_VERSION = '0.1.0';
