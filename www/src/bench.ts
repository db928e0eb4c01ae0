// The benchmark page: reads the configuration from the URL (and keeps it there), runs each
// engine in a fresh worker (bench-worker.ts), fills #bench-results (one row per workload and
// engine, with data-workload and data-engine; ratio = this row's ops/s over IndexedDB's for
// the workload; scan-workers over scan), draws a bar chart (Chart.js, log scale) and offers the
// results as Markdown or JSON (copied, or downloaded) with the browser and core count.
// Workloads and engines are checkboxes. A Bedrock world for the scans is loaded here (a
// .mcworld or a world folder, picked or dropped, copied into browser storage) or chosen among
// those already there. body[data-state] is idle | loading | running | done | error.

import { BarController, BarElement, CategoryScale, Chart, Legend, LogarithmicScale, Tooltip } from 'chart.js';

import { startDecodeWorkers } from 'strata-level/browser';

import { importFolder, importedWorlds } from './imported.js';
import { filesOfEntry, filesOfInput, worldRoot, type PickedFile } from './picked.js';
import { unzipWorld } from './unzip.js';
import { ENGINES, WORKLOADS, WORLD_WORKLOADS, configQuery, readConfig, type BenchConfig, type BenchRow, type Engine } from './bench-config.js';

Chart.register(BarController, BarElement, CategoryScale, LogarithmicScale, Legend, Tooltip);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const message = $('message');
const tbody = $('bench-results').querySelector('tbody')!;
let chart: Chart | undefined;

function say(text: string, kind: 'info' | 'busy' | 'error' = 'info'): void {
  message.hidden = false;
  message.dataset.kind = kind;
  message.textContent = text;
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** A row's ops/s over IndexedDB's for the same workload; a scan with decode workers over the
 * scan without. '' where there is nothing to compare with. */
function ratioOf(rows: BenchRow[], r: BenchRow): string {
  const base =
    r.workload === 'scan-workers'
      ? rows.find((x) => x.workload === 'scan' && x.engine === r.engine)
      : r.engine === 'indexeddb'
        ? undefined
        : rows.find((x) => x.workload === r.workload && x.engine === 'indexeddb');
  return base ? `${fmt(r.opsPerSec / base.opsPerSec, 2)}×` : '';
}

let lastResults: { config: BenchConfig; env: Record<string, unknown>; rows: BenchRow[] } | undefined;

function markdown(res: NonNullable<typeof lastResults>): string {
  const lines = [
    `Strata browser benchmark, ${res.env.date as string}`,
    '',
    `${res.env.userAgent as string}; ${res.env.hardwareConcurrency as number} hardware threads. ${res.config.entries.toLocaleString('en')} entries of ${res.config.valueSize} bytes, batches of ${res.config.batchSize}${res.config.world ? `; world ${res.config.world}` : ''}.`,
    '',
    '| workload | engine | ops | seconds | ops/s | MB/s | ratio |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...res.rows.map((r) => `| ${r.workload} | ${r.engine} | ${fmt(r.ops)} | ${fmt(r.seconds, 3)} | ${fmt(r.opsPerSec)} | ${fmt(r.mbPerSec, 2)} | ${ratioOf(res.rows, r) || '—'} |`),
    '',
    `Ratio: ops/s over IndexedDB's (browser-level) for the workload; scan-workers over scan. Configuration: ${location.origin}${location.pathname}${configQuery(res.config)}`,
  ];
  return `${lines.join('\n')}\n`;
}

async function copy(text: string, what: string): Promise<void> {
  const note = $('bench-copied');
  (window as unknown as { strataBenchCopied?: string }).strataBenchCopied = text;
  try {
    await navigator.clipboard.writeText(text);
    note.textContent = `${what} copied.`;
  } catch {
    note.textContent = `${what}: the browser refused the clipboard; use the download link.`;
  }
  note.dataset.copied = what;
}

function render(rows: BenchRow[]): void {
  const ops = (w: string, e: Engine) => rows.find((r) => r.workload === w && r.engine === e)?.opsPerSec;
  tbody.replaceChildren(
    ...rows.map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.workload = r.workload;
      tr.dataset.engine = r.engine;
      const ratio = ratioOf(rows, r);
      for (const v of [r.workload, r.engine, fmt(r.ops), fmt(r.seconds, 3), fmt(r.opsPerSec), fmt(r.mbPerSec, 2), ratio]) {
        const td = document.createElement('td');
        td.textContent = v;
        tr.append(td);
      }
      return tr;
    }),
  );
  const workloads = WORKLOADS.filter((w) => rows.some((r) => r.workload === w));
  const data = {
    labels: [...workloads],
    datasets: ENGINES.filter((e) => rows.some((r) => r.engine === e)).map((e, k) => ({
      label: e,
      data: workloads.map((w) => ops(w, e) ?? 0),
      backgroundColor: ['#3d6b94', '#d08c32', '#6b9a4a', '#8c5fa8'][k % 4],
    })),
  };
  if (chart) {
    chart.data = data;
    chart.update();
  } else {
    chart = new Chart($<HTMLCanvasElement>('bench-chart'), {
      type: 'bar',
      data,
      options: { animation: false, scales: { y: { type: 'logarithmic', title: { display: true, text: 'ops/s' } } } },
    });
  }
}

