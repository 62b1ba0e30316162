/**
 * The node's side of the jobs program: it reads its market, jobs and runs with the IDL codecs, and signs
 * `work`, `stop` and `finish` with its own key, sent through whatever network it serves (node/network.ts).
 */
import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {Keypair, type PublicKey, SystemProgram, Transaction, type TransactionInstruction} from '@solana/web3.js'

import {
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  type JobAccount,
  type MarketAccount,
  RUN_ACCOUNT_DISCRIMINATOR,
  type RunAccount,
} from '../market/codec/accounts.js'
import {jobsInstruction} from '../market/codec/instructions.js'
import {ipfsHashToBytes} from '../market/codec/ipfs-hash.js'
import {findStakeAddress, findVaultAddress} from '../market/codec/pda.js'
import type {NodeNetwork} from './network.js'

/** Offset of `node` in a RunAccount (after the discriminator and `job`). */
const RUN_NODE_OFFSET = 8 + 32

/** A node's view of one market, signing as `keypair`. */
export class NodeChainClient {
  constructor(
    readonly network: NodeNetwork,
    readonly keypair: Keypair,
  ) {}

  get address(): PublicKey {
    return this.keypair.publicKey
  }

  /** SOL for fees, the token account it is paid into and its stake: what `work` and `finish` need. */
  prepare(minLamports: bigint): Promise<void> {
    return this.network.prepareNode(this.address, minLamports)
  }

  market(): Promise<MarketAccount | null> {
    return this.account(this.network.market, decodeMarketAccount)
  }

  /** A job account, or null once it is gone or not a job. */
  job(address: PublicKey): Promise<JobAccount | null> {
    return this.account(address, decodeJobAccount)
  }

  /** A run account, or null once `finish`, `end` or `quit` closed it. */
  run(address: PublicKey): Promise<RunAccount | null> {
    return this.account(address, decodeRunAccount)
  }

  /** The run accounts of this node: the jobs it runs on chain (found by discriminator and node). */
  async ownRuns(): Promise<{address: PublicKey; run: RunAccount}[]> {
    const accounts = await this.network.getProgramAccounts([
      {offset: 0, bytes: RUN_ACCOUNT_DISCRIMINATOR},
      {offset: RUN_NODE_OFFSET, bytes: this.address.toBytes()},
    ])
    return accounts.map(({address, account}) => ({address, run: decodeRunAccount(account.data)}))
  }

  /** `work`: takes the job at the head of the queue (a run is created), or joins the node queue. */
  async work(): Promise<PublicKey> {
    const run = Keypair.generate()
    const {programId, market, mint} = this.network
    await this.send(
      [
        jobsInstruction(
          programId,
          'work',
          {
            run: run.publicKey,
            market,
            payer: this.address,
            stake: findStakeAddress(mint, this.address),
            // A market without an access key still loads this as a token account: the node's own will do.
            nft: getAssociatedTokenAddressSync(mint, this.address, true),
            metadata: SystemProgram.programId,
            authority: this.address,
            systemProgram: SystemProgram.programId,
          },
          {},
        ),
      ],
      [run],
    )
    return run.publicKey
  }

  /** `stop`: leaves the node queue. */
  async leaveQueue(): Promise<void> {
    const {programId, market} = this.network
    await this.send([jobsInstruction(programId, 'stop', {market, node: this.address, authority: this.address}, {})])
  }

  /** Records the result's CID with `finish`, which pays the node and refunds the poster. */
  async finish(address: PublicKey, runAddress: PublicKey, resultCid: string): Promise<void> {
    const [job, run] = await Promise.all([this.job(address), this.run(runAddress)])
    if (!job || !run) throw new Error(`job ${address.toBase58()} is no longer running`)
    const {programId, market, mint} = this.network
    await this.send([
      jobsInstruction(
        programId,
        'finish',
        {
          job: address,
          run: runAddress,
          market,
          vault: findVaultAddress(programId, market, mint)[0],
          deposit: getAssociatedTokenAddressSync(mint, job.payer, true),
          user: getAssociatedTokenAddressSync(mint, this.address, true),
          payerRun: run.payer,
          payerJob: job.payer,
          authority: this.address,
          tokenProgram: TOKEN_PROGRAM_ID,
        },
        {ipfsResult: ipfsHashToBytes(resultCid)},
      ),
    ])
  }

  /** Records the result of a job its poster ended (Done, without a result) with `complete`. */
  async complete(address: PublicKey, resultCid: string): Promise<void> {
    const {programId} = this.network
    await this.send([
      jobsInstruction(
        programId,
        'complete',
        {job: address, authority: this.address},
        {ipfsResult: ipfsHashToBytes(resultCid)},
      ),
    ])
  }

  private async account<T>(address: PublicKey, decode: (data: Uint8Array) => T): Promise<T | null> {
    const state = await this.network.getAccount(address)
    if (!state || !state.owner.equals(this.network.programId)) return null
    try {
      return decode(state.data)
    } catch {
      return null
    }
  }

  private async send(instructions: TransactionInstruction[], signers: Keypair[] = []): Promise<void> {
    const blockhash = await this.network.latestBlockhash()
    const tx = new Transaction({feePayer: this.address, ...blockhash}).add(...instructions)
    tx.sign(this.keypair, ...signers)
    await this.network.sendTransaction(tx.serialize())
  }
}
