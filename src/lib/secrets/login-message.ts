/**
 * The login messages: what a wallet signs to log in to a secrets service. Shared by the client and the service,
 * and kept apart from both so the client loads none of the service's code.
 */

/**
 * The prefixes of the login messages every service accepts: the spec's, and the one the networks' services and
 * every official client sign (reference/network-job-plane.md §6). A used signature is refused under either.
 */
export const LOGIN_PREFIXES = ['service_secret_', 'nosana_secret_'] as const

/**
 * The prefix of the login message bound to a service reached at `host` (`name:port` as in its URL): a signature
 * of it logs in nowhere else. A service advertises the hosts it accepts in its /health document.
 */
export function boundLoginPrefix(host: string): string {
  return `gpunet_secret_${host.toLowerCase()}_`
}

/** The text a wallet signs to log in, under the spec's prefix unless told otherwise. */
export function loginMessage(timestamp: number, prefix: string = LOGIN_PREFIXES[0]): string {
  return `${prefix}${timestamp}`
}
