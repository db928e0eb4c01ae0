// Errors with `level`-style codes. Engine errors arrive as plain `Error`s carrying `code`
// (and, for corruption, `file` and `offset`); this module gives them one class and keeps the
// code list in one place.

export type ErrorCode =
  | 'LEVEL_NOT_FOUND'
  | 'LEVEL_CORRUPTION'
  | 'LEVEL_IO_ERROR'
  | 'LEVEL_LOCKED'
  | 'LEVEL_DATABASE_NOT_OPEN'
  | 'LEVEL_INVALID_ARGUMENT'
  | 'LEVEL_NOT_SUPPORTED'
  | 'LEVEL_ITERATOR_NOT_OPEN'
  /** Browsers: the tab running a shared database's engine went away before answering. */
  | 'LEVEL_CONNECTION_LOST';

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
  'LEVEL_CONNECTION_LOST',
  'LEVEL_NOT_FOUND',
  'LEVEL_CORRUPTION',
  'LEVEL_IO_ERROR',
  'LEVEL_LOCKED',
  'LEVEL_DATABASE_NOT_OPEN',
  'LEVEL_INVALID_ARGUMENT',
  'LEVEL_NOT_SUPPORTED',
  'LEVEL_ITERATOR_NOT_OPEN',
]);

/** An error from Strata, with a stable `code`. */
export class StrataError extends Error {
  readonly code: ErrorCode;
  /** For corruption: the damaged file's name and the byte offset, when known. */
  declare readonly file?: string;
  declare readonly offset?: number;
  /** The engine's error kind when it says more than `code` (e.g. `NoSpace` for a full disk
   * or an exhausted browser quota, which are `LEVEL_IO_ERROR`s). */
  declare readonly kind?: string;

  constructor(code: ErrorCode, message: string, extra?: { file?: string; offset?: number; kind?: string; cause?: unknown }) {
    super(message, extra?.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'StrataError';
    this.code = code;
    if (extra?.file !== undefined) (this as { file?: string }).file = extra.file;
    if (extra?.offset !== undefined) (this as { offset?: number }).offset = extra.offset;
    if (extra?.kind !== undefined) (this as { kind?: string }).kind = extra.kind;
  }
}

/** Serializable form of an error (crosses `postMessage`). */
export interface ErrorShape {
  code: string;
  message: string;
  file?: string;
  offset?: number;
  kind?: string;
}

/** Storage hosts' error codes (thrown outside the engine, e.g. while opening OPFS handles). */
const HOST_CODES: Readonly<Record<string, ErrorCode>> = {
  ELOCKED: 'LEVEL_LOCKED',
  NoModificationAllowedError: 'LEVEL_LOCKED',
  ENOENT: 'LEVEL_NOT_FOUND',
  NotFoundError: 'LEVEL_NOT_FOUND',
  EINVAL: 'LEVEL_INVALID_ARGUMENT',
  EROFS: 'LEVEL_NOT_SUPPORTED',
};

/** Hosts' codes for a full disk or an exhausted quota (kind `NoSpace`, code `LEVEL_IO_ERROR`);
 * NS_ERROR_FILE_NO_DEVICE_SPACE is what Firefox's OPFS throws at the quota, where Chromium
 * throws QuotaExceededError (the OPFS host maps it itself inside engine calls). */
const NO_SPACE: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT', 'QuotaExceededError', 'NS_ERROR_FILE_NO_DEVICE_SPACE']);

/** Any thrown value as a `StrataError` (unknown failures become `LEVEL_IO_ERROR`). */
export function toStrataError(err: unknown): StrataError {
  if (err instanceof StrataError) return err;
  const shape = toErrorShape(err);
  const code = (CODES.has(shape.code) ? shape.code : (HOST_CODES[shape.code] ?? 'LEVEL_IO_ERROR')) as ErrorCode;
  const kind = shape.kind ?? (NO_SPACE.has(shape.code) ? 'NoSpace' : undefined);
  return new StrataError(code, shape.message, { file: shape.file, offset: shape.offset, kind });
}

export function toErrorShape(err: unknown): ErrorShape {
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; name?: unknown; message?: unknown; file?: unknown; offset?: unknown; kind?: unknown };
    // DOM exceptions carry a numeric legacy `code`; their `name` is the meaningful one.
    const domName = typeof e.name === 'string' && e.name !== 'Error' && e.name !== 'StrataError' ? e.name : undefined;
    const shape: ErrorShape = {
      code: typeof e.code === 'string' ? e.code : (domName ?? 'LEVEL_IO_ERROR'),
      message: typeof e.message === 'string' ? e.message : String(err),
    };
    if (typeof e.file === 'string') shape.file = e.file;
    if (typeof e.offset === 'number') shape.offset = e.offset;
    if (typeof e.kind === 'string') shape.kind = e.kind;
    return shape;
  }
  return { code: 'LEVEL_IO_ERROR', message: String(err) };
}

export function invalidArgument(message: string): StrataError {
  return new StrataError('LEVEL_INVALID_ARGUMENT', message);
}
