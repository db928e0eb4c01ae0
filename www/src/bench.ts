// The benchmark page: reads the configuration from the URL, runs each engine in a fresh
// worker (bench-worker.ts), fills #bench-results (one row per workload and engine, with
// data-workload and data-engine; ratio = Strata's ops/s over IndexedDB's for the workload),
// draws a bar chart (Chart.js, log scale) and offers the results as JSON with the browser
// and hardware concurrency. body[data-state] is idle | running | done | error.

import { BarController, BarElement, CategoryScale, Chart, Legend, LogarithmicScale, Tooltip } from 'chart.js';

import { importedWorlds } from './imported.js';
import { ENGINES, WORKLOADS, configQuery, readConfig, type BenchConfig, type BenchRow, type Engine } from './bench-config.js';

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

function render(rows: BenchRow[]): void {
  const ops = (w: string, e: Engine) => rows.find((r) => r.workload === w && r.engine === e)?.opsPerSec;
  tbody.replaceChildren(
    ...rows.map((r) => {
      const tr = document.createElement('tr');
      tr.dataset.workload = r.workload;
      tr.dataset.engine = r.engine;
      const s = ops(r.workload, 'strata-opfs');
      const i = ops(r.workload, 'indexeddb');
      const ratio = r.engine === 'strata-opfs' && s !== undefined && i !== undefined ? `${fmt(s / i, 2)}×` : '';
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

function runEngine(engine: Engine, config: BenchConfig, onRow: (r: BenchRow) => void): Promise<void> {
  const worker = new Worker(new URL('./bench-worker.ts', import.meta.url), { type: 'module', name: `bench-${engine}` });
  return new Promise<void>((resolve, reject) => {
    worker.onmessage = (ev: MessageEvent<{ type: string; row?: BenchRow; message?: string }>) => {
      if (ev.data.type === 'row') onRow(ev.data.row!);
      else if (ev.data.type === 'done') resolve();
      else reject(new Error(`${engine}: ${ev.data.message}`));
    };
    worker.onerror = (ev) => reject(new Error(`${engine}: worker failed: ${ev.message}`));
    worker.postMessage({ engine, config });
  }).finally(() => worker.terminate());
}

function formConfig(): BenchConfig {
  const q = new URLSearchParams({
    entries: $<HTMLInputElement>('cfg-entries').value,
    valueSize: $<HTMLInputElement>('cfg-valueSize').value,
    batchSize: $<HTMLInputElement>('cfg-batchSize').value,
    workloads: $<HTMLInputElement>('cfg-workloads').value,
    engines: $<HTMLInputElement>('cfg-engines').value,
    world: $<HTMLSelectElement>('cfg-world').value,
  });
  return readConfig(`?${q.toString()}`);
}

async function run(config: BenchConfig): Promise<void> {
  history.replaceState(null, '', configQuery(config));
  document.body.dataset.state = 'running';
  const rows: BenchRow[] = [];
  render(rows);
  $('bench-download').hidden = true;
  try {
    for (const engine of config.engines) {
      say(`Running ${engine} (${config.entries.toLocaleString('en')} entries of ${config.valueSize} bytes)…`, 'busy');
      await runEngine(engine, config, (r) => {
        rows.push(r);
        render(rows);
      });
    }
    const env = { userAgent: navigator.userAgent, hardwareConcurrency: navigator.hardwareConcurrency, date: new Date().toISOString() };
    const link = $<HTMLAnchorElement>('bench-download');
    link.href = URL.createObjectURL(new Blob([JSON.stringify({ config, env, rows }, null, 2)], { type: 'application/json' }));
    link.hidden = false;
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
$<HTMLInputElement>('cfg-workloads').value = config.workloads.join(',');
$<HTMLInputElement>('cfg-engines').value = config.engines.join(',');
const worldSel = $<HTMLSelectElement>('cfg-world');
for (const w of importedWorlds()) {
  const o = document.createElement('option');
  o.value = w.location;
  o.textContent = w.name;
  worldSel.append(o);
}
worldSel.value = config.world ?? '';
$('bench-env').textContent = `${navigator.userAgent} · hardware concurrency ${navigator.hardwareConcurrency}`;
$('bench-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  void run(formConfig());
});
document.body.dataset.state = 'idle';
if (config.auto) void run(config);
