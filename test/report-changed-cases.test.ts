// The changed-cases table a reviewer reads (issue 32), on the recorded H100 run of a planted 2 %
// slowdown of attention/triton_fa2 (paired-slow2-h100-run25): the headline-size cases and the
// largest change in time first, the launch-bound tails in one line, no column that no row fills,
// cells that do not wrap, and each symbol explained once under the tables.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/index.js';
import { judge } from '../src/pipeline/index.js';
import { compactTable, NBSP } from '../src/report/compact.js';
import { loadGz, ROOT } from './support/recorded.js';

const config = loadConfig(ROOT);
const comment = judge(loadGz('paired-slow2-h100-run25'), undefined, config, 'pr', { prNumber: 7 })
  .rendered.comment;
const section = comment.slice(comment.indexOf('### Changed cases'));
const rows = section
  .split('\n')
  .filter((l) => /^\| [+−±]\d/.test(l))
  .map((l) => l.slice(2, -2).split(' | '));

describe(
  'the changed cases of the recorded slow2 run (H100, 2026-11-24)',
  { timeout: 120_000 },
  () => {
    it('lists the headline case first, then the largest change in ms; the tails in one line', () => {
      expect(section.split('\n')[0]).toBe(
        '### Changed cases: correctness first, then the headline case and the largest change in time',
      );
      // What every row shares is said once, above the table; one case column with the axes left
      expect(section).toContain(
        '#### attention\n\nEvery row: variant triton\\_fa2 · Δ paired · B=16, H=96, S=4096.\n\n' +
          '| Δ | verdict | dtype, D, causal | ms | base | CI of Δ |\n',
      );
      expect(rows).toHaveLength(8);
      // attention's headline case: fp16, B=16, H=96, S=4096, D=128, causal=false
      expect(rows[0]![2]).toBe('fp16, 128, false');
      const costs = rows.slice(1).map((r) => Math.abs(Number(r[3]) - Number(r[4])));
      expect(costs).toEqual([...costs].sort((a, b) => b - a));
      expect(costs[0]).toBeGreaterThan(0.5); // 27.07 vs 26.53 ms
      expect(section).toContain(
        '- 🔴 18 slower cases of attention/triton\\_fa2 under 0.1 ms (launch-bound): +5.3 % … +56.0 %, at most 2.87 µs a call\n',
      );
    });

    it('keeps a number with its unit and an interval on one line; drops Sk and note', () => {
      expect(rows[0]![0]).toBe(`+2.6${NBSP}%`);
      expect(rows[0]![1]).toBe(`🔴${NBSP}SLOWER`);
      expect(rows[0]![5]).toBe(`+1.9${NBSP}%${NBSP}…${NBSP}+4.6${NBSP}%`);
      // the case wraps between its axes in the comment's column, and only there
      for (const row of rows)
        for (const cell of [...row.slice(0, 2), ...row.slice(3)]) expect(cell).not.toContain(' ');
      expect(section).not.toMatch(/\| Sk \||\| note \|/);
    });

    it('explains each symbol the tables show once, under them', () => {
      const legend =
        '<sub>Δ: the change in a call’s median time, this run against its base (> 0 is slower). ' +
        'paired: timed in pairs with the base revision in this job; vs baseline: against the stored run. ' +
        'CI of Δ: its 99 % confidence interval. ms, base: a call’s median time in this run and in its base. ' +
        '🔴 SLOWER: the whole interval is above the threshold. ' +
        'under 0.1 ms (launch-bound): head and base both take less; counted below the table, not listed.</sub>';
      expect(section).toContain(`\n${legend}\n`);
      expect(comment.split(legend)).toHaveLength(2);
    });
  },
);

describe(
  'the full report of the recorded 1 % run (H100 run 65, 2026-11-26)',
  { timeout: 120_000 },
  () => {
    const full = judge(loadGz('paired-slow1-h100-run65'), undefined, config, 'pr', { prNumber: 7 })
      .rendered.full;
    const changed = full.slice(
      full.indexOf('### Changed cases'),
      full.indexOf('<sub>Δ: the change'),
    );
    const legend = full.slice(
      full.indexOf('<sub>Δ: the change'),
      full.indexOf('</sub>', full.indexOf('<sub>Δ: the change')),
    );

    it("says a second pair's confirmation in a word, explained once in the legend", () => {
      const notes = changed
        .split('\n')
        .filter((l) => l.startsWith('| +'))
        .map((l) => l.split(' | ').at(-1));
      expect(notes).toHaveLength(8);
      // the second pair's interval, written as the CI of Δ is: ×1.0119 [1.0080, 1.0166] on the first
      expect(notes[0]).toBe('confirmed +0.8 % … +1.7 % |');
      for (const n of notes) expect(n).toMatch(/^confirmed [+−]\d\.\d % … [+−]\d\.\d % \|$/);
      expect(changed).not.toContain('second pair of worker processes');
      expect(legend).toContain(
        'confirmed LO … HI: measured again in a second pair of worker processes, which read the same verdict with that interval',
      );
    });

    it('keeps each case on one line: its axes joined by no-break spaces, the shared ones said once', () => {
      expect(changed).toContain(
        'Every row: variant triton\\_fa2 · Δ paired · B=16, H=96, S=4096.\n',
      );
      expect(changed).toContain(
        `| Δ | verdict | dtype,${NBSP}D,${NBSP}causal | ms | base | CI of Δ | note |`,
      );
      expect(changed).toContain(`| fp16,${NBSP}128,${NBSP}false |`);
    });
  },
);

describe('compactTable', () => {
  it('drops a column no row fills and keeps the words of variant and note wrapping', () => {
    const md = compactTable(
      ['variant', 'Δ', 'Sk', 'note'],
      [
        [{ trusted: 'a b' }, { trusted: '+1.0 % (±2.0 %)' }, '', 'too few samples'],
        [{ trusted: 'c' }, { trusted: '−3.0 %' }, { trusted: ' ' }, ''],
      ],
      ['l', 'r', 'l', 'l'],
    );
    expect(md).toBe(
      '| variant | Δ | note |\n| :- | -: | :- |\n' +
        `| a b | +1.0${NBSP}%${NBSP}(±2.0${NBSP}%) | too few samples |\n` +
        `| c | −3.0${NBSP}% | |`,
    );
  });
});
