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
  | 'LEVEL_ITERATOR_NOT_OPEN';

const CODES: ReadonlySet<string> = new Set<ErrorCode>([
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

  constructor(code: ErrorCode, message: string, extra?: { file?: string; offset?: number; cause?: unknown }) {
    super(message, extra?.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'StrataError';
    this.code = code;
    if (extra?.file !== undefined) (this as { file?: string }).file = extra.file;
    if (extra?.offset !== undefined) (this as { offset?: number }).offset = extra.offset;
  }
}

/** Serializable form of an error (crosses `postMessage`). */
export interface ErrorShape {
  code: string;
  message: string;
  file?: string;
  offset?: number;
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

/** Any thrown value as a `StrataError` (unknown failures become `LEVEL_IO_ERROR`). */
export function toStrataError(err: unknown): StrataError {
  if (err instanceof StrataError) return err;
  const shape = toErrorShape(err);
  const code = (CODES.has(shape.code) ? shape.code : (HOST_CODES[shape.code] ?? 'LEVEL_IO_ERROR')) as ErrorCode;
  return new StrataError(code, shape.message, { file: shape.file, offset: shape.offset });
}

export function toErrorShape(err: unknown): ErrorShape {
  if (typeof err === 'object' && err !== null) {
    const e = err as { code?: unknown; message?: unknown; file?: unknown; offset?: unknown };
    const shape: ErrorShape = {
      code: typeof e.code === 'string' ? e.code : 'LEVEL_IO_ERROR',
      message: typeof e.message === 'string' ? e.message : String(err),
    };
    if (typeof e.file === 'string') shape.file = e.file;
    if (typeof e.offset === 'number') shape.offset = e.offset;
    return shape;
  }
  return { code: 'LEVEL_IO_ERROR', message: String(err) };
}

export function invalidArgument(message: string): StrataError {
  return new StrataError('LEVEL_INVALID_ARGUMENT', message);
}
