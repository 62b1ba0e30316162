/**
 * Who a deployment API request comes from: the owner's wallet headers, as the network's kit makes them
 * (auth-header.ts), or an API key (`Authorization: Bearer gpn_...`, api-keys.ts). Everything here reads untrusted
 * headers: lengths and shapes are checked before anything is decoded, and no refusal echoes a signature or a key.
 */
import {decodeBase58} from '../../text/base58-text.js'
import {verifySignature} from '../../keys/ed25519.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {type RequestHeaders, singleHeader} from '../../http/request-headers.js'
import {type ApiKeyRows, type ApiKeys, createApiKeys} from '../store/api-keys.js'
import {API_AUTH_MESSAGE, API_AUTH_SEPARATOR, MAX_CLOCK_SKEW_MS, TIMED_HEADER_EXPIRY_S} from '../auth-header.js'

/** An authenticated caller: the owner it acts for and how it proved so. */
export interface ApiIdentity {
  owner: string
  via: 'wallet' | 'api-key'
}

/** The deployment API's authentication. */
export interface ApiAuth {
  /** The caller of a request; throws a GpunetError with exit code 6 (HTTP 401) when it is not authenticated. */
  authenticate(headers: RequestHeaders): Promise<ApiIdentity>
  apiKeys: ApiKeys
}

/**
 * No header we accept is longer: the wallet form is at most 23 + 1 + 88 + 1 + 16 characters, a key 47 plus
 * `Bearer `. Anything longer is refused before it is split.
 */
const MAX_AUTHORIZATION_CHARS = 256
/** The longest base58 address. */
const MAX_USER_ID_CHARS = 44

const MESSAGE_BYTES = Buffer.from(API_AUTH_MESSAGE, 'utf8')

const HOW =
  'send x-user-id: <your address> with authorization: NosanaApiAuthentication:<signature>[:<unix ms>] ' +
  'signed by that wallet, or Authorization: Bearer <API key>'

/** The authentication of a deployment API whose API keys are kept in `rows`; `now` is unix ms. */
export function createApiAuth(options: {rows: ApiKeyRows; now?: () => number}): ApiAuth {
  const now = options.now ?? Date.now
  const apiKeys = createApiKeys(options.rows, now)
  return {
    apiKeys,
    async authenticate(headers) {
      const authorization = onlyHeader(headers, 'authorization')
      const userId = onlyHeader(headers, 'x-user-id')
      if (authorization === undefined) throw refused('auth_missing', 'the request has no authorization header', HOW)
      if (authorization.length > MAX_AUTHORIZATION_CHARS) {
        throw refused('auth_malformed', 'the authorization header is too long to be a credential', HOW)
      }
      if (userId !== undefined && userId.length > MAX_USER_ID_CHARS) {
        throw refused('auth_malformed', 'the x-user-id header is too long to be an address', HOW)
      }
      const bearer = /^Bearer +(\S*) *$/i.exec(authorization)
      return bearer ? byApiKey(apiKeys, bearer[1] as string, userId) : byWallet(authorization, userId, now())
    },
  }
}

/** The caller an API key names; an x-user-id sent along must be the key's owner. */
async function byApiKey(apiKeys: ApiKeys, key: string, userId: string | undefined): Promise<ApiIdentity> {
  const found = await apiKeys.lookup(key)
  if (found === 'revoked') {
    throw refused(
      'api_key_revoked',
      'the API key has been revoked',
      'create another with `gpunet deployment api-key create`',
    )
  }
  if (found === 'unknown') {
    throw refused(
      'api_key_unknown',
      'the API key is not known to this deployment manager',
      'keys are gpn_ and 43 characters, made by `gpunet deployment api-key create` on this manager',
    )
  }
  if (userId !== undefined && userId !== found.owner) {
    throw refused(
      'auth_wrong_user',
      "x-user-id is not the API key's owner",
      'send the key alone, or with its owner as x-user-id',
    )
  }
  return {owner: found.owner, via: 'api-key'}
}

/**
 * The owner of wallet headers: `x-user-id`'s signature over exactly API_AUTH_MESSAGE, with an optional time part
 * no older than TIMED_HEADER_EXPIRY_S. The time part is not signed (the kit appends it after signing), so it only
 * ages a header as sent; the signature alone is the lasting credential the kit makes.
 */
function byWallet(authorization: string, userId: string | undefined, nowMs: number): ApiIdentity {
  const parts = authorization.split(API_AUTH_SEPARATOR)
  const [message, signature, time] = parts
  if (parts.length > 3 || !message || !signature) {
    throw refused(
      'auth_malformed',
      'the authorization header is not NosanaApiAuthentication:<signature>[:<unix ms>]',
      HOW,
    )
  }
  // Any other message is refused before its signature is looked at: a node-API or secrets login signature by
  // the same wallet must open nothing here.
  if (message !== API_AUTH_MESSAGE) {
    throw refused('auth_wrong_message', `the signed message is not ${API_AUTH_MESSAGE}`, HOW)
  }
  if (userId === undefined) {
    throw refused('auth_missing', 'the request has no x-user-id header (the address whose signature it carries)', HOW)
  }
  const owner = decodeBase58(userId, 'key')
  if (!owner) throw refused('auth_malformed', 'x-user-id is not a base58 address', HOW)
  const signatureBytes = decodeBase58(signature, 'signature')
  if (!signatureBytes) throw refused('auth_malformed', 'the signature is not 64 bytes in base58', HOW)
  if (time !== undefined) checkTimePart(time, nowMs)
  if (!verifySignature(signatureBytes, MESSAGE_BYTES, owner)) {
    throw refused('auth_bad_signature', `the signature is not x-user-id's over ${API_AUTH_MESSAGE}`, HOW)
  }
  return {owner: userId, via: 'wallet'}
}

/** Refuses a time part that is no unix ms, lies beyond MAX_CLOCK_SKEW_MS ahead, or is TIMED_HEADER_EXPIRY_S old. */
function checkTimePart(time: string, nowMs: number): void {
  if (!/^\d{1,16}$/.test(time)) {
    throw refused('auth_malformed', 'the time part of the authorization header is not a time in unix milliseconds', HOW)
  }
  const age = nowMs - Number(time)
  if (age < -MAX_CLOCK_SKEW_MS) {
    throw refused(
      'auth_future',
      "the authorization header's time part lies in the future",
      'check the clock of the machine that signed it',
    )
  }
  if (age >= TIMED_HEADER_EXPIRY_S * 1000) {
    throw refused(
      'auth_expired',
      `the authorization header is older than ${TIMED_HEADER_EXPIRY_S} s`,
      'sign a new header for each request',
    )
  }
}

/**
 * The one value of a header, looked up whatever its case; undefined when absent or empty. Two copies are
 * refused: which one a proxy or the server reads would differ.
 */
/** The one `name` header of a request; refused when it was sent more than once. */
function onlyHeader(headers: RequestHeaders, name: string): string | undefined {
  const value = singleHeader(headers, name)
  if (value === 'duplicate') throw refused('auth_malformed', `the request has more than one ${name} header`, HOW)
  return value
}

function refused(code: string, message: string, hint: string): GpunetError {
  return new GpunetError(code, message, {exitCode: ExitCode.DENIED, hint})
}
