// The templates' contract (issue 29): every tag of templates/*.mustache names a field of the view's
// type (src/report/view-types.ts, mirrored as data in view-shape.ts), so a renamed field cannot
// blank a section silently; and the views built from the recorded runs hold no field the type
// lacks, so the type is what the templates are given.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import type { ReportInput, ViewOptions } from '../src/report/types.js';
import { buildView, digestOf } from '../src/report/view.js';
import { REPORT_VIEW_SHAPE, TRUNCATED_VIEW_SHAPE } from '../src/report/view-shape.js';
import { loadGz, ROOT } from './support/recorded.js';
import {
  checkTemplate,
  fieldPaths,
  shapeMismatches,
  type TemplateSet,
} from './support/template-view.js';

const TEMPLATES = join(ROOT, 'templates');

function templateSet(replace?: { file: string; from: string; to: string }): TemplateSet {
  const files = new Map<string, string>();
  const partials = new Map<string, string>();
  const read = (dir: string, name: string) => {
    const file = `templates/${dir}${name}`;
    let text = readFileSync(join(TEMPLATES, dir, name), 'utf8');
    if (replace?.file === file) {
      expect(text).toContain(replace.from);
      text = text.replaceAll(replace.from, replace.to);
    }
    files.set(file, text);
    return file;
  };
  for (const name of readdirSync(TEMPLATES).filter((f) => f.endsWith('.mustache'))) read('', name);
  for (const name of readdirSync(join(TEMPLATES, 'partials'))) {
    partials.set(name.replace(/\.md\.mustache$/, ''), read('partials/', name));
  }
  return { files, partials };
}

const MAIN = ['templates/pr-comment.md.mustache', 'templates/nightly.md.mustache'];
const TRUNCATED = 'templates/partials/truncated.md.mustache';

function checkAll(set: TemplateSet) {
  const results = [
    ...MAIN.map((file) => checkTemplate(set, file, REPORT_VIEW_SHAPE)),
    checkTemplate(set, TRUNCATED, TRUNCATED_VIEW_SHAPE),
  ];
  return {
    // the partials both reports include are checked once for each: one line per problem
    problems: [...new Set(results.flatMap((r) => r.problems))],
    reached: new Set(results.flatMap((r) => [...r.reached])),
    used: new Set(results.slice(0, MAIN.length).flatMap((r) => [...r.used])),
  };
}

describe('every tag of every template names a field of the view', () => {
  it('holds for the templates as they are, and every template file is checked', () => {
    const set = templateSet();
    const { problems, reached } = checkAll(set);
    expect(problems).toEqual([]);
    expect([...set.files.keys()].filter((f) => !reached.has(f))).toEqual([]);
    expect(set.files.size).toBeGreaterThanOrEqual(18);
  });

  it('names the template, the line and the tag of a misspelt value', () => {
    const set = templateSet({
      file: 'templates/partials/summary.md.mustache',
      from: '✅ {{counts.passed}} pass',
      to: '✅ {{counts.pased}} pass',
    });
    expect(checkAll(set).problems).toEqual([
      'templates/partials/summary.md.mustache:16: {{counts.pased}}: the view has no field counts.pased here',
    ]);
  });

  it('names a misspelt section, inverted section and unescaped value, inside their sections', () => {
    const cases: [string, string, string, string][] = [
      [
        'templates/partials/findings.md.mustache',
        'findings.blocking.length}}',
        'findings.blockng.length}}',
        'templates/partials/findings.md.mustache:4: {{#findings.blockng.length}}: the view has no field findings.blockng.length here (inside findings.any)',
      ],
      [
        'templates/partials/changes.md.mustache',
        '{{^changes.none}}',
        '{{^changes.nothing_}}{{/changes.nothing_}}{{^changes.none}}',
        'templates/partials/changes.md.mustache:22: {{^changes.nothing_}}: the view has no field changes.nothing_ here',
      ],
      [
        'templates/partials/why.md.mustache',
        '{{{table}}}',
        '{{{tabel}}}',
        'templates/partials/why.md.mustache:12: {{{tabel}}}: the view has no field tabel here (inside why.variants[] ← why.evidence ← why)',
      ],
      // A field of an enclosing section is found (mustache looks outward) ...
      [
        'templates/partials/tiers.md.mustache',
        '{{#grade}} (grade {{grade}}){{/grade}}.{{/current}}',
        '{{#grade}} (grade {{grade}}){{/grade}}.{{title}}{{/current}}',
        '',
      ],
      // ... but not a field of another section's object.
      [
        'templates/partials/tiers.md.mustache',
        '{{#top}}',
        '{{#requiredMs}}{{/requiredMs}}{{#top}}',
        'templates/partials/tiers.md.mustache:16: {{#requiredMs}}: the view has no field requiredMs here (inside tiers[] ← hasTiers ← full)',
      ],
      [
        'templates/partials/history.md.mustache',
        '{{{.}}}.\n{{/history.machine}}',
        '{{{.}}}.{{{boundaries.lenght}}}\n{{/history.machine}}',
        'templates/partials/history.md.mustache:23: {{{boundaries.lenght}}}: the view has no field boundaries.lenght here (inside history.machine[] ← history)',
      ],
      [
        'templates/pr-comment.md.mustache',
        '{{> summary}}',
        '{{> sumary}}',
        'templates/pr-comment.md.mustache:4: {{> sumary}}: no partial named sumary',
      ],
    ];
    for (const [file, from, to, problem] of cases) {
      expect(checkAll(templateSet({ file, from, to })).problems).toEqual(problem ? [problem] : []);
    }
  });
});

