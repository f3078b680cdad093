// Section `diagnostics` (partials/diagnostics.md.mustache): every diagnostic of the run.
import { table } from '../lib/index.js';
import { breakableCell, trusted } from './cells.js';
import type { ReportInput } from './types.js';
import type { DiagnosticsView } from './view-types.js';

export function diagnosticsView(input: ReportInput): DiagnosticsView {
  const diags = input.results.diagnostics;
  const levelIcon = { error: '❌ error', warning: '⚠️ warning', info: 'ℹ️ info' } as const;
  const order = { error: 0, warning: 1, info: 2 } as const;
  const sorted = [...diags].sort((a, b) => order[a.level] - order[b.level]);
  return {
    count: diags.length,
    errors: diags.filter((d) => d.level === 'error').length,
    table: diags.length
      ? table(
          ['level', 'code', 'where', 'message', 'fix'],
          sorted.map((d) => [
            trusted(levelIcon[d.level]),
            d.code,
            [d.source, d.kernel && `${d.kernel}${d.variant ? `/${d.variant}` : ''}`]
              .filter(Boolean)
              .join(' '),
            breakableCell(d.message),
            d.fix ?? '',
          ]),
        )
      : '',
  };
}
