// GitHub annotations: a problem shown at its file and line, in the pull request's diff and on the
// run's page (the workflow commands `::error file=…,line=…,col=…::`). A config error at its
// field; a gate line about a kernel's variant at that variant in its kernel.yml; an unmet build
// expectation at its field of build.expect; a failed build at the compiler's first error when the
// log names a source file and line in the workspace. Paths are relative to the workspace (GitHub
// ignores others). Text from kernels, configs and compilers is untrusted: one line, capped.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { type Config, type FieldPath, type LoadedKernel, yamlLocator } from '../config/index.js';
import type { GateResult, GateSite } from '../judge/index.js';
import { InputError, type KernelgateResults } from '../results/index.js';

export type AnnotationLevel = 'error' | 'warning' | 'notice';

/** @actions/core's AnnotationProperties, the part kernelgate sets. */
export interface AnnotationProperties {
  title?: string;
  file?: string;
  startLine?: number;
  startColumn?: number;
}

export interface Annotation {
  level: AnnotationLevel;
  message: string;
  properties: AnnotationProperties;
}

export const MAX_MESSAGE_CHARS = 500;
export const MAX_TITLE_CHARS = 100;
/** GitHub shows 10 error annotations of a step; the step's failure message is one of them. */
export const MAX_ERROR_ANNOTATIONS = 9;

/** Untrusted text as one line: terminal colours and control characters out, capped at `max`. */
export function oneLine(text: string, max: number): string {
  const flat = text
    // eslint-disable-next-line no-control-regex
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\s+/g, ' ')
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x1f\x7f-\x9f]/g, '')
    .trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `file` relative to the workspace, with / between folders; undefined when it is outside. */