describe('the view holds only what the templates read', () => {
  it('every field of the view type is read by a tag, but the gate counts passed whole', () => {
    const { used } = checkAll(templateSet());
    const read = (path: string) =>
      [...used].some((u) => u === path || u.startsWith(`${path}.`) || u.startsWith(`${path}[`));
    expect(fieldPaths(REPORT_VIEW_SHAPE).filter((p) => !read(p))).toEqual(['counts.untimed']);
  });
});

const config = loadConfig(ROOT);
const OPTIONS: ViewOptions[] = [
  { full: true, rowsPerVariant: undefined, maxRows: undefined, examples: true, logTails: true },
  {
    full: false,
    rowsPerVariant: 10,
    maxRows: config.report.maxRows,
    examples: true,
    logTails: false,
  },
];
/** Recorded runs: the run, its stored baseline (none: paired), the kind, its stored history. */
const RUNS: [string, string | undefined, ReportInput['kind'], string[]][] = [
  ['pr', 'push', 'pr', []],
  ['broken', 'main-1355', 'pr', []],
  ['slowed', 'main-1355', 'pr', []],
  ['nightly', 'main-1355', 'nightly', ['main-1355']],
  ['paired-slow2-h100', undefined, 'pr', []],
  ['faults-h100-run54', undefined, 'pr', []],
  ['nightly-slow2-h100-run33', undefined, 'nightly', ['nightly-h100-run32']],
];

describe(
  'the views of the recorded runs hold only what the view type declares',
  { timeout: 240_000 },
  () => {
    it.each(RUNS)('%s', (name, base, kind, stored) => {
      const results = loadGz(name);
      const baseline = base ? loadGz(base) : undefined;
      const history = stored.map((r) => loadGz(r));
      const context = { prNumber: 7, runUrl: 'https://github.com/octo/kernels/actions/runs/42' };
      const j = judge(results, baseline, config, kind, context, history);
      const input: ReportInput = {
        kind,
        results,
        ...(baseline ? { baseline } : {}),
        comparison: j.comparison,
        tiers: j.tiers,
        gate: j.verdict,
        config,
        context,
        ...(history.length ? { history } : {}),
      };
      const digest = digestOf(input);
      for (const opts of OPTIONS) {
        expect(shapeMismatches(buildView(input, opts, digest), REPORT_VIEW_SHAPE)).toEqual([]);
      }
    });

    it('names a field the type lacks and a field of the wrong kind', () => {
      const results = loadGz('slowed');
      const baseline = loadGz('main-1355');
      const j = judge(results, baseline, config, 'pr');
      const input: ReportInput = {
        ...{ kind: 'pr', results, baseline, comparison: j.comparison, tiers: j.tiers },
        ...{ gate: j.verdict, config },
      };
      const view = buildView(input, OPTIONS[0]!, digestOf(input));
      expect(view.changedCases.length).toBeGreaterThan(0);
      const planted = {
        ...view,
        baselineCompared: true,
        run: { ...view.run, sha: 'abc' },
        changedCases: [{ ...view.changedCases[0], tails: 'one' }],
        notes: [{ text: 'x' }],
      };
      expect(shapeMismatches(planted, REPORT_VIEW_SHAPE)).toEqual([
        "view.run.sha: not in the view's type",
        'view.changedCases[0].tails: a string where the type says a list',
        'view.notes[0]: a object where the type says a value',
        "view.baselineCompared: not in the view's type",
      ]);
    });
  },
);
