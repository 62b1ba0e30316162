/**
 * What a node needs of the network it serves, and nothing more: reading accounts, sending its signed
 * transactions, hearing when accounts change, and the content store. The localnet provides one in-process
 * (`src/lib/localnet/nodes/node-network.ts`); a node of a real network would provide one over JSON-RPC subscriptions.
 */
import type {PublicKey} from '@solana/web3.js'

/** An account as the node reads it. */
export interface NodeAccount {
  owner: PublicKey
  lamports: bigint
  data: Buffer
}

/** A `memcmp` filter: `bytes` at `offset` of the account data. */
export interface BytesFilter {
  offset: number
  bytes: Uint8Array
}

export interface NodeNetwork {
  /** The jobs program, its payment token and the market the node serves. */
  programId: PublicKey
  mint: PublicKey
  market: PublicKey
  /** An account, or null when it does not exist. */
  getAccount(address: PublicKey): Promise<NodeAccount | null>
  /** Accounts of the jobs program whose data match every filter. */
  getProgramAccounts(filters: BytesFilter[]): Promise<{address: PublicKey; account: NodeAccount}[]>
  latestBlockhash(): Promise<{blockhash: string; lastValidBlockHeight: number}>
  /** Sends a signed transaction; resolves once it is confirmed, rejects with the reason it was refused. */
  sendTransaction(wire: Uint8Array): Promise<string>
  /** Calls `listener` after accounts of the jobs program change (a subscription); returns the unsubscribe. */
  onProgramChange(listener: () => void): () => void
  /** The content store: a definition by CID (null when missing), and adding a result (its CID). */
  getContent(cid: string): Promise<Uint8Array | null>
  addContent(bytes: Uint8Array): Promise<string>
  /**
   * Makes sure the node can work here: SOL for fees, its token account and its stake. A faucet does it on a
   * localnet; elsewhere the operator does, and this only checks.
   */
  prepareNode(node: PublicKey, minLamports: bigint): Promise<void>
}
