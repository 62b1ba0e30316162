/**
 * Solana JSON-RPC over the localnet: the methods the client needs, answered in the shapes a real node uses so
 * `@solana/web3.js`'s Connection works unchanged.
 */
import {AccountLayout, ACCOUNT_SIZE, MintLayout, MINT_SIZE, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {PublicKey, VersionedMessage} from '@solana/web3.js'
import {base58btc} from 'multiformats/bases/base58'

import {parseKey} from '../../keys/base58-key.js'
import {formatAmount} from '../../text/amounts.js'
import {MAX_NESTING_DEPTH, tooDeepAt} from '../../text/nesting.js'
import {ChainInputError, type Execution} from '../chain.js'
import {transactionFee} from '../jobs-program/mixed-transaction.js'
import type {DecodedTransaction} from '../chain/transaction.js'
import {transactionResult} from './transaction-history.js'
import type {AccountState} from '../chain/ledger.js'
import type {Localnet} from '../state.js'
import {transactionErrorMessage} from '../chain/tx-error.js'
import {decodeFilterBytes, decodeTransactionText, WireError} from '../chain/wire.js'

/** A JSON-RPC error answered to the client. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message)
  }
}

const INVALID_PARAMS = -32602
/** Signatures one `getSignatureStatuses` may ask for, as on Solana's RPC. */
const MAX_SIGNATURES = 256
/** Slots a node's status cache answers for without `searchTransactionHistory` (MAX_RECENT_BLOCKHASHES). */
const STATUS_CACHE_SLOTS = 300
/** Most requests one JSON-RPC batch may hold (docs/localnet.md). */
export const MAX_BATCH = 100
/** The version the localnet reports; it follows the shapes of this Agave release. */
export const SOLANA_CORE_VERSION = '2.2.0'
/** Rent epoch of rent-exempt accounts, as a node reports it: u64::MAX, which JSON readers see as 2^64. */
const RENT_EXEMPT_EPOCH = 2 ** 64

type Params = unknown[]
type Config = {
  encoding?: string
  dataSlice?: {offset: number; length: number}
  filters?: Filter[]
  withContext?: boolean
}
/** A `getProgramAccounts` / `programSubscribe` filter. */
export type Filter = {dataSize?: number; memcmp?: {offset: number; bytes: string; encoding?: string}}

/** Dispatches JSON-RPC calls to the localnet. */
export class RpcHandler {
  private readonly methods: Record<string, (params: Params) => unknown>

  constructor(private readonly node: Localnet) {
    const chain = node.chain
    this.methods = {
      getHealth: () => 'ok',
      getVersion: () => ({'solana-core': SOLANA_CORE_VERSION, 'feature-set': 0}),
      getSlot: () => chain.slot(),
      getBlockHeight: () => chain.slot(),
      getEpochInfo: () => {
        const slot = chain.slot()
        return {
          absoluteSlot: slot,
          blockHeight: slot,
          epoch: 0,
          slotIndex: slot,
          slotsInEpoch: 432_000,
          transactionCount: null,
        }
      },
      getGenesisHash: () => node.chain.clock.blockhash(0),
      getLatestBlockhash: () => this.context(chain.latestBlockhash()),
      isBlockhashValid: (p) => this.context(chain.clock.recentSlotOf(stringParam(p, 0, 'blockhash')) !== null),
      // The fee `sendTransaction` charges: 5000 lamports a signature plus the priority fee (unit price x unit limit,
      // rounded up), as the network computes it; null for compute-budget instructions it would refuse.
      getFeeForMessage: (p) => this.context(messageFee(stringParam(p, 0, 'message'))),
      // A node answers the fee paid in each of its recent slots (at most 150); the localnet has no other traffic
      // to outbid, so every slot's fee is 0 and a client that sets priority fees pays its own floor.
      getRecentPrioritizationFees: (p) => {
        const accounts = p[0] ?? []
        if (!Array.isArray(accounts))
          throw new RpcError(INVALID_PARAMS, 'Invalid params: expected an array of addresses')
        if (accounts.length > 128) throw new RpcError(INVALID_PARAMS, 'Too many inputs provided; max 128')
        accounts.forEach((_, i) => keyParam(accounts, i))
        const slot = chain.slot()
        const count = Math.min(150, slot + 1)
        return Array.from({length: count}, (_, i) => ({slot: slot - count + 1 + i, prioritizationFee: 0}))
      },
      getMinimumBalanceForRentExemption: (p) => Number(chain.rentExempt(numberParam(p, 0, 'data length'))),
      getBalance: (p) => this.context(Number(chain.account(keyParam(p, 0))?.lamports ?? 0n)),
      getAccountInfo: (p) => {
        const key = keyParam(p, 0)
        return this.context(this.encodeAccount(chain.account(key), config(p, 1)))
      },
      getMultipleAccounts: (p) => {
        const keys = p[0]
        if (!Array.isArray(keys)) throw new RpcError(INVALID_PARAMS, 'Invalid params: expected an array of addresses')
        if (keys.length > 100) throw new RpcError(INVALID_PARAMS, 'Too many inputs provided; max 100')
        const cfg = config(p, 1)
        return this.context(
          keys.map((_, i) => {
            return this.encodeAccount(chain.account(keyParam(keys, i)), cfg)
          }),
        )
      },
      getProgramAccounts: (p) => {
        const cfg = config(p, 1)
        // Every filter is checked before the scan, as a node does, so an empty program still refuses a bad one.
        for (const filter of cfg.filters ?? []) matchesFilter(Buffer.alloc(0), filter)
        const matches = chain
          .programAccounts(keyParam(p, 0))
          .filter(({account}) => (cfg.filters ?? []).every((f) => matchesFilter(account.data, f)))
          .map(({pubkey, account}) => ({pubkey: pubkey.toBase58(), account: this.encodeAccount(account, cfg)}))
        return cfg.withContext ? this.context(matches) : matches
      },
      getTokenAccountBalance: (p) => {
        const key = keyParam(p, 0)
        const account = chain.account(key)
        if (!account || !account.owner.equals(TOKEN_PROGRAM_ID) || account.data.length !== ACCOUNT_SIZE) {
          throw new RpcError(INVALID_PARAMS, 'Invalid param: could not find account')
        }
        const token = AccountLayout.decode(account.data)
        return this.context(tokenAmount(token.amount, this.decimals(token.mint)))
      },
      getTokenSupply: (p) => {
        const mint = chain.account(keyParam(p, 0))
        if (!mint || mint.data.length !== MINT_SIZE)
          throw new RpcError(INVALID_PARAMS, 'Invalid param: not a Token mint')
        const decoded = MintLayout.decode(mint.data)
        return this.context(tokenAmount(decoded.supply, decoded.decimals))
      },
      getTokenAccountsByOwner: (p) => {
        const owner = keyParam(p, 0)
        const filter = (p[1] ?? {}) as {mint?: string; programId?: string}
        if (!filter.mint && !filter.programId)
          throw new RpcError(INVALID_PARAMS, 'Invalid params: expected {mint} or {programId}')
        if (filter.programId && filter.programId !== TOKEN_PROGRAM_ID.toBase58()) return this.context([])
        const cfg = config(p, 2)
        const accounts = chain.programAccounts(TOKEN_PROGRAM_ID).filter(({account}) => {
          if (account.data.length !== ACCOUNT_SIZE) return false
          const token = AccountLayout.decode(account.data)
          return token.owner.equals(owner) && (!filter.mint || token.mint.toBase58() === filter.mint)
        })
        return this.context(
          accounts.map(({pubkey, account}) => ({pubkey: pubkey.toBase58(), account: this.encodeAccount(account, cfg)})),
        )
      },
      getSignatureStatuses: (p) => {
        const signatures = p[0]
        if (!Array.isArray(signatures))
          throw new RpcError(INVALID_PARAMS, 'Invalid params: expected an array of signatures')
        if (signatures.length > MAX_SIGNATURES)
          throw new RpcError(INVALID_PARAMS, `Invalid params: too many inputs provided; max ${MAX_SIGNATURES}`)
        const search = (p[1] as {searchTransactionHistory?: unknown} | undefined)?.searchTransactionHistory === true
        const recent = chain.slot() - STATUS_CACHE_SLOTS
        return this.context(
          signatures.map((sig) => {
            if (typeof sig !== 'string')
              throw new RpcError(INVALID_PARAMS, 'Invalid params: expected signature strings')
            const status = chain.status(sig)
            // As a node's status cache: only recent transactions, unless the history is searched.
            if (!status || (!search && status.slot < recent)) return null
            return {
              slot: status.slot,
              confirmations: null,
              err: status.err,
              status: status.err ? {Err: status.err} : {Ok: null},
              confirmationStatus: 'finalized',
            }
          }),
        )
      },
      getTransaction: (p) => {
        const signature = stringParam(p, 0, 'signature')
        const record = chain.transaction(signature)
        if (!record) return null
        const cfg = (p[1] && typeof p[1] === 'object' ? p[1] : {}) as Record<string, unknown>
        const answer = transactionResult(record, cfg)
        if ('error' in answer) throw new RpcError(answer.error.code, answer.error.message)
        return answer.result
      },
      sendTransaction: (p) => this.sendTransaction(p),
      simulateTransaction: (p) => this.simulateTransaction(p),
      requestAirdrop: (p) => {
        const lamports = numberParam(p, 1, 'lamports')
        if (!Number.isSafeInteger(lamports) || lamports <= 0)
          throw new RpcError(INVALID_PARAMS, 'Invalid params: lamports must be a positive integer')
        return node.fund(keyParam(p, 0), {lamports: BigInt(lamports)})
      },
    }
  }

  /** Answers a request body: one request object, or a batch of at most MAX_BATCH. */
  handleBody(request: unknown): unknown {
    if (tooDeepAt(request)) return rpcError(null, TOO_DEEP)
    if (!Array.isArray(request)) return this.handle(request)
    if (request.length === 0) return rpcError(null, new RpcError(-32600, 'Invalid request: empty batch'))
    if (request.length > MAX_BATCH) {
      return rpcError(null, new RpcError(-32600, `Invalid request: a batch holds at most ${MAX_BATCH} requests`))
    }
    return request.map((r) => this.handle(r))
  }

  /** Answers one JSON-RPC request object. */
  handle(request: unknown): Record<string, unknown> {
    const req = (request ?? {}) as {jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown}
    if (!isRequestId(req.id)) return rpcError(null, new RpcError(-32600, 'Invalid request'))
    const id = req.id ?? null
    try {
      if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') throw new RpcError(-32600, 'Invalid request')
      // Own properties only: `constructor` or `__proto__` must not reach Object.prototype.
      const method = Object.hasOwn(this.methods, req.method) ? this.methods[req.method] : undefined
      if (!method) throw new RpcError(-32601, 'Method not found')
      const params = req.params === undefined ? [] : req.params
      if (!Array.isArray(params)) throw new RpcError(INVALID_PARAMS, 'Invalid params: expected an array')
      return {jsonrpc: '2.0', result: method(params), id}
    } catch (error) {
      if (error instanceof ChainInputError) return rpcError(id, new RpcError(INVALID_PARAMS, error.message))
      if (error instanceof RpcError) return rpcError(id, error)
      return rpcError(id, new RpcError(-32603, `Internal error: ${(error as Error).message}`))
    }
  }

  private sendTransaction(p: Params): string {
    const cfg = (p[1] ?? {}) as {encoding?: string; skipPreflight?: boolean}
    const outcome = this.node.chain.send(transactionBytes(p, cfg.encoding), {skipPreflight: cfg.skipPreflight})
    if (outcome.kind === 'bad-signature') throw new RpcError(-32003, 'Transaction signature verification failure')
    if (outcome.kind === 'preflight-failed') {
      const {err} = outcome.execution
      throw new RpcError(
        -32002,
        `Transaction simulation failed: ${transactionErrorMessage(err!)}`,
        simulationValue(outcome.execution),
      )
    }
    return outcome.signature
  }

  private simulateTransaction(p: Params): unknown {
    const cfg = (p[1] ?? {}) as {encoding?: string; sigVerify?: boolean; replaceRecentBlockhash?: boolean}
    if (cfg.sigVerify && cfg.replaceRecentBlockhash) {
      throw new RpcError(INVALID_PARAMS, 'sigVerify may not be used with replaceRecentBlockhash')
    }
    const result = this.node.chain.simulate(transactionBytes(p, cfg.encoding), cfg)
    if (result === 'bad-signature') throw new RpcError(-32003, 'Transaction signature verification failure')
    const replacement = cfg.replaceRecentBlockhash ? this.node.chain.latestBlockhash() : null
    return this.context({...simulationValue(result), replacementBlockhash: replacement})
  }

  private context<T>(value: T): {context: {apiVersion: string; slot: number}; value: T} {
    return {context: {apiVersion: SOLANA_CORE_VERSION, slot: this.node.chain.slot()}, value}
  }

  private decimals(mint: PublicKey): number {
    const account = this.node.chain.account(mint)
    return account && account.data.length === MINT_SIZE ? MintLayout.decode(account.data).decimals : 0
  }

  /** An account as a node encodes it; `jsonParsed` is understood for SPL token accounts and mints. */
  encodeAccount(account: AccountState | null, cfg: Config): unknown {
    if (!account) return null
    const base = {
      executable: account.executable,
      lamports: Number(account.lamports),
      owner: account.owner.toBase58(),
      rentEpoch: RENT_EXEMPT_EPOCH,
      space: account.data.length,
    }
    const encoding = cfg.encoding ?? 'base58'
    if (encoding === 'jsonParsed') {
      const parsed = parseTokenAccount(account, (mint) => this.decimals(mint))
      if (parsed) return {...base, data: parsed}
    }
    let data = account.data
    if (cfg.dataSlice) data = data.subarray(cfg.dataSlice.offset, cfg.dataSlice.offset + cfg.dataSlice.length)
    if (encoding === 'base58') {
      if (data.length > 128)
        throw new RpcError(
          INVALID_PARAMS,
          'Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.',
        )
      return {...base, data: [base58btc.baseEncode(data), 'base58']}
    }
    if (encoding === 'base64' || encoding === 'jsonParsed') return {...base, data: [data.toString('base64'), 'base64']}
    throw new RpcError(INVALID_PARAMS, `Invalid params: unsupported encoding ${encoding}`)
  }
}

/**
 * A request nested past the one limit (nesting.ts) is refused as a node's JSON parser refuses one past its
 * recursion limit, before any method walks it.
 */
export const TOO_DEEP = new RpcError(-32700, `Parse error: nested more than ${MAX_NESTING_DEPTH} deep`)

/**
 * True for an id JSON-RPC allows (a string, a number, null or none). Anything else is refused before it is
 * echoed: an id nested thousands deep would overflow the stack of the JSON.stringify that answers it.
 */
export function isRequestId(id: unknown): id is string | number | null | undefined {
  return id === undefined || id === null || typeof id === 'string' || typeof id === 'number'
}

function rpcError(id: unknown, error: RpcError): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    error: {code: error.code, message: error.message, ...(error.data === undefined ? {} : {data: error.data})},
    id,
  }
}

