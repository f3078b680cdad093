#!/usr/bin/env node
// Releases kernelgate: node scripts/release.mjs [X.Y.Z] [--dry-run] [--push]
//
//   1. the working tree is clean and HEAD is a commit that is not tagged vX.Y.Z yet;
//   2. X.Y.Z (default: package.json's version) equals package.json's version;
//   3. every test passes (bash scripts/test.sh);
//   4. dist/ rebuilt from the sources equals the committed dist/ (npm run check-dist);
//   5. tags HEAD vX.Y.Z (annotated) and moves the major tag vX to it, which is what workflows
//      name (`uses: kernelgate/kernelgate@v0`);
//   6. with --push, pushes both tags to origin (vX with --force: it moves).
//
// --dry-run checks 1 and 2 and prints the commands of 3 to 6 without running them.
// KERNELGATE_RELEASE_TEST_CMD and KERNELGATE_RELEASE_BUILD_CMD replace the commands of 3 and 4
// (the release test runs the script in a scratch repository with stand-ins).
import { execFileSync, execSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import process from 'node:process';

const argv = process.argv.slice(2);
const dryRun = argv.includes('--dry-run');
const push = argv.includes('--push');
const unknown = argv.filter((a) => a.startsWith('-') && a !== '--dry-run' && a !== '--push');
const positional = argv.filter((a) => !a.startsWith('-'));

function fail(message) {
  console.error(`release: ${message}`);
  process.exit(1);
}

const git = (...args) => execFileSync('git', args, { encoding: 'utf8' }).trimEnd();
const tagExists = (tag) => {
  try {
    git('rev-parse', '--verify', '--quiet', `refs/tags/${tag}`);
    return true;
  } catch {
    return false;
  }
};

if (unknown.length > 0 || positional.length > 1) {
  fail(`usage: node scripts/release.mjs [X.Y.Z] [--dry-run] [--push]; got ${argv.join(' ')}`);
}
const pkgVersion = JSON.parse(readFileSync('package.json', 'utf8')).version;
const version = positional[0]?.replace(/^v/, '') ?? pkgVersion;
const semver = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
if (!semver) fail(`version "${version}" is not X.Y.Z`);
if (version !== pkgVersion) {
  fail(`package.json says version ${pkgVersion}, not ${version}; commit the bump first`);
}
const tag = `v${version}`;
const major = `v${semver[1]}`;

const dirty = git('status', '--porcelain', '--untracked-files=normal');
if (dirty !== '') fail(`the working tree is not clean; commit or remove first:\n${dirty}`);
if (tagExists(tag)) fail(`tag ${tag} exists already (${git('rev-parse', '--short', `${tag}^{}`)})`);
const head = git('rev-parse', 'HEAD');
const previous = tagExists(major) ? git('rev-parse', '--short', `${major}^{}`) : null;

const steps = [
  ['tests', process.env.KERNELGATE_RELEASE_TEST_CMD ?? 'bash scripts/test.sh'],
  [
    'dist/ rebuilt equals the committed dist/',
    process.env.KERNELGATE_RELEASE_BUILD_CMD ?? 'npm run --silent check-dist',
  ],
  [`tag ${tag}`, `git tag -a ${tag} -m "kernelgate ${tag}" ${head}`],
  [
    `move ${major} (${previous ?? 'new'} -> ${head.slice(0, 7)})`,
    `git tag -f ${major} ${tag}^{commit}`,
  ],
];
if (push) {
  steps.push([`push ${tag}`, `git push origin refs/tags/${tag}`]);
  steps.push([`push ${major}`, `git push --force origin refs/tags/${major}`]);
}

console.log(`release ${tag} of ${head.slice(0, 7)}${dryRun ? ' (dry run: nothing is run)' : ''}`);
for (const [what, command] of steps) {
  console.log(`==> ${what}: ${command}`);
  if (dryRun) continue;
  try {
    execSync(command, { stdio: 'inherit' });
  } catch {
    fail(`${what} failed: ${command}`);
  }
  // The tests and the build must leave the tree as it was: what is tagged is what was tested.
  const after = git('status', '--porcelain', '--untracked-files=normal');
  if (after !== '') fail(`${what} changed the working tree:\n${after}`);
}
if (!dryRun && !push) {
  console.log(`tagged; publish with: git push origin ${tag} && git push --force origin ${major}`);
}
