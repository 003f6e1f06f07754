/**
 * extensionTestsPath entry: runs inside the real VS Code extension host (code-server or desktop).
 * Every `test/integration/**\/*.test.ts` is bundled in by esbuild (virtual module `loupe:integration-tests`)
 * and loaded after mocha has defined its BDD globals.
 */
import * as mochaModule from 'mocha';

// mocha 12 exports `{ Mocha }`; older majors export the class itself.
const MochaClass =
  (mochaModule as unknown as { Mocha?: typeof Mocha }).Mocha ??
  (mochaModule as unknown as { default?: typeof Mocha }).default ??
  (mochaModule as unknown as typeof Mocha);

export async function run(): Promise<void> {
  const mocha = new MochaClass({ ui: 'bdd', timeout: 60_000, color: false, reporter: 'spec' });
  mocha.suite.emit('pre-require', globalThis, 'loupe-integration', mocha);
  await import('loupe:integration-tests');
  const grep = process.env.LOUPE_TEST_GREP;
  if (grep) mocha.grep(grep);
  await new Promise<void>((resolve, reject) => {
    mocha.run((failures: number) => {
      console.log(`[loupe-integration] ${failures} failing`);
      if (failures) reject(new Error(`${failures} integration tests failed`));
      else resolve();
    });
  });
}
