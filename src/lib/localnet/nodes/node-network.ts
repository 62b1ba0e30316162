/**
 * The localnet as a node's network (node/network.ts): accounts and transactions go straight to the chain in this
 * process, changes come from the chain's events (as an RPC subscription would deliver them), the content store
 * is the localnet's, and the faucet and the stake writer prepare the node.
 */
import {createAssociatedTokenAccountIdempotentInstruction, getAssociatedTokenAddressSync} from '@solana/spl-token'
import type {PublicKey} from '@solana/web3.js'

import type {NodeNetwork} from '../../node/network.js'
import type {Localnet} from '../state.js'
import {transactionErrorMessage} from '../chain/tx-error.js'

/** A market of the localnet (its default market unless named), as its node sees it. */
export function localnetNodeNetwork(localnet: Localnet, market: PublicKey = localnet.market): NodeNetwork {
  const {chain} = localnet
  const send = (wire: Uint8Array): string => {
    const outcome = chain.send(wire)
    if (outcome.kind === 'landed' && !outcome.execution.err) return outcome.signature
    const reason =
      outcome.kind === 'preflight-failed' && outcome.execution.err
        ? `${transactionErrorMessage(outcome.execution.err)} ${programError(outcome.execution.logs)}`.trim()
        : outcome.kind
    throw new Error(`node transaction failed: ${reason}`)
  }
  return {
    programId: chain.programId,
    mint: localnet.mint,
    market,
    getAccount: async (address) => chain.account(address),
    getProgramAccounts: async (filters) =>
      chain
        .programAccounts(chain.programId)
        .filter(({account}) =>
          filters.every(({offset, bytes}) => account.data.subarray(offset, offset + bytes.length).equals(bytes)),
        )
        .map(({pubkey, account}) => ({address: pubkey, account})),
    latestBlockhash: async () => chain.latestBlockhash(),
    sendTransaction: async (wire) => send(wire),
    onProgramChange(listener) {
      const program = chain.programId
      // Delivered after the transaction's answer, as a subscription's notification is.
      const onAccounts = (keys: PublicKey[]) => {
        if (keys.some((key) => chain.account(key)?.owner.equals(program) ?? true)) setImmediate(listener)
      }
      chain.events.on('accounts', onAccounts)
      return () => chain.events.off('accounts', onAccounts)
    },
    getContent: async (cid) => localnet.content.get(cid),
    addContent: async (bytes) => (await localnet.content.add(Buffer.from(bytes))).cid,
    async prepareNode(node, minLamports) {
      const balance = chain.account(node)?.lamports ?? 0n
      if (balance < minLamports) localnet.fund(node, {lamports: minLamports * 10n})
      localnet.stake(node)
      const {mint} = localnet
      const account = getAssociatedTokenAddressSync(mint, node, true)
      if (!chain.account(account)) {
        localnet.submit(
          [createAssociatedTokenAccountIdempotentInstruction(localnet.faucetAddress, account, node, mint)],
          [],
        )
      }
    },
  }
}

/** The program's own error line (Anchor's), when the logs hold one. */
function programError(logs: string[]): string {
  return logs.find((line) => line.includes('Error Code:'))?.replace(/^Program log: /, '') ?? ''
}
