/**
 * The RPC's WebSocket side, for `signatureSubscribe`: web3.js confirms transactions by subscribing to their
 * signature, on the RPC port + 1 by default.
 */
import type {WebSocket} from 'ws'

import type {Chain} from './chain.js'
import type {SignatureStatus} from './persistence.js'
import {SOLANA_CORE_VERSION} from './rpc.js'

/** Serves one WebSocket connection's subscriptions until it closes. */
export function serveSubscriptions(socket: WebSocket, chain: Chain): void {
  const subscriptions = new Map<number, string>()
  let nextId = 0

  const notify = (id: number, slot: number, err: SignatureStatus['err']) => {
    subscriptions.delete(id)
    socket.send(
      JSON.stringify({
        jsonrpc: '2.0',
        method: 'signatureNotification',
        params: {result: {context: {apiVersion: SOLANA_CORE_VERSION, slot}, value: {err}}, subscription: id},
      }),
    )
  }
  const onSignature = (signature: string, status: SignatureStatus) => {
    for (const [id, wanted] of subscriptions) if (wanted === signature) notify(id, status.slot, status.err)
  }
  chain.events.on('signature', onSignature)
  socket.on('close', () => chain.events.off('signature', onSignature))

  socket.on('message', (raw) => {
    let request: {id?: unknown; method?: unknown; params?: unknown}
    try {
      request = JSON.parse(String(raw)) as typeof request
    } catch {
      socket.send(JSON.stringify({jsonrpc: '2.0', error: {code: -32700, message: 'Parse error'}, id: null}))
      return
    }
    // A notification (no id), such as web3.js's heartbeat `ping`, gets no answer.
    if (request.id === undefined || request.id === null) return
    const id = request.id
    const params = Array.isArray(request.params) ? request.params : []
    const reply = (body: Record<string, unknown>) => socket.send(JSON.stringify({jsonrpc: '2.0', ...body, id}))
    if (request.method === 'signatureSubscribe' && typeof params[0] === 'string') {
      const subscription = nextId++
      subscriptions.set(subscription, params[0])
      reply({result: subscription})
      const status = chain.status(params[0])
      if (status) notify(subscription, status.slot, status.err)
    } else if (request.method === 'signatureUnsubscribe') {
      reply({result: subscriptions.delete(Number(params[0]))})
    } else {
      reply({error: {code: -32601, message: 'Method not found'}})
    }
  })
}
