// Debian's Chromium for the benchmarks and tests that drive it through playwright-core: the
// launch flags every one of them uses, and the memory of a launched browser (proportional set
// size: shared pages split between their sharers, so the processes' sum is what they hold).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Flags for a headless run that talks to nothing but the page's server. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** PSS in bytes of the Chromium launched with `profile` (its user data folder) and all its
 * children, and of its renderer processes alone (the page and its dedicated workers). Linux
 * only (/proc); undefined elsewhere. */
export function chromiumPss(profile) {
  if (!fs.existsSync('/proc/self/smaps_rollup')) return undefined;
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m) => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3] }));
  const mine = new Set(rows.filter((r) => r.args.includes(profile) && !r.args.includes('--type=')).map((r) => r.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) if (!mine.has(r.pid) && mine.has(r.ppid)) (mine.add(r.pid), (grew = true));
  }
  let all = 0;
  let renderer = 0;
  for (const r of rows) {
    if (!mine.has(r.pid)) continue;
    try {
      const kb = Number(/^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${r.pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
      all += kb * 1024;
      if (r.args.includes('--type=renderer')) renderer += kb * 1024;
    } catch {
      // exited meanwhile
    }
  }
  return { all, renderer };
}
