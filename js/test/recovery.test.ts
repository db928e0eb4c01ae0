// db.recovery(): what recovery did not use at open, which LevelDB drops silently. A log cut in
// the middle of a record opens with the records before the cut and reports the unused tail.

import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';

import { open } from '../dist/node.js';
import { tempDir } from './helpers.js';

test('a log cut mid-record reports its unused tail; a clean open reports nothing', async () => {
  const dir = path.join(tempDir('recovery'), 'db');
  const db = await open(dir, {});
  for (let i = 0; i < 200; i++) await db.put(`key${String(i).padStart(4, '0')}`, `value ${i} `.repeat(5));
  expect(await db.recovery()).toEqual({
    clean: true,
    droppedTails: [],
    unreferencedTables: [],
    gap: null,
    lostLogs: [],
    messages: [],
  });
  await db.close();
  const log = fs.readdirSync(dir).find((n) => n.endsWith('.log'))!;
  const len = fs.statSync(path.join(dir, log)).size;
  const cut = Math.floor(len / 2) + 3;
  fs.truncateSync(path.join(dir, log), cut);

  const again = await open(dir, { readOnly: true });
  const r = await again.recovery();
  expect(r.clean).toBe(false);
  expect(r.droppedTails.length).toBe(1);
  expect(r.droppedTails[0]!.file).toBe(log);
  expect(r.droppedTails[0]!.offset + r.droppedTails[0]!.bytes).toBe(cut);
  expect(r.droppedTails[0]!.bytes).toBeGreaterThan(0);
  expect(r.messages.length).toBe(1);
  expect(r.messages[0]).toContain(`${log}: ${r.droppedTails[0]!.bytes} bytes from offset ${r.droppedTails[0]!.offset}`);
  const { entries } = await again.scan();
  expect(entries).toBeGreaterThan(0);
  expect(entries).toBeLessThan(200);
  await again.close();
});