export function workspaceFile(workspace: string, file: string): string | undefined {
  const rel = relative(workspace, resolve(workspace, file));
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

function annotation(
  level: AnnotationLevel,
  message: string,
  title: string,
  where: Omit<AnnotationProperties, 'title'>,
): Annotation {
  const properties: AnnotationProperties = { title: oneLine(title, MAX_TITLE_CHARS), ...where };
  return { level, message: oneLine(message, MAX_MESSAGE_CHARS), properties };
}

/** The last annotation when some were left out: where the whole list is. */
function leftOut(n: number, where: string): Annotation {
  const message = `${n} more ${n === 1 ? 'problem' : 'problems'} not annotated: ${where}.`;
  return annotation('notice', message, 'kernelgate', {});
}

/** A config error's problems at their fields: kernelgate.yml and the kernels' kernel.yml. */
export function configAnnotations(error: unknown, workspace: string): Annotation[] {
  if (!(error instanceof InputError)) return [];
  const located = error.sites.flatMap((site) => {
    const file = workspaceFile(workspace, site.file);
    if (file === undefined) return [];
    const at = { file, startLine: site.line, startColumn: site.column };
    return [annotation('error', site.message, 'kernelgate: config error', at)];
  });
  const shown = located.slice(0, MAX_ERROR_ANNOTATIONS);
  if (located.length > shown.length) {
    shown.push(leftOut(located.length - shown.length, "the step's failure message lists them"));
  }
  return shown;
}

/** A compiler's first error line naming a source and a line: nvcc's `f.cu(42): error` or `f.cu:42:7: error`. */
const COMPILER_ERROR =
  /^(.+?\.(?:cu|cuh|cpp|cc|cxx|c|hpp|h))(?:\((\d+)\)|:(\d+)(?::(\d+))?):\s*(?:fatal )?error\b/m;

type Where = Omit<AnnotationProperties, 'title'> & { file: string };

/**
 * Where a gate site is in the workspace: its variant's field in kernel.yml, or its source;
 * undefined for a kernel the config does not hold or a file outside the workspace.
 */
function siteLocator(config: Config, results: KernelgateResults, workspace: string) {
  const locators = new Map<string, ReturnType<typeof yamlLocator> | undefined>();
  const inManifest = (kernel: LoadedKernel, path: FieldPath): Where | undefined => {
    const absolute = join(config.rootDir, kernel.file);
    const file = workspaceFile(workspace, absolute);
    if (file === undefined) return undefined;
    if (!locators.has(absolute)) {
      let text: string | undefined;
      try {
        text = readFileSync(absolute, 'utf8');
      } catch {
        text = undefined;
      }
      locators.set(absolute, text === undefined ? undefined : yamlLocator(text));
    }
    const at = locators.get(absolute)?.locate(path);
    return { file, startLine: at?.line, startColumn: at?.column };
  };
  const compilerError = (kernel: LoadedKernel, site: GateSite): Where | undefined => {
    const build = (results.builds ?? []).find(
      (b) => b.kernel === site.kernel && b.variant === site.variant,
    );
    const m = COMPILER_ERROR.exec(build?.log_tail ?? '');
    const file = m ? workspaceFile(workspace, resolve(kernel.dir, m[1]!.trim())) : undefined;
    if (!m || file === undefined) return undefined;
    const column = m[4] === undefined ? {} : { startColumn: Number(m[4]) };
    return { file, startLine: Number(m[2] ?? m[3]), ...column };
  };
  return (site: GateSite): Where | undefined => {
    const kernel = config.kernels.find((k) => k.manifest.name === site.kernel);
    if (kernel === undefined) return undefined;
    const i = kernel.manifest.variants.findIndex((v) => v.name === site.variant);
    if (i < 0) return inManifest(kernel, site.variant === '' ? ['module'] : ['variants']);
    if (site.title === 'build failed') {
      return compilerError(kernel, site) ?? inManifest(kernel, ['variants', i, 'build']);
    }
    if (site.expectation !== undefined) {
      const [key = '', item] = site.expectation.split(/:(.*)/s);
      const expect = kernel.manifest.variants[i]?.build?.['expect'] as
        Record<string, unknown> | undefined;
      const list = expect?.[key];
      const at = Array.isArray(list) && item !== undefined ? list.indexOf(item) : -1;
      const field = at >= 0 ? [key, at] : [key];
      return inManifest(kernel, ['variants', i, 'build', 'expect', ...field]);
    }
    return inManifest(kernel, ['variants', i, 'name']);
  };
}

/**
 * The warnings in order, each line with a place (every one of its sites in the workspace) as its
 * annotations the first time it comes, and nothing after; a line without one as it is.
 */
function inPlace(
  lines: string[],
  sites: Map<string, (Annotation | undefined)[]>,
): (Annotation | string)[] {
  const shown = new Set<string>();
  return lines.flatMap((line): (Annotation | string)[] => {
    const located = sites.get(line);
    if (located === undefined || located.some((a) => a === undefined)) return [line];
    if (shown.has(line)) return [];
    shown.add(line);
    return located as Annotation[];
  });
}

export interface GateAnnotations {
  /** the reasons' sites, one per kind and variant, capped */
  errors: Annotation[];
  /**
   * the gate's warnings in order: a line with a place as its annotations (once, should the same
   * line come twice), any other as the plain line
   */
  warnings: (Annotation | string)[];
}

/**
 * The gate's lines about kernel variants as annotations at their files. A reason is an error,
 * one per kind and variant (26 cases of one variant failing are one annotation that counts the
 * rest); the step's failure message lists every reason anyway. A warning line is shown at its
 * file instead of plainly. Lines whose file is not in the workspace stay as they were.
 */
export function gateAnnotations(
  gate: GateResult,
  results: KernelgateResults,
  config: Config,
  workspace: string,
): GateAnnotations {
  const where = siteLocator(config, results, workspace);
  const groups = new Map<string, { site: GateSite; at: Where; n: number }>();
  const warnings = new Map<string, (Annotation | undefined)[]>();
  for (const site of gate.sites) {
    const at = where(site);
    const title = `kernelgate: ${site.title}`;
    if (!site.fails) {
      const list = warnings.get(site.line) ?? [];
      list.push(at && annotation('warning', site.message, title, at));
      warnings.set(site.line, list);
      continue;
    }
    if (at === undefined) continue;
    const key = JSON.stringify([site.title, site.kernel, site.variant, site.expectation]);
    const group = groups.get(key);
    if (group) group.n++;
    else groups.set(key, { site, at, n: 1 });
  }
  const errors = [...groups.values()].map(({ site, at, n }) => {
    const more = n > 1 ? ` (and ${n - 1} more like it on ${site.kernel}/${site.variant})` : '';
    const message = `${oneLine(site.message, MAX_MESSAGE_CHARS - more.length)}${more}`;
    return annotation('error', message, `kernelgate: ${site.title}`, at);
  });
  const shown = errors.slice(0, MAX_ERROR_ANNOTATIONS);
  if (errors.length > shown.length) {
    shown.push(
      leftOut(
        errors.length - shown.length,
        "the step's failure message and the report list every reason",
      ),
    );
  }
  return { errors: shown, warnings: inPlace(gate.warnings, warnings) };
}
