// Checks mustache templates against a view's shape (src/report/view-shape.ts): every tag — a
// value, a section, an inverted section, a dotted name, a partial — must name a field of the
// context it is read in, the way mustache.js looks it up: the innermost section's object first,
// then each enclosing one out to the view, a dotted name walked whole in each context.
import Mustache from 'mustache';
import type { AnyShape } from '../../src/report/view-shape.js';

type Token = [string, string, number, number, Token[]?, number?];

export interface TemplateSet {
  /** file name as the problems name it (templates/…) → text */
  files: Map<string, string>;
  /** partial name → its file name in `files` */
  partials: Map<string, string>;
}

const isObject = (s: AnyShape | undefined): s is { readonly [key: string]: AnyShape } =>
  typeof s === 'object' && !Array.isArray(s);

/** A dotted name walked in one context: the field's shape, or undefined when it is not there. */
function walk(context: AnyShape, parts: string[]): AnyShape | undefined {
  let at: AnyShape | undefined = context;
  for (const [i, part] of parts.entries()) {
    if (isObject(at) && Object.hasOwn(at, part)) at = at[part];
    else if (part === 'length' && i === parts.length - 1 && (at === 'values' || Array.isArray(at)))
      at = 'value';
    else return undefined;
  }
  return at;
}

/** Where a tag's name resolves in the stack of contexts (innermost last), or undefined. */
export function resolve(stack: AnyShape[], name: string): AnyShape | undefined {
  if (name === '.') return stack.at(-1) === 'value' ? 'value' : undefined;
  const parts = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    const found = isObject(stack[i]) ? walk(stack[i]!, parts) : undefined;
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The context a section over a field of this shape renders its content in. */
function entered(shape: AnyShape): AnyShape {
  if (shape === 'values') return 'value';
  if (Array.isArray(shape)) return shape[0] as AnyShape;
  return shape;
}

const SIGIL: Record<string, string> = { name: '', '&': '{', '#': '#', '^': '^', '>': '> ' };

interface Walk {
  set: TemplateSet;
  problems: string[];
  /** every file reached (a template and the partials it includes) */
  reached: Set<string>;
  /** every field a tag named, as a path from the view: 'counts.passed', 'tiers[].next.name' */
  used: Set<string>;
}

function lineOf(text: string, at: number): number {
  return text.slice(0, at).split('\n').length;
}

function check(w: Walk, file: string, stack: AnyShape[], paths: string[], depth = 0): void {
  const text = w.set.files.get(file) as string;
  w.reached.add(file);
  const visit = (tokens: Token[], stack: AnyShape[], paths: string[]) => {
    for (const [type, name, start, , children] of tokens) {
      if (!(type in SIGIL)) continue;
      const tag =
        type === '&' && text.startsWith('{{{', start)
          ? `{{{${name}}}}`
          : `{{${SIGIL[type]}${name}}}`;
      const where = `${file}:${lineOf(text, start)}: ${tag}`;
      if (type === '>') {
        const partial = w.set.partials.get(name);
        if (partial === undefined) w.problems.push(`${where}: no partial named ${name}`);
        else if (depth < 8) check(w, partial, stack, paths, depth + 1);
        continue;
      }
      const shape = resolve(stack, name);
      if (shape === undefined) {
        const contexts =
          paths.length > 1 ? ` (inside ${paths.slice(1).reverse().join(' ← ')})` : '';
        w.problems.push(`${where}: the view has no field ${name} here${contexts}`);
        continue;
      }
      const path = pathOf(stack, paths, name);
      w.used.add(path);
      if (type === '#')
        visit(
          children ?? [],
          [...stack, entered(shape)],
          [...paths, path + (Array.isArray(shape) || shape === 'values' ? '[]' : '')],
        );
      if (type === '^') visit(children ?? [], stack, paths);
    }
  };
  visit(Mustache.parse(text) as Token[], stack, paths);
}

/** The field's path from the view, through the context that holds it. */
function pathOf(stack: AnyShape[], paths: string[], name: string): string {
  if (name === '.') return paths.at(-1) as string;
  const parts = name.split('.');
  for (let i = stack.length - 1; i >= 0; i--) {
    if (isObject(stack[i]) && walk(stack[i]!, parts) !== undefined) {
      return [paths[i], name].filter(Boolean).join('.');
    }
  }
  return name;
}

/**
 * Every tag of `entry` and the partials it includes checked against `view`: one line per tag the
 * view lacks ('templates/partials/summary.md.mustache:22: {{counts.pased}}: the view has no
 * field counts.pased here'), the files reached, and the fields the tags named.
 */
export function checkTemplate(set: TemplateSet, entry: string, view: AnyShape) {
  const w: Walk = { set, problems: [], reached: new Set(), used: new Set() };
  check(w, entry, [view], ['']);
  return { problems: w.problems, reached: w.reached, used: w.used };
}

/** Every field path of a shape ('counts.passed', 'tiers[].next.name'), sections included. */
export function fieldPaths(shape: AnyShape, prefix = ''): string[] {
  if (Array.isArray(shape)) return fieldPaths(shape[0] as AnyShape, `${prefix}[]`);
  if (!isObject(shape)) return [];
  return Object.entries(shape).flatMap(([key, inner]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return [path, ...fieldPaths(inner, path)];
  });
}

/**
 * Where a rendered view's value does not match its shape: a key the shape lacks, a list where a
 * value is declared, and so on ('view.baseline.extra: not in the view's type').
 */
export function shapeMismatches(value: unknown, shape: AnyShape, at = 'view'): string[] {
  if (value === undefined || value === null) return [];
  if (shape === 'value') {
    return ['string', 'number', 'boolean'].includes(typeof value)
      ? []
      : [`${at}: a ${describe(value)} where the type says a value`];
  }
  if (shape === 'values' || Array.isArray(shape)) {
    if (!Array.isArray(value)) return [`${at}: a ${describe(value)} where the type says a list`];
    const item: AnyShape = shape === 'values' ? 'value' : (shape[0] as AnyShape);
    return value.flatMap((v, i) => shapeMismatches(v, item, `${at}[${i}]`));
  }
  if (typeof value !== 'object' || Array.isArray(value)) {
    return [`${at}: a ${describe(value)} where the type says an object`];
  }
  return Object.entries(value).flatMap(([key, v]) =>
    Object.hasOwn(shape as object, key)
      ? shapeMismatches(v, (shape as Record<string, AnyShape>)[key]!, `${at}.${key}`)
      : [`${at}.${key}: not in the view's type`],
  );
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'list' : typeof value === 'object' ? 'object' : typeof value;
}
