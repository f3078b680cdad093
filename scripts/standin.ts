// Runs the GitHub REST stand-in (test/support/github-server.ts) as a process, for end-to-end runs
// of the bundled action on the GPU machine, where there is no GitHub and no test runner.
// Usage: node standin.mjs --url-file F --state-file F [--pr N ...] [--fault KIND[:OPERATION[:TIMES]] ...]
//   [--comment PR:LOGIN:BODY ...]
// --fault scripts a bad day: KIND is one of server-error, integration-forbidden, rate-limited,
// secondary-rate-limit (retry-after 1 s), hang (never answers), stall (headers, half a body, then
// nothing) or lost-answer (does it, then drops the connection); OPERATION an operation id such as
// issues/create-comment (default: any); TIMES how many requests meet it (default 1).
// --comment puts a comment on a pull request before the run, by LOGIN (a person; 'bot' for
// GITHUB_TOKEN's bot), e.g. one carrying kernelgate's marker.
// Writes its URL once listening, and its state (requests, spec violations, comments, issues)
// whenever it changes and on SIGTERM.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { BOT_USER, FAULT_KINDS, GitHubServer, type Fault } from '../test/support/github-server.js';

const { values } = parseArgs({
  options: {
    'url-file': { type: 'string' },
    'state-file': { type: 'string' },
    pr: { type: 'string', multiple: true },
    fault: { type: 'string', multiple: true },
    comment: { type: 'string', multiple: true },
  },
});
const urlFile = values['url-file'];
const stateFile = values['state-file'];
if (!urlFile || !stateFile) {
  console.error(
    'usage: standin --url-file F --state-file F [--pr N ...] [--fault KIND[:OPERATION[:TIMES]] ...] ' +
      '[--comment PR:LOGIN:BODY ...]',
  );
  process.exit(2);
}

function parseFault(spec: string): Fault {
  const [kind = '', operationId = '', times = '1'] = spec.split(':');
  if (!(FAULT_KINDS as readonly string[]).includes(kind) || !/^\d+$/.test(times)) {
    console.error(
      `--fault ${spec}: expected KIND[:OPERATION[:TIMES]], KIND one of ${FAULT_KINDS.join(', ')}`,
    );
    process.exit(2);
  }
  return {
    kind: kind as Fault['kind'],
    times: Number(times),
    ...(operationId !== '' ? { operationId } : {}),
  };
}

const server = new GitHubServer();
for (const pr of values.pr ?? []) server.addPullRequest({ number: Number(pr) });
for (const spec of values.fault ?? []) server.faults.push(parseFault(spec));
for (const spec of values.comment ?? []) {
  const [pr = '', login = '', ...body] = spec.split(':');
  const user =
    login === 'bot' ? BOT_USER : { login, id: 1000 + login.length, type: 'User' as const };
  server.addComment(Number(pr), body.join(':'), user);
}
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
