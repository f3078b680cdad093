// Runs the GitHub REST stand-in (test/support/github-server.ts) as a process, for end-to-end runs
// of the bundled action on the GPU machine, where there is no GitHub and no test runner.
// Usage: node standin.mjs --url-file F --state-file F [--pr N]
// Writes its URL once listening, and its state (requests, spec violations, comments, issues)
// whenever it changes and on SIGTERM.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GitHubServer } from '../test/support/github-server.js';

const { values } = parseArgs({
  options: {
    'url-file': { type: 'string' },
    'state-file': { type: 'string' },
    pr: { type: 'string', multiple: true },
  },
});
const urlFile = values['url-file'];
const stateFile = values['state-file'];
if (!urlFile || !stateFile) {
  console.error('usage: standin --url-file F --state-file F [--pr N ...]');
  process.exit(2);
}

const server = new GitHubServer();
for (const pr of values.pr ?? []) server.addPullRequest({ number: Number(pr) });
const url = await server.start();

let written = -1;
const dump = () => {
  if (written === server.requests.length) return;
  written = server.requests.length;
  const state = {
    requests: server.requests,
    violations: server.violations,
    comments: server.comments,
    issues: server.issues,
  };
  writeFileSync(stateFile, JSON.stringify(state, null, 2) + '\n');
};
dump();
const timer = setInterval(dump, 100);
const stop = async () => {
  clearInterval(timer);
  written = -1;
  dump();
  await server.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
writeFileSync(urlFile, url);
console.log(`github stand-in listening on ${url}`);