function simulationValue(execution: Execution) {
  return {
    accounts: null,
    err: execution.err,
    innerInstructions: null,
    logs: execution.logs,
    returnData: null,
    unitsConsumed: execution.unitsConsumed,
  }
}

function config(p: Params, index: number): Config {
  const value = p[index]
  return value && typeof value === 'object' ? (value as Config) : {}
}

function stringParam(p: Params, index: number, what: string): string {
  const value = p[index]
  if (typeof value !== 'string')
    throw new RpcError(INVALID_PARAMS, `Invalid params: expected ${what} at position ${index}`)
  return value
}

/** An unsigned integer parameter (a node's usize and u64 parameters: data lengths, lamports). */
function numberParam(p: Params, index: number, what: string): number {
  const value = p[index]
  if (typeof value !== 'number')
    throw new RpcError(INVALID_PARAMS, `Invalid params: expected ${what} at position ${index}`)
  if (!Number.isSafeInteger(value) || value < 0)
    throw new RpcError(INVALID_PARAMS, `Invalid params: invalid value: ${value}, expected an unsigned integer`)
  return value
}

function keyParam(p: Params, index: number): PublicKey {
  const key = parseKey(stringParam(p, index, 'an address'))
  if (!key) throw new RpcError(INVALID_PARAMS, `Invalid param: Invalid`)
  return key
}