/** Where each engine's run was, as `[ms since the page loaded, engine, step]` (tests print it
 * when a run does not end). */
const trace: Array<[number, string, string]> = [];
(window as unknown as { strataBenchTrace: typeof trace }).strataBenchTrace = trace;
/** The package's last diagnostic steps in the engines' workers (decode pool, pass steps), as
 * `[ms since the page loaded, engine, step]`: the newest ENGINE_TRACE_KEPT. */
const engineTrace: Array<[number, string, string]> = [];
const ENGINE_TRACE_KEPT = 10_000;
(window as unknown as { strataBenchEngineTrace: typeof engineTrace }).strataBenchEngineTrace = engineTrace;

function runEngine(engine: Engine, config: BenchConfig, onRow: (r: BenchRow) => void): Promise<void> {
  const onPhase = (text: string) => {
    trace.push([Math.round(performance.now()), engine, text]);
    document.body.dataset.phase = `${engine}: ${text}`;
    say(`Running ${engine}: ${text}…`, 'busy');
  };
  const worker = new Worker(new URL('./bench-worker.ts', import.meta.url), { type: 'module', name: `bench-${engine}` });
  // The scan with decode workers gets them from this page, not started in the benchmark's
  // worker (strata-level's startDecodeWorkers).
  const decoders = engine === 'strata-opfs' && config.world && config.workloads.includes('scan-workers') ? startDecodeWorkers() : undefined;
  return new Promise<void>((resolve, reject) => {
    worker.onmessage = (ev: MessageEvent<{ type: string; row?: BenchRow; message?: string; text?: string }>) => {
      if (ev.data.type === 'phase') onPhase(ev.data.text!);
      else if (ev.data.type === 'engine') {
        engineTrace.push([Math.round(performance.now()), engine, ev.data.text!]);
        if (engineTrace.length > ENGINE_TRACE_KEPT) engineTrace.shift();
      }
      else if (ev.data.type === 'row') onRow(ev.data.row!);
      else if (ev.data.type === 'done') resolve();
      else reject(new Error(`${engine}: ${ev.data.message}`));
    };
    worker.onerror = (ev) => reject(new Error(`${engine}: worker failed: ${ev.message}`));
    worker.postMessage({ engine, config, decoderPorts: decoders?.ports ?? [] }, decoders?.ports ?? []);
  }).finally(() => {
    worker.terminate();
    decoders?.terminate();
  });
}

