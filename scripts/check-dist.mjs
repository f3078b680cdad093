// Rebuilds dist/ and fails when it differs from what git has: the runner runs the committed
// dist/ as is, so a source change without a rebuild would ship the old action.
import { execFileSync } from 'node:child_process';
import console from 'node:console';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8' });

execFileSync(process.execPath, ['scripts/bundle.mjs'], { cwd: root, stdio: 'inherit' });

const changed = git('status', '--porcelain', '--untracked-files=all', '--', 'dist').trimEnd();
if (changed !== '') {
  console.error('dist/ does not match the sources. Files that differ after `npm run build`:');
  console.error(changed);
  console.error(git('diff', '--stat', '--', 'dist').trimEnd());
  console.error('Run `npm run build` and commit dist/.');
  process.exit(1);
}
console.log('dist/ matches the sources.');