function transactionBytes(p: Params, encoding = 'base58'): Uint8Array {
  const text = stringParam(p, 0, 'an encoded transaction')
  if (encoding !== 'base58' && encoding !== 'base64') {
    throw new RpcError(INVALID_PARAMS, `unsupported encoding: ${encoding}. Supported encodings: base58, base64`)
  }
  try {
    return decodeTransactionText(text, encoding)
  } catch (error) {
    if (error instanceof WireError) throw new RpcError(INVALID_PARAMS, error.message)
    throw error
  }
}

/** True when account data passes a filter; RpcError for a filter the localnet does not know. */
export function matchesFilter(data: Buffer, filter: Filter): boolean {
  if (filter.dataSize !== undefined) return data.length === filter.dataSize
  if (filter.memcmp) {
    const {offset, bytes, encoding} = filter.memcmp
    let wanted: Buffer
    try {
      wanted = Buffer.from(decodeFilterBytes(String(bytes), encoding === 'base64' ? 'base64' : 'base58'))
    } catch (error) {
      if (error instanceof WireError) throw new RpcError(INVALID_PARAMS, `Invalid params: ${error.message}`)
      throw error
    }
    return data.subarray(offset, offset + wanted.length).equals(wanted)
  }
  throw new RpcError(INVALID_PARAMS, 'Invalid params: unsupported filter')
}

