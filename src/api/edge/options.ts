// The edge's options (docs/security.md, "Limits"): who is let in by name, whom the history
// believes about someone else, and how much one caller may ask. Each has a default and an
// environment variable; `fencer replica` has flags for the names.

export interface EdgeOptions {
  /**
   * Host names the replicas are reached by besides their own advertised URLs' (a Service's or a
   * proxy's DNS name): FENCER_ALLOWED_HOSTS, comma-separated. IP addresses are always allowed.
   */
  allowedHosts: readonly string[];
  /**
   * Users or groups (a token's subject or one of its groups) trusted to say whom they act for
   * with X-Remote-User: an authenticating front proxy (FENCER_FRONT_PROXIES, comma-separated;
   * default none).
   */
  frontProxies: readonly string[];
}

export const DEFAULT_EDGE: EdgeOptions = {
  allowedHosts: [],
  frontProxies: [],
};

export function edgeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): EdgeOptions {
  return {
    allowedHosts: listOf(env.FENCER_ALLOWED_HOSTS),
    frontProxies: listOf(env.FENCER_FRONT_PROXIES),
  };
}

export function listOf(text: string | undefined): string[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
