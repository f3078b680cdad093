// Running external commands (nvcc, cuobjdump, nvidia-smi, python) behind one small interface,
// so the build and doctor stages can be driven by recorded tool output in tests.
import { getExecOutput } from '@actions/exec';

export interface ExecResult {
  /** Process exit status; 127 when the executable could not be found, as a shell would say. */
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  cwd?: string;
  /** Added to (and overriding) the parent's environment, never replacing it. */
  env?: Record<string, string>;
}

export interface Exec {
  run(command: string, args: readonly string[], options?: ExecOptions): Promise<ExecResult>;
}

/** The exit status a shell uses for "command not found"; stages treat it as "tool missing". */
export const NOT_FOUND_EXIT_CODE = 127;

/**
 * The job's credentials as a JavaScript action sees them: the 'token' input, tokens a workflow
 * may export, the cache and artifact service's token, and what requests an OIDC token. A tool
 * kernelgate starts may be the pull request's code (the harness runs its kernels): none of these
 * reach it.
 */
export const CREDENTIAL_VARIABLES = [
  'INPUT_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'ACTIONS_RUNTIME_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_TOKEN',
  'ACTIONS_ID_TOKEN_REQUEST_URL',
] as const;

/**
 * The parent's environment (defined values only, the job's credentials left out) with `extra`
 * added and overriding.
 */
export function childEnv(
  extra: Record<string, string> = {},
  parent: Record<string, string | undefined> = process.env,
): Record<string, string> {
  const env: Record<string, string> = {};
  const withheld = new Set<string>(CREDENTIAL_VARIABLES);
  for (const [key, value] of Object.entries(parent)) {
    if (value !== undefined && !withheld.has(key)) env[key] = value;
  }
  return Object.assign(env, extra);
}

/** Real processes through @actions/exec; a missing executable is a result, not a throw. */
export function actionsExec(): Exec {
  return {
    async run(command, args, options = {}) {
      const env = childEnv(options.env);
      try {
        const out = await getExecOutput(command, [...args], {
          cwd: options.cwd,
          env,
          silent: true,
          ignoreReturnCode: true,
        });
        return { exitCode: out.exitCode, stdout: out.stdout, stderr: out.stderr };
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        if (/Unable to locate executable file|ENOENT/.test(message)) {
          return { exitCode: NOT_FOUND_EXIT_CODE, stdout: '', stderr: `${command}: not found` };
        }
        throw error;
      }
    },
  };
}

/** One recorded answer: `match` is compared with `command + ' ' + args.join(' ')`. */
export interface ScriptedResponse {
  match: string | RegExp;
  result: Partial<ExecResult>;
}

export interface ScriptedExec extends Exec {
  /** Every command line asked for, in order, for assertions on what a stage ran. */
  calls: string[];
}

/**
 * An Exec that answers from recorded tool output (first matching response wins); anything not
 * recorded answers as a missing executable, the way a machine without that tool would.
 */
export function scriptedExec(responses: readonly ScriptedResponse[]): ScriptedExec {
  const calls: string[] = [];
  return {
    calls,
    async run(command, args) {
      const line = [command, ...args].join(' ');
      calls.push(line);
      const hit = responses.find((r) =>
        typeof r.match === 'string' ? r.match === line : r.match.test(line),
      );
      if (!hit)
        return { exitCode: NOT_FOUND_EXIT_CODE, stdout: '', stderr: `${command}: not found` };
      return { exitCode: 0, stdout: '', stderr: '', ...hit.result };
    },
  };
}