function tokenAmount(amount: bigint, decimals: number) {
  return {
    amount: amount.toString(),
    decimals,
    uiAmount: Number(amount) / 10 ** decimals,
    uiAmountString: formatAmount(amount, decimals),
  }
}

/** The `jsonParsed` form of an SPL token account or mint; null for anything else. */
function parseTokenAccount(account: AccountState, decimalsOf: (mint: PublicKey) => number): unknown {
  if (!account.owner.equals(TOKEN_PROGRAM_ID)) return null
  if (account.data.length === ACCOUNT_SIZE) {
    const t = AccountLayout.decode(account.data)
    return {
      program: 'spl-token',
      space: ACCOUNT_SIZE,
      parsed: {
        type: 'account',
        info: {
          isNative: t.isNativeOption === 1,
          mint: t.mint.toBase58(),
          owner: t.owner.toBase58(),
          state: t.state === 2 ? 'frozen' : 'initialized',
          tokenAmount: tokenAmount(t.amount, decimalsOf(t.mint)),
        },
      },
    }
  }
  if (account.data.length === MINT_SIZE) {
    const m = MintLayout.decode(account.data)
    return {
      program: 'spl-token',
      space: MINT_SIZE,
      parsed: {
        type: 'mint',
        info: {
          decimals: m.decimals,
          freezeAuthority: m.freezeAuthorityOption ? m.freezeAuthority.toBase58() : null,
          isInitialized: m.isInitialized,
          mintAuthority: m.mintAuthorityOption ? m.mintAuthority.toBase58() : null,
          supply: m.supply.toString(),
        },
      },
    }
  }
  return null
}

/** The largest message a transaction can carry (a packet of 1232 bytes, less one signature), base64. */
const MAX_BASE64_MESSAGE = Math.ceil(1232 / 3) * 4

/** The fee of a base64 message, as `sendTransaction` would charge it; null when its compute budget is invalid. */
export function messageFee(text: string): number | null {
  if (text.length > MAX_BASE64_MESSAGE) throw new RpcError(INVALID_PARAMS, 'Invalid params: message too large')
  let message: VersionedMessage
  try {
    message = VersionedMessage.deserialize(Buffer.from(text, 'base64'))
  } catch (error) {
    throw new RpcError(INVALID_PARAMS, `Invalid params: invalid message: ${(error as Error).message}`)
  }
  const keys = message.staticAccountKeys
  // Programs are never loaded from lookup tables: every program index points into the static keys.
  if (message.compiledInstructions.some((ix) => ix.programIdIndex >= keys.length)) {
    throw new RpcError(INVALID_PARAMS, 'Invalid params: an instruction names a program the message does not hold')
  }
  const accounts = keys.map((pubkey) => ({pubkey, isSigner: false, isWritable: false}))
  const fee = transactionFee({message} as DecodedTransaction, accounts)
  return 'err' in fee ? null : Number(fee.fee)
}
