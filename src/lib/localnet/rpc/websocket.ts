/**
 * The RPC's WebSocket side (on the RPC port + 1, as web3.js derives it): `signatureSubscribe` (how web3.js and
 * @solana/kit confirm, with `enableReceivedNotification`), `slotSubscribe` and `rootSubscribe` (how @solana/kit
 * follows the chain), `accountSubscribe` and `programSubscribe` (how a node or a client hears of account
 * changes), `logsSubscribe`, and their unsubscribes, at most MAX_SUBSCRIPTIONS per connection.
 */
import {PublicKey} from '@solana/web3.js'
import type {RawData, WebSocket} from 'ws'

import {parseKey} from '../../keys/base58-key.js'
import type {Chain, TransactionRecord} from '../chain.js'
import type {SignatureStatus} from '../chain/persistence.js'
import {tooDeepAt} from '../../text/nesting.js'
import {
  type Filter,
  isRequestId,
  matchesFilter,
  RpcError,
  type RpcHandler,
  SOLANA_CORE_VERSION,
  TOO_DEEP,
} from './rpc.js'

/** Subscriptions one connection may hold at once (docs/localnet.md). */
export const MAX_SUBSCRIPTIONS = 256

type Subscription =
  | {kind: 'signature'; signature: string; received: boolean}
  | {kind: 'account'; key: PublicKey; encoding: string}
  | {kind: 'program'; program: PublicKey; encoding: string; filters: Filter[]}
  | {kind: 'slot'}
  | {kind: 'root'}
  | {kind: 'logs'; mentions: PublicKey | null}

const NOTIFICATIONS = {
  signature: 'signatureNotification',
  account: 'accountNotification',
  program: 'programNotification',
  slot: 'slotNotification',
  root: 'rootNotification',
  logs: 'logsNotification',
}
const SUBSCRIBE = new Set([
  'signatureSubscribe',
  'accountSubscribe',
  'programSubscribe',
  'slotSubscribe',
  'rootSubscribe',
  'logsSubscribe',
])
const UNSUBSCRIBE: Record<string, Subscription['kind']> = {
  signatureUnsubscribe: 'signature',
  accountUnsubscribe: 'account',
  programUnsubscribe: 'program',
  slotUnsubscribe: 'slot',
  rootUnsubscribe: 'root',
  logsUnsubscribe: 'logs',
}

