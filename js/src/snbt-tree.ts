// NBT as a typed tree for editors: the tree the engine gives for SNBT text (`World.snbtTree`,
// src/bedrock/snbt_tree.rs), printed back as SNBT (`printSnbtTree`), and the literals of values
// typed by a person (`leafLiteral`, `leafFromInput`). The engine stays the only SNBT parser:
// a printed tree goes back through it (`World.setNbt` / `setLevelDat`).
//
// Invariants: a leaf keeps the exact literal the engine gave until it is edited, so printing an
// unedited tree parses to the same tags (byte-identical NBT, every float bit pattern); an edit
// produces a literal only from input that fits its type (integer ranges, finite or named
// floats, array elements each in range), else it throws with what is wrong; compounds keep
// their entry order and duplicate names, lists their element type (an empty one too).

/** NBT type words, as the engine's SNBT writes them. */
export type SnbtType =
  | 'byte'
  | 'short'
  | 'int'
  | 'long'
  | 'float'
  | 'double'
  | 'string'
  | 'byte_array'
  | 'int_array'
  | 'long_array'
  | 'list'
  | 'compound';

export type SnbtLeafType = Exclude<SnbtType, 'list' | 'compound'>;

export type SnbtNode =
  | { t: 'compound'; v: Array<[string, SnbtNode]> }
  | { t: 'list'; e: SnbtType | 'end'; v: SnbtNode[] }
  | { t: SnbtLeafType; s: string; v?: string; n?: number };

export interface SnbtRoot {
  name: string;
  tag: SnbtNode;
}

export const SNBT_TYPES: readonly SnbtType[] = ['byte', 'short', 'int', 'long', 'float', 'double', 'string', 'byte_array', 'int_array', 'long_array', 'list', 'compound'];

const INT_RANGE: Record<string, [bigint, bigint]> = {
  byte: [-128n, 127n],
  short: [-32768n, 32767n],
  int: [-2147483648n, 2147483647n],
  long: [-9223372036854775808n, 9223372036854775807n],
};
const SUFFIX: Record<string, string> = { byte: 'b', short: 's', int: '', long: 'L', float: 'f', double: 'd' };
const ARRAY: Record<string, { prefix: string; elem: string }> = {
  byte_array: { prefix: 'B', elem: 'byte' },
  int_array: { prefix: 'I', elem: 'int' },
  long_array: { prefix: 'L', elem: 'long' },
};

/** `s` as an SNBT string literal (the engine's escapes). */
export function quoteSnbt(s: string): string {
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0)!;
    if (c === '"') out += '\\"';
    else if (c === '\\') out += '\\\\';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\u${code.toString(16).padStart(4, '0')}`;
    else out += c;
  }
  return `${out}"`;
}

function nameSnbt(name: string): string {
  return name !== '' && /^[A-Za-z0-9_\-.+]+$/.test(name) ? name : quoteSnbt(name);
}

function printNode(node: SnbtNode, depth: number): string {
  const pad = (d: number): string => '  '.repeat(d);
  if (node.t === 'compound') {
    if (node.v.length === 0) return '{}';
    return `{\n${node.v.map(([n, c]) => `${pad(depth + 1)}${nameSnbt(n)}: ${printNode(c, depth + 1)}`).join(',\n')}\n${pad(depth)}}`;
  }
  if (node.t === 'list') {
    if (node.v.length === 0) return node.e === 'end' ? '[]' : `[${node.e};]`;
    const nested = node.e === 'compound' || node.e === 'list';
    if (!nested) return `[${node.v.map((c) => printNode(c, depth + 1)).join(', ')}]`;
    return `[\n${node.v.map((c) => `${pad(depth + 1)}${printNode(c, depth + 1)}`).join(',\n')}\n${pad(depth)}]`;
  }
  return node.s;
}

/** The SNBT text of a tree (the engine's layout: two-space indents, one root per line). */
export function printSnbtTree(roots: SnbtRoot[]): string {
  return `${roots.map((r) => (r.name === '' ? '' : `${quoteSnbt(r.name)}: `) + printNode(r.tag, 0)).join('\n')}\n`;
}

