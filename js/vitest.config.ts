import fs from 'node:fs';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

// The real Bedrock worlds live beside the repository (../shared/worlds or $STRATA_WORLDS). A
// clone with nothing beside it has none: the suites made of world checks are left out, and the
// tests that read one world are skipped (test/helpers.ts `worldTest`), loudly, here and in the
// summary line. Under CI the worlds must be there.
const worldsDir = process.env.STRATA_WORLDS ?? path.resolve(import.meta.dirname, '../../shared/worlds');
const haveWorlds = fs.existsSync(path.join(worldsDir, 'MANIFEST.tsv'));
const WORLD_SUITES = ['test/worlds.test.ts', 'test/world.test.ts', 'test/viewer.test.ts', 'test/editor.test.ts', 'test/firefox.test.ts', 'test/webkit.test.ts', 'test/bedrock-provider.test.ts'];
if (!haveWorlds) {
  if (process.env.CI) throw new Error(`CI: the real worlds are missing at ${worldsDir} (set STRATA_WORLDS)`);
  console.warn(
    `\n!!! SKIPPED: the real worlds are not at ${worldsDir} (set STRATA_WORLDS).\n` +
      `!!! Left out: ${WORLD_SUITES.join(', ')}; single world tests are reported as skipped.\n`,
  );
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: haveWorlds ? [] : WORLD_SUITES,
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
