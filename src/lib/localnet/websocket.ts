/**
 * The RPC's WebSocket side (on the RPC port + 1, as web3.js derives it): `signatureSubscribe` (how web3.js
 * confirms), `accountSubscribe` and `programSubscribe` (how a node or a client hears of account changes), and
 * their unsubscribes, at most MAX_SUBSCRIPTIONS per connection.
 */
import {PublicKey} from '@solana/web3.js'
import type {WebSocket} from 'ws'

import type {Chain} from './chain.js'
import type {SignatureStatus} from './persistence.js'
import {type Filter, matchesFilter, RpcError, type RpcHandler, SOLANA_CORE_VERSION} from './rpc.js'

/** Subscriptions one connection may hold at once (docs/localnet.md). */
export const MAX_SUBSCRIPTIONS = 256

type Subscription =
  | {kind: 'signature'; signature: string}
  | {kind: 'account'; key: PublicKey; encoding: string}
  | {kind: 'program'; program: PublicKey; encoding: string; filters: Filter[]}

const NOTIFICATIONS = {
  signature: 'signatureNotification',
  account: 'accountNotification',
  program: 'programNotification',
}
const UNSUBSCRIBE: Record<string, Subscription['kind']> = {
  signatureUnsubscribe: 'signature',
  accountUnsubscribe: 'account',
  programUnsubscribe: 'program',
}

/** Serves one WebSocket connection's subscriptions until it closes. */
export function serveSubscriptions(socket: WebSocket, chain: Chain, rpc: RpcHandler): void {
  const subscriptions = new Map<number, Subscription>()
  let nextId = 0

  const notify = (id: number, kind: Subscription['kind'], slot: number, value: unknown) => {
    const result = {context: {apiVersion: SOLANA_CORE_VERSION, slot}, value}
    socket.send(JSON.stringify({jsonrpc: '2.0', method: NOTIFICATIONS[kind], params: {result, subscription: id}}))
  }
  const onSignature = (signature: string, status: SignatureStatus) => {
    for (const [id, sub] of subscriptions) {
      if (sub.kind !== 'signature' || sub.signature !== signature) continue
      subscriptions.delete(id)
      notify(id, 'signature', status.slot, {err: status.err})
    }
  }
  const onAccounts = (keys: PublicKey[], slot: number) => {
    for (const [id, sub] of subscriptions) {
      if (sub.kind === 'account') {
        if (keys.some((k) => k.equals(sub.key))) notify(id, 'account', slot, encoded(sub.key, sub.encoding))
      } else if (sub.kind === 'program') {
        for (const key of keys) {
          const account = chain.account(key)
          if (!account?.owner.equals(sub.program) || !sub.filters.every((f) => matchesFilter(account.data, f))) continue
          notify(id, 'program', slot, {
            pubkey: key.toBase58(),
            account: rpc.encodeAccount(account, {encoding: sub.encoding}),
          })
        }
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
  socket.on('close', () => {
    chain.events.off('signature', onSignature)
    chain.events.off('accounts', onAccounts)
  })

  const subscribe = (params: unknown[], method: string): Subscription => {
    const config = (params[1] && typeof params[1] === 'object' ? params[1] : {}) as {
      encoding?: string
      filters?: Filter[]
    }
    const encoding = config.encoding ?? 'base64'
    if (method === 'signatureSubscribe') return {kind: 'signature', signature: stringParam(params)}
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

  socket.on('message', (raw) => {
    let request: {id?: unknown; method?: unknown; params?: unknown}
    try {
      request = JSON.parse(String(raw)) as typeof request
    } catch {
      socket.send(JSON.stringify({jsonrpc: '2.0', error: {code: -32700, message: 'Parse error'}, id: null}))
      return
    }
    // A notification (no id), such as web3.js's heartbeat `ping`, gets no answer.
    if (request === null || typeof request !== 'object' || request.id === undefined || request.id === null) return
    const {id, method} = request
    const params = Array.isArray(request.params) ? (request.params as unknown[]) : []
    const reply = (body: Record<string, unknown>) => socket.send(JSON.stringify({jsonrpc: '2.0', ...body, id}))
    try {
      if (method === 'signatureSubscribe' || method === 'accountSubscribe' || method === 'programSubscribe') {
        if (subscriptions.size >= MAX_SUBSCRIPTIONS) {
          throw new RpcError(-32602, `Invalid params: at most ${MAX_SUBSCRIPTIONS} subscriptions per connection`)
        }
        const sub = subscribe(params, method)
        const subscription = nextId++
        subscriptions.set(subscription, sub)
        reply({result: subscription})
        const status = sub.kind === 'signature' ? chain.status(sub.signature) : null
        if (status) onSignature((sub as {signature: string}).signature, status)
      } else if (typeof method === 'string' && Object.hasOwn(UNSUBSCRIBE, method)) {
        const sub = subscriptions.get(Number(params[0]))
        const removed = sub?.kind === UNSUBSCRIBE[method] && subscriptions.delete(Number(params[0]))
        reply({result: removed})
      } else {
        throw new RpcError(-32601, 'Method not found')
      }
    } catch (error) {
      if (!(error instanceof RpcError)) throw error
      reply({error: {code: error.code, message: error.message}})
    }
  })
}

function stringParam(params: unknown[]): string {
  if (typeof params[0] !== 'string') throw new RpcError(-32602, 'Invalid params: expected a string at position 0')
  return params[0]
}

function keyParam(params: unknown[]): PublicKey {
  try {
    return new PublicKey(stringParam(params))
  } catch {
    throw new RpcError(-32602, 'Invalid param: Invalid')
  }
}