/** What a person edits for a leaf: its number without the type suffix, a string's text, an
 * array's elements as `1, 2, 3`. */
export function leafText(node: Extract<SnbtNode, { s: string }>): string {
  if (node.t === 'string') return node.v ?? '';
  const array = ARRAY[node.t];
  if (array) {
    const inner = node.s.slice(3, -1).trim();
    return inner === '' ? '' : inner.split(',').map((x) => stripSuffix(x.trim(), ARRAY[node.t]!.elem)).join(', ');
  }
  return stripSuffix(node.s, node.t);
}

function stripSuffix(lit: string, type: string): string {
  const suf = SUFFIX[type] ?? '';
  return suf !== '' && lit.endsWith(suf) ? lit.slice(0, -suf.length) : lit;
}

function integer(text: string, type: string): string {
  const t = text.trim();
  if (!/^[-+]?\d+$/.test(t)) throw new Error(`${type}: "${text}" is not a whole number`);
  const n = BigInt(t);
  const [lo, hi] = INT_RANGE[type]!;
  if (n < lo || n > hi) throw new Error(`${type}: ${t} is outside ${lo}..${hi}`);
  return `${n}${SUFFIX[type]}`;
}

function decimal(text: string, type: 'float' | 'double'): string {
  const t = text.trim();
  const payload = (type === 'float' ? /^NaN_([0-9a-fA-F]{8})$/ : /^NaN_([0-9a-fA-F]{16})$/).exec(t);
  if (payload) {
    // A NaN's bits: every exponent bit set and a mantissa that is not zero.
    const bits = BigInt(`0x${payload[1]}`);
    const [exp, mant] = type === 'float' ? [0x7f800000n, 0x7fffffn] : [0x7ff0000000000000n, 0xfffffffffffffn];
    if ((bits & exp) !== exp || (bits & mant) === 0n) throw new Error(`${type}: ${t} is not a NaN's bit pattern`);
    return `${t}${SUFFIX[type]}`;
  }
  const named = /^(-?Infinity|NaN)$/.test(t);
  if (!named && !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(t)) throw new Error(`${type}: "${text}" is not a number`);
  if (type === 'float' && !named && !Number.isFinite(Math.fround(Number(t)))) throw new Error(`float: ${t} is beyond a float's range`);
  if (type === 'double' && !named && !Number.isFinite(Number(t))) throw new Error(`double: ${t} is beyond a double's range`);
  return `${t}${SUFFIX[type]}`;
}

/** The literal of a leaf of `type` from what a person typed (see `leafText`); throws with
 * what is wrong when it does not fit the type. */
export function leafLiteral(type: SnbtLeafType, text: string): string {
  if (type === 'string') return quoteSnbt(text);
  if (type === 'float' || type === 'double') return decimal(text, type);
  const array = ARRAY[type];
  if (array) {
    const items = text.trim() === '' ? [] : text.split(',').map((x) => integer(x, array.elem));
    return items.length === 0 ? `[${array.prefix};]` : `[${array.prefix}; ${items.join(', ')}]`;
  }
  return integer(text, type);
}

/** A leaf of `type` holding what a person typed (throws as `leafLiteral`). */
export function leafFromInput(type: SnbtLeafType, text: string): SnbtNode {
  const s = leafLiteral(type, text);
  if (type === 'string') return { t: type, s, v: text };
  const array = ARRAY[type];
  if (array) return { t: type, s, n: text.trim() === '' ? 0 : text.split(',').length };
  return { t: type, s };
}

/** A new value of `type` for an added tag or list element: zero, empty text, empty array,
 * list or compound. */
export function emptyNode(type: SnbtType): SnbtNode {
  if (type === 'compound') return { t: 'compound', v: [] };
  if (type === 'list') return { t: 'list', e: 'end', v: [] };
  if (type === 'string') return leafFromInput('string', '');
  if (ARRAY[type]) return leafFromInput(type, '');
  return leafFromInput(type, '0');
}
