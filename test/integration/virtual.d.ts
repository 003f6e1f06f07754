/** Virtual module built by esbuild.js: imports every test/integration/**\/*.test.ts. */
declare module 'loupe:integration-tests' {}
