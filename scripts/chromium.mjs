// Debian's Chromium for the benchmarks and tests that drive it through playwright-core: the
// launch flags every one of them uses, and the memory of a launched browser (proportional set
// size: shared pages split between their sharers, so the processes' sum is what they hold).

import fs from 'node:fs';

/** Flags for a headless run that talks to nothing but the page's server. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The processes of the Chromium launched with `profile`, looked up at most once a second
 * (from /proc: no `ps` spawned), so that sampling memory every 100 ms costs the machine little
 * beside what it measures (a `ps` per sample took a share of a core from the page on two). */
let tree = { profile: undefined, at: 0, rows: [] };
function chromiumProcesses(profile) {
  if (tree.profile === profile && Date.now() - tree.at < 1000) return tree.rows;
  const rows = [];
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const args = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').replace(/\0/g, ' ');
      rows.push({ pid: Number(d), ppid, args });
    } catch {
      // exited meanwhile
    }
  }
  const mine = new Set(rows.filter((r) => r.args.includes(profile) && !r.args.includes('--type=')).map((r) => r.pid));
  for (let grew = true; grew; ) {
    grew = false;
    for (const r of rows) if (!mine.has(r.pid) && mine.has(r.ppid)) (mine.add(r.pid), (grew = true));
  }
  tree = { profile, at: Date.now(), rows: rows.filter((r) => mine.has(r.pid)) };
  return tree.rows;
}

/** PSS in bytes of the Chromium launched with `profile` (its user data folder) and all its
 * children, and of its renderer processes alone (the page and its dedicated workers). Linux
 * only (/proc); undefined elsewhere. */
export function chromiumPss(profile) {
  if (!fs.existsSync('/proc/self/smaps_rollup')) return undefined;
  const rows = chromiumProcesses(profile);
  let all = 0;
  let renderer = 0;
  for (const r of rows) {
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