const checked = (set: string) => [...document.querySelectorAll<HTMLInputElement>(`#${set} input[type=checkbox]:checked`)].map((i) => i.value);

function formConfig(): BenchConfig {
  const q = new URLSearchParams({
    entries: $<HTMLInputElement>('cfg-entries').value,
    valueSize: $<HTMLInputElement>('cfg-valueSize').value,
    batchSize: $<HTMLInputElement>('cfg-batchSize').value,
    workloads: checked('cfg-workloads').join(','),
    engines: checked('cfg-engines').join(','),
    world: $<HTMLSelectElement>('cfg-world').value,
  });
  return readConfig(`?${q.toString()}`);
}

/** One checkbox per name in `all`, checked where `on` has it. */
function boxes(set: string, all: readonly string[], on: readonly string[], title: (n: string) => string): void {
  const fs = $(set);
  for (const name of all) {
    const label = document.createElement('label');
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.value = name;
    box.checked = on.includes(name);
    label.title = title(name);
    label.append(box, ` ${name}`);
    fs.append(label);
  }
}

const ENGINE_TITLES: Record<string, string> = {
  'strata-opfs': "Strata over OPFS, the engine in the benchmark's own worker (no message per call)",
  'strata-opfs-relaxed': "Strata over OPFS in the benchmark's worker, durability 'relaxed' (log appends written when the task ends)",
  'strata-opfs-hop': "Strata over OPFS, the engine in the package's worker: a message per call, as from a page",
  'strata-opfs-hop-64': "Strata over OPFS, the engine in the package's worker, 64 calls in flight: one message per turn, as from a page",
  'strata-idb': "Strata over its IndexedDB store (what browsers without OPFS sync access handles get)",
  indexeddb: 'IndexedDB through browser-level',
};

function fillWorlds(selected: string | undefined): void {
  const worldSel = $<HTMLSelectElement>('cfg-world');
  worldSel.replaceChildren(new Option('none', ''));
  for (const w of importedWorlds()) worldSel.append(new Option(`${w.name} (${w.files} files, ${fmt(w.bytes)} bytes)`, w.location));
  worldSel.value = selected ?? '';
}

/** Copies a picked or dropped world into browser storage and selects it for the scans. */
async function loadWorld(files: PickedFile[], what: string): Promise<void> {
  const root = worldRoot(files);
  if (root === undefined) {
    say(`${what} holds no Bedrock world (no level.dat with a db folder).`, 'error');
    return;
  }
  document.body.dataset.state = 'loading';
  try {
    const w = await importFolder(
      files,
      root,
      (n, total, bytes, totalBytes) => say(`Copying ${what} into browser storage: ${n} of ${total} files, ${fmt(bytes)} of ${fmt(totalBytes)} bytes…`, 'busy'),
      () => false,
    );
    fillWorlds(w.location);
    for (const box of document.querySelectorAll<HTMLInputElement>('#cfg-workloads input')) if (WORLD_WORKLOADS.includes(box.value)) box.checked = true;
    history.replaceState(null, '', configQuery(formConfig()));
    say(`${w.name} is in browser storage (${w.files} files, ${fmt(w.bytes)} bytes): Run scans it.`);
    document.body.dataset.state = 'idle';
  } catch (e) {
    say(`Copying ${what} failed: ${String((e as Error)?.message ?? e)}`, 'error');
    document.body.dataset.state = 'error';
  }
}

