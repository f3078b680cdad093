// Whom this token writes as, so that kernelgate edits and deletes only its own comments and
// issues: a marker in a body is no proof (anyone can paste it, another app among them).
//
// - a personal access token: GET /user answers its login;
// - an app installation token (GITHUB_TOKEN is one, of the GitHub Actions app, and writes as
//   'github-actions[bot]'; any other app writes as '<slug>[bot]'): GitHub refuses GET /user with
//   403 "Resource not accessible by integration", and GraphQL's `viewer` answers the app's bot;
// - what this token has just created names it too (`user.login` of the answer), so a run that
//   posted never needs to ask.
//
// A lookup that fails (an outage, no answer) is not a failure of publishing: the login is unknown,
// nothing marked is taken as kernelgate's (so nothing is edited or deleted), and a report is
// posted anew; its answer then names the login.
import { describeGitHubError, type GitHubClient, isIntegrationForbidden } from './github.js';

/** The login GitHub shows on what this token writes; undefined when it could not be found out. */
export type TokenLogin = string | undefined;

const VIEWER_QUERY = 'query { viewer { login } }';

async function lookUp(client: GitHubClient): Promise<string> {
  try {
    return (await client.rest.users.getAuthenticated()).data.login;
  } catch (error) {
    if (!isIntegrationForbidden(error)) throw error;
  }
  const answer = await client.graphql<{ viewer: { login: string } }>(VIEWER_QUERY);
  return answer.viewer.login;
}

export interface TokenIdentity {
  /** The token's login, looked up once; undefined (and one warning) when the lookup failed. */
  login(): Promise<TokenLogin>;
  /** What the token has just created names its login: no lookup is needed any more. */
  learn(user: { login: string } | null | undefined): void;
  /** True when `user` is the token's own login (GitHub's logins ignore case). */
  owns(login: TokenLogin, user: { login: string } | null | undefined): boolean;
}

export function tokenIdentity(
  client: GitHubClient,
  warn: (message: string) => void,
): TokenIdentity {
  let known: Promise<TokenLogin> | undefined;
  return {
    login: () => {
      known ??= lookUp(client).catch((error: unknown) => {
        warn(
          `Could not tell which account this token writes as (${describeGitHubError(error).replace(/\.$/, '')}): ` +
            `kernelgate writes its report anew, and edits or deletes a comment or issue that carries its marker ` +
            `only once the answer to that write names the account.`,
        );
        return undefined;
      });
      return known;
    },
    learn: (user) => {
      if (user?.login) known = Promise.resolve(user.login);
    },
    owns: (login, user) =>
      login !== undefined &&
      user?.login !== undefined &&
      user.login.toLowerCase() === login.toLowerCase(),
  };
}
