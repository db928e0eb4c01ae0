// The official abstract-level compliance suite (shipped in the abstract-level package, run
// with tape) against StrataLevel on node:fs. Run: node test/abstract-level.mjs
// Nothing is skipped by hand: the suite itself reads StrataLevel's `supports` manifest.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'tape';
import suite from 'abstract-level/test/index.js';

import { StrataLevel } from '../dist/level.js';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-abstract-level-'));
let n = 0;

test.onFinish(() => fs.rmSync(root, { recursive: true, force: true }));

suite({
  test,
  factory(options) {
    return new StrataLevel(path.join(root, `db${n++}`), options);
  },
});
