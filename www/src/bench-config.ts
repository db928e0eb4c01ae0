// The benchmark page's configuration, read from (and written back to) the URL so a run is
// reproducible: entries, valueSize, batchSize, workloads, engines, world (an OPFS location
// imported by the viewer, for scan), auto (start on load).

// scan: the chosen world scanned by the engine alone (decodeWorkers 0); scan-workers: the
// same scan with the default decode workers (cores - 1), Strata over OPFS only.
export const WORKLOADS = ['fillseq', 'readseq', 'fillrandom', 'readrandom', 'batch', 'scan', 'scan-workers'] as const;
/** Workloads that read the chosen world (they need one). */
export const WORLD_WORKLOADS: readonly string[] = ['scan', 'scan-workers'];
// strata-opfs: the engine in the benchmark's own worker (the package's `engine: 'auto'` there);
// strata-opfs-relaxed: the same with durability 'relaxed' (log appends written when the
// worker's task ends, not at every call);
// strata-opfs-hop: the engine in the package's worker, one message per awaited call (what a
// page's main thread gets); strata-opfs-hop-64: the same with 64 calls in flight (a page that
// does not await each call before the next: calls of one turn cross in one message); strata-idb: the engine in the benchmark's worker over the IndexedDB
// store (what browsers without OPFS sync access handles get); indexeddb: browser-level. The
// default runs the first two.
export const ENGINES = ['strata-opfs', 'indexeddb', 'strata-opfs-relaxed', 'strata-opfs-hop', 'strata-opfs-hop-64', 'strata-idb'] as const;
const DEFAULT_ENGINES = ['strata-opfs', 'indexeddb'] as const;
export type Workload = (typeof WORKLOADS)[number];
export type Engine = (typeof ENGINES)[number];

export interface BenchConfig {
  entries: number;
  valueSize: number;
  batchSize: number;
  workloads: Workload[];
  engines: Engine[];
  world: string | undefined;
  auto: boolean;
}

export interface BenchRow {
  workload: string;
  engine: Engine;
  ops: number;
  bytes: number;
  seconds: number;
  opsPerSec: number;
  mbPerSec: number;
}

function int(v: string | null, dflt: number, min: number, max: number): number {
  const n = v === null ? dflt : Number(v);
  return Number.isInteger(n) && n >= min && n <= max ? n : dflt;
}

function list<T extends string>(v: string | null, all: readonly T[], dflt: readonly T[]): T[] {
  if (v === null) return [...dflt];
  const want = v.split(',').filter((x): x is T => (all as readonly string[]).includes(x));
  return want.length > 0 ? want : [...dflt];
}

export function readConfig(search: string): BenchConfig {
  const p = new URLSearchParams(search);
  const world = p.get('world') || undefined;
  return {
    entries: int(p.get('entries'), 10_000, 1, 10_000_000),
    valueSize: int(p.get('valueSize'), 100, 0, 1 << 20),
    batchSize: int(p.get('batchSize'), 100, 1, 100_000),
    workloads: list(p.get('workloads'), WORKLOADS, world ? WORKLOADS : WORKLOADS.filter((w) => !WORLD_WORKLOADS.includes(w))),
    engines: list(p.get('engines'), ENGINES, DEFAULT_ENGINES),
    world,
    auto: p.get('auto') === '1',
  };
}

export function configQuery(c: BenchConfig): string {
  const p = new URLSearchParams({
    entries: String(c.entries),
    valueSize: String(c.valueSize),
    batchSize: String(c.batchSize),
    workloads: c.workloads.join(','),
    engines: c.engines.join(','),
  });
  if (c.world) p.set('world', c.world);
  return `?${p.toString()}`;
}
