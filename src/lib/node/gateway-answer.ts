/**
 * The header on every answer the gateway gives itself (never on a job service's: taken off theirs), naming why:
 * `not-ready`, `no-service`, `unreachable`, `refused`, `invalid-answer` (the service's answer was not HTTP that can
 * be passed on: a status outside 200-599, a header Node refuses to parse or send) or (a deployment's stable URL with
 * no replica ready) `no-replica`, or (one starting from zero, past its hold bounds) `starting`, or (a network name with no member serving it, as frps answers) `no-member`. A client waiting for a service counts any other answer as the service's, even its
 * 404.
 */
export const GATEWAY_ANSWER_HEADER = 'x-gpunet-gateway'

/** Why the localnet's gateway answered a request itself (its GATEWAY_ANSWER_HEADER), or null for a service's answer. */
export function gatewayAnswer(headers: Record<string, string | string[] | undefined>): string | null {
  const value = headers[GATEWAY_ANSWER_HEADER]
  return typeof value === 'string' ? value : null
}
