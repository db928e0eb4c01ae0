// A `Link` that calls an in-process `Engine` directly (Node, and the worker side in browsers).

import type { Link } from './db.js';
import type { Engine } from './engine.js';
import { invalidArgument } from './errors.js';

type Method = (...args: unknown[]) => unknown;

const OPS = new Set([
  'open',
  'get',
  'getMany',
  'put',
  'del',
  'write',
  'iterator',
  'nextv',
  'seek',
  'closeIterator',
  'snapshot',
  'releaseSnapshot',
  'scan',
  'compactRange',
  'flush',
  'properties',
  'recovery',
  'dialect',
  'close',
  'openWorld',
  'worldSummary',
  'chunkList',
  'renderMap',
  'surfaceTiles',
  'chunkRecords',
  'recordNbt',
  'deleteChunks',
  'pruneChunks',
  'applyEdits',
  'entities',
  'deleteEntities',
  'deleteEntity',
  'recordSnbt',
  'setRecordSnbt',
  'levelDatSnbt',
  'setLevelDatSnbt',
  'exportMcworld',
  'importMcworld',
  'dropMemStore',
]);

/** Runs one named engine operation now (only open/openWorld/close return promises). */
export function dispatch(engine: Engine, op: string, args: unknown[]): unknown {
  if (!OPS.has(op)) throw invalidArgument(`unknown operation ${op}`);
  return (engine as unknown as Record<string, Method>)[op]!.apply(engine, args);
}

export class LocalLink implements Link {
  constructor(private readonly engine: Engine) {}

  call(op: string, args: unknown[]): Promise<unknown> {
    try {
      return Promise.resolve(dispatch(this.engine, op, args));
    } catch (e) {
      return Promise.reject(e);
    }
  }
}