/** Serves one WebSocket connection's subscriptions until it closes. */
export function serveSubscriptions(socket: WebSocket, chain: Chain, rpc: RpcHandler): void {
  const subscriptions = new Map<number, Subscription>()
  let nextId = 0

  /** Sends a notification whose result is `{context, value}`, as every kind but slot and root has. */
  const notify = (id: number, kind: Subscription['kind'], slot: number, value: unknown) => {
    send(id, kind, {context: {apiVersion: SOLANA_CORE_VERSION, slot}, value})
  }
  const send = (id: number, kind: Subscription['kind'], result: unknown) => {
    socket.send(JSON.stringify({jsonrpc: '2.0', method: NOTIFICATIONS[kind], params: {result, subscription: id}}))
  }
  /** Runs one subscription's notification; one that fails is dropped, and the commit never hears of it. */
  const guarded = (id: number, send: () => void) => {
    try {
      send()
    } catch {
      subscriptions.delete(id)
    }
  }
  const onSignature = (signature: string, status: SignatureStatus) => {
    for (const [id, sub] of subscriptions) {
      if (sub.kind !== 'signature' || sub.signature !== signature) continue
      subscriptions.delete(id)
      guarded(id, () => {
        // Every transaction is received and final at once here: both notifications go out together.
        if (sub.received) notify(id, 'signature', status.slot, 'receivedSignature')
        notify(id, 'signature', status.slot, {err: status.err})
      })
    }
  }
  const onTransaction = (record: TransactionRecord) => {
    for (const [id, sub] of subscriptions) {
      if (sub.kind !== 'logs') continue
      if (sub.mentions && !record.accounts.some((a) => a.pubkey.equals(sub.mentions!))) continue
      guarded(id, () =>
        notify(id, 'logs', record.slot, {signature: record.signature, err: record.err, logs: record.logs}),
      )
    }
  }
  // Slots advance with wall time: while a slot or root subscription exists, each new slot is announced.
  let ticker: NodeJS.Timeout | null = null
  let lastSlot = chain.slot()
  const tick = () => {
    const slot = chain.slot()
    if (slot <= lastSlot) return
    lastSlot = slot
    for (const [id, sub] of subscriptions) {
      // Every slot is final at once: the root is the slot itself.
      if (sub.kind === 'slot') guarded(id, () => send(id, 'slot', {parent: slot - 1, root: slot, slot}))
      else if (sub.kind === 'root') guarded(id, () => send(id, 'root', slot))
    }
  }
  const updateTicker = () => {
    const wanted = [...subscriptions.values()].some((sub) => sub.kind === 'slot' || sub.kind === 'root')
    if (wanted && !ticker) {
      lastSlot = chain.slot()
      ticker = setInterval(tick, Math.max(20, Math.floor(chain.clock.slotMs / 4)))
      ticker.unref()
    } else if (!wanted && ticker) {
      clearInterval(ticker)
      ticker = null
    }
  }
  const onAccounts = (keys: PublicKey[], slot: number) => {
    for (const [id, sub] of subscriptions) {
      if (sub.kind === 'account') {
        if (keys.some((k) => k.equals(sub.key)))
          guarded(id, () => notify(id, 'account', slot, encoded(sub.key, sub.encoding)))
      } else if (sub.kind === 'program') {
        guarded(id, () => {
          for (const key of keys) {
            const account = chain.account(key)
            if (!account?.owner.equals(sub.program) || !sub.filters.every((f) => matchesFilter(account.data, f)))
              continue
            notify(id, 'program', slot, {
              pubkey: key.toBase58(),
              account: rpc.encodeAccount(account, {encoding: sub.encoding}),
            })
          }
        })
      }
    }
  }
  /** A closed account is reported as a node reports it: no lamports, owned by the system program. */
  const encoded = (key: PublicKey, encoding: string) =>
    rpc.encodeAccount(
      chain.account(key) ?? {lamports: 0n, owner: PublicKey.default, data: Buffer.alloc(0), executable: false},
      {encoding},
    )
  chain.events.on('signature', onSignature)
  chain.events.on('accounts', onAccounts)
  chain.events.on('transaction', onTransaction)
  socket.on('close', () => {
    chain.events.off('signature', onSignature)
    chain.events.off('accounts', onAccounts)
    chain.events.off('transaction', onTransaction)
    subscriptions.clear()
    updateTicker()
  })

  const subscribe = (params: unknown[], method: string): Subscription => {
    const config = (params[1] && typeof params[1] === 'object' ? params[1] : {}) as {
      encoding?: string
      filters?: Filter[]
      enableReceivedNotification?: unknown
    }
    if (method === 'slotSubscribe') return {kind: 'slot'}
    if (method === 'rootSubscribe') return {kind: 'root'}
    if (method === 'logsSubscribe') return {kind: 'logs', mentions: logsFilter(params[0])}
    const encoding = subscriptionEncoding(config.encoding)
    if (method === 'signatureSubscribe') {
      return {kind: 'signature', signature: stringParam(params), received: config.enableReceivedNotification === true}
    }
    if (method === 'accountSubscribe') return {kind: 'account', key: keyParam(params), encoding}
    const filters = config.filters ?? []
    if (!Array.isArray(filters)) throw new RpcError(-32602, 'Invalid params: filters must be an array')
    for (const filter of filters) {
      try {
        matchesFilter(Buffer.alloc(0), filter)
      } catch {
        throw new RpcError(-32602, 'Invalid params: unsupported filter')
      }
    }
    return {kind: 'program', program: keyParam(params), encoding, filters}
  }

  // Nothing thrown while answering one message may escape: an uncaught error would end the whole localnet.
  socket.on('message', (raw) => {
    try {
      answer(raw)
    } catch {
      socket.close(1011, 'internal error')
    }
  })
  const answer = (raw: RawData) => {
    let request: {id?: unknown; method?: unknown; params?: unknown}
    try {
      request = JSON.parse(String(raw)) as typeof request
    } catch {
      socket.send(JSON.stringify({jsonrpc: '2.0', error: {code: -32700, message: 'Parse error'}, id: null}))
      return
    }
    if (tooDeepAt(request)) {
      socket.send(JSON.stringify({jsonrpc: '2.0', error: {code: TOO_DEEP.code, message: TOO_DEEP.message}, id: null}))
      return
    }
    // A notification (no id), such as web3.js's heartbeat `ping`, gets no answer.
    if (request === null || typeof request !== 'object' || request.id === undefined || request.id === null) return
    if (!isRequestId(request.id)) {
      socket.send(JSON.stringify({jsonrpc: '2.0', error: {code: -32600, message: 'Invalid request'}, id: null}))
      return
    }
    const {id, method} = request
    const params = Array.isArray(request.params) ? (request.params as unknown[]) : []
    const reply = (body: Record<string, unknown>) => socket.send(JSON.stringify({jsonrpc: '2.0', ...body, id}))
    try {
      if (typeof method === 'string' && SUBSCRIBE.has(method)) {
        if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
          throw new RpcError(-32602, `Invalid params: at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`)
        }
        const sub = subscribe(params, method)
        const subscription = nextId++
        subscriptions.set(subscription, sub)
        updateTicker()
        reply({result: subscription})
        const status = sub.kind === 'signature' ? chain.status(sub.signature) : null
        if (status) onSignature((sub as {signature: string}).signature, status)
      } else if (typeof method === 'string' && Object.hasOwn(UNSUBSCRIBE, method)) {
        const sub = subscriptions.get(Number(params[0]))
        const removed = sub?.kind === UNSUBSCRIBE[method] && subscriptions.delete(Number(params[0]))
        updateTicker()
        reply({result: removed})
      } else {
        throw new RpcError(-32601, 'Method not found')
      }
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      reply({error: {code: error.code, message: error.message}})
    }
  }
}

