/**
 * The deployment API's wallet headers, as @nosana/authorization makes them: `x-user-id: <owner>` and
 * `authorization: NosanaApiAuthentication:<base58 signature>[:<unix ms>]`. The signature is over the message alone;
 * the time part is appended after signing and not covered by it (see docs/deployment-api-auth.md). The client
 * side lives here and the server (api-auth.ts) reads these constants, so both read the format one way.
 */
import type {Keypair} from '@solana/web3.js'

import bs58 from 'bs58'

import {walletFromBytes} from '../wallet.js'

/** The one message a wallet signs for the deployment API (the network's kit signs exactly this). */
export const API_AUTH_MESSAGE = 'NosanaApiAuthentication'

/** The separator of the header's parts (@nosana/authorization's default). */
export const API_AUTH_SEPARATOR = ':'

/** A header with a time part is refused once the time part is this old (the network's manager uses 300 s). */
export const TIMED_HEADER_EXPIRY_S = 300

/** A time part may run this far ahead of the server's clock. */
export const MAX_CLOCK_SKEW_MS = 60_000

/** What signs the headers: gpunet's Wallet (wallet.ts) or anything else with an address and an ed25519 signer. */
export interface ApiAuthSigner {
  readonly address: string
  sign(message: Uint8Array): Uint8Array
}

/** The two headers a wallet request to the deployment API carries (a type, so it is a Record<string, string>). */
export type ApiAuthHeaders = {
  'x-user-id': string
  authorization: string
}

/**
 * The wallet headers for a request. With a time part by default, as the network's SDK sends them to its
 * deployments; `timed: false` makes the kit's own form, which never expires. The signature is the same either way
 * (ed25519 is deterministic), so whoever reads one header holds the lasting credential: send it only over TLS or
 * to 127.0.0.1.
 */
export function apiAuthHeaders(
  signer: ApiAuthSigner | Keypair,
  options: {timed?: boolean; nowMs?: number} = {},
): ApiAuthHeaders {
  const wallet = asSigner(signer)
  const signature = bs58.encode(wallet.sign(Buffer.from(API_AUTH_MESSAGE, 'utf8')))
  const time = options.timed === false ? '' : `${API_AUTH_SEPARATOR}${Math.floor(options.nowMs ?? Date.now())}`
  return {'x-user-id': wallet.address, authorization: `${API_AUTH_MESSAGE}${API_AUTH_SEPARATOR}${signature}${time}`}
}

/** The signer of a web3.js Keypair (its 64 secret bytes, checked as a wallet file's are), or the signer given. */
function asSigner(signer: ApiAuthSigner | Keypair): ApiAuthSigner {
  return 'secretKey' in signer ? walletFromBytes(signer.secretKey, '<keypair>') : signer
}