async function loadZip(file: File): Promise<void> {
  document.body.dataset.state = 'loading';
  say(`Unpacking ${file.name}…`, 'busy');
  try {
    const out = await unzipWorld(new Uint8Array(await file.arrayBuffer()));
    const stem = file.name.replace(/\.(mcworld|zip)$/i, '').replace(/\//g, '_') || 'world';
    const root = out.root === '' ? stem : `${stem}/${out.root}`;
    await loadWorld(
      out.files.map((f) => ({ path: `${root}/${f.name}`, file: new File([f.data as Uint8Array<ArrayBuffer>], f.name.split('/').pop()!) })),
      `“${file.name}”`,
    );
  } catch (e) {
    say(`${file.name}: ${String((e as Error)?.message ?? e)}`, 'error');
    document.body.dataset.state = 'error';
  }
}

async function run(config: BenchConfig): Promise<void> {
  history.replaceState(null, '', configQuery(config));
  document.body.dataset.state = 'running';
  const rows: BenchRow[] = [];
  render(rows);
  $('bench-export').hidden = true;
  try {
    for (const engine of config.engines) {
      say(`Running ${engine} (${config.entries.toLocaleString('en')} entries of ${config.valueSize} bytes)…`, 'busy');
      await runEngine(engine, config, (r) => {
        rows.push(r);
        render(rows);
      });
    }
    const env = { userAgent: navigator.userAgent, hardwareConcurrency: navigator.hardwareConcurrency, date: new Date().toISOString() };
    lastResults = { config, env, rows };
    const link = $<HTMLAnchorElement>('bench-download');
    link.href = URL.createObjectURL(new Blob([JSON.stringify(lastResults, null, 2)], { type: 'application/json' }));
    $('bench-export').hidden = false;
    say(`Done: ${rows.length} results.`);
    document.body.dataset.state = 'done';
  } catch (e) {
    say(`The run failed: ${String((e as Error)?.message ?? e)}`, 'error');
    document.body.dataset.state = 'error';
  }
}

const config = readConfig(location.search);
$<HTMLInputElement>('cfg-entries').value = String(config.entries);
$<HTMLInputElement>('cfg-valueSize').value = String(config.valueSize);
$<HTMLInputElement>('cfg-batchSize').value = String(config.batchSize);
boxes('cfg-workloads', WORKLOADS, config.workloads, (w) => (WORLD_WORKLOADS.includes(w) ? `${w}: needs a world (Strata over OPFS only)` : w));
boxes('cfg-engines', ENGINES, config.engines, (e) => ENGINE_TITLES[e] ?? e);
fillWorlds(config.world);
$('bench-env').textContent = `${navigator.userAgent} · ${navigator.hardwareConcurrency} hardware threads`;
$('bench-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void run(formConfig());
});
$('bench-form').addEventListener('change', () => history.replaceState(null, '', configQuery(formConfig())));
$('bench-open-mcworld').addEventListener('click', () => $<HTMLInputElement>('bench-mcworld').click());
$('bench-open-folder').addEventListener('click', () => $<HTMLInputElement>('bench-folder').click());
$<HTMLInputElement>('bench-mcworld').addEventListener('change', (ev) => {
  const input = ev.target as HTMLInputElement;
  const file = input.files?.[0];
  if (file) void loadZip(file);
  input.value = '';
});
$<HTMLInputElement>('bench-folder').addEventListener('change', (ev) => {
  const input = ev.target as HTMLInputElement;
  if (input.files && input.files.length > 0) void loadWorld(filesOfInput(input.files), 'the folder');
  input.value = '';
});
document.addEventListener('dragover', (ev) => ev.preventDefault());
document.addEventListener('drop', (ev) => {
  ev.preventDefault();
  const item = ev.dataTransfer?.items?.[0];
  const entry = item?.webkitGetAsEntry?.();
  if (entry?.isDirectory) {
    void filesOfEntry(entry).then((files) => loadWorld(files, `the folder “${entry.name}”`));
    return;
  }
  const file = ev.dataTransfer?.files?.[0];
  if (file) void loadZip(file);
});
$('bench-copy-md').addEventListener('click', () => {
  if (lastResults) void copy(markdown(lastResults), 'Markdown');
});
$('bench-copy-json').addEventListener('click', () => {
  if (lastResults) void copy(`${JSON.stringify(lastResults, null, 2)}\n`, 'JSON');
});
document.body.dataset.state = 'idle';
if (config.auto) void run(config);