/** `logsSubscribe`'s filter: "all" or "allWithVotes" (null: every transaction), or `{mentions: [one address]}`. */
function logsFilter(filter: unknown): PublicKey | null {
  if (filter === 'all' || filter === 'allWithVotes') return null
  const mentions = (filter as {mentions?: unknown} | null)?.mentions
  if (typeof filter === 'object' && filter !== null && Array.isArray(mentions)) {
    if (mentions.length !== 1) {
      throw new RpcError(-32602, 'Invalid Request: Only 1 address supported')
    }
    const key = parseKey(mentions[0])
    if (!key) throw new RpcError(-32602, 'Invalid Request: Invalid pubkey provided')
    return key
  }
  throw new RpcError(-32602, 'Invalid params: expected "all", "allWithVotes" or {"mentions": [address]}')
}

/** The account encodings a subscription may ask for; anything else is refused when subscribing. */
const ENCODINGS = ['base58', 'base64', 'jsonParsed']

function subscriptionEncoding(encoding: unknown): string {
  if (encoding === undefined) return 'base64'
  if (typeof encoding === 'string' && ENCODINGS.includes(encoding)) return encoding
  const variant = typeof encoding === 'string' ? `\`${encoding.slice(0, 64)}\`` : 'a non-string'
  throw new RpcError(
    -32602,
    `Invalid params: unknown variant ${variant}, expected one of ${ENCODINGS.map((e) => `\`${e}\``).join(', ')}`,
  )
}

function stringParam(params: unknown[]): string {
  if (typeof params[0] !== 'string') throw new RpcError(-32602, 'Invalid params: expected a string at position 0')
  return params[0]
}

function keyParam(params: unknown[]): PublicKey {
  const key = parseKey(stringParam(params))
  if (!key) throw new RpcError(-32602, 'Invalid param: Invalid')
  return key
}
