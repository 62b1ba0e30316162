/**
 * The node's side of the jobs program on a localnet: it reads the market queue and jobs with the IDL codecs,
 * and signs `work` and `finish` with its own key, sent through the chain as any node's transactions are.
 */
import {
  createAssociatedTokenAccountIdempotentInstruction,
  getAssociatedTokenAddressSync,
  TOKEN_PROGRAM_ID,
} from '@solana/spl-token'
import {Keypair, type PublicKey, SystemProgram, Transaction, type TransactionInstruction} from '@solana/web3.js'

import type {Localnet} from '../localnet/node.js'
import {transactionErrorMessage} from '../localnet/tx-error.js'
import {
  decodeJobAccount,
  decodeMarketAccount,
  decodeRunAccount,
  type JobAccount,
  QueueType,
  RUN_ACCOUNT_SIZE,
  type RunAccount,
} from '../market/accounts.js'
import {jobsInstruction} from '../market/instructions.js'
import {ipfsHashToBytes} from '../market/ipfs-hash.js'
import {findVaultAddress} from '../market/pda.js'

/** A node's view of one localnet market, signing as `keypair`. */
export class NodeChainClient {
  constructor(
    private readonly localnet: Localnet,
    readonly keypair: Keypair,
  ) {}

  get address(): PublicKey {
    return this.keypair.publicKey
  }

  /** Gives the node SOL for fees when it has little, and the token account its earnings are paid into. */
  prepare(minLamports: bigint): void {
    const balance = this.localnet.chain.account(this.address)?.lamports ?? 0n
    if (balance < minLamports) this.localnet.fund(this.address, {lamports: minLamports * 10n})
    const {mint} = this.localnet
    const account = getAssociatedTokenAddressSync(mint, this.address, true)
    if (!this.localnet.chain.account(account))
      this.send([createAssociatedTokenAccountIdempotentInstruction(this.address, account, this.address, mint)])
  }

  /** The job at the head of the market queue, when the queue holds jobs. */
  queueHead(): {address: PublicKey; job: JobAccount} | null {
    const market = this.account(this.localnet.market, decodeMarketAccount)
    if (!market || market.queueType !== QueueType.JOB || market.queue.length === 0) return null
    const address = market.queue[0]!
    const job = this.job(address)
    return job && {address, job}
  }

  /** A job account, or null once it is gone or not a job. */
  job(address: PublicKey): JobAccount | null {
    return this.account(address, decodeJobAccount)
  }

  /** A run account, or null once `finish`, `end` or `quit` closed it. */
  run(address: PublicKey): RunAccount | null {
    return this.account(address, decodeRunAccount)
  }

  /** The run accounts of this node: the jobs it is running on chain. */
  ownRuns(): {address: PublicKey; run: RunAccount}[] {
    const {chain} = this.localnet
    return chain
      .programAccounts(chain.programId)
      .filter(({account}) => account.data.length === RUN_ACCOUNT_SIZE)
      .map(({pubkey, account}) => ({address: pubkey, run: decodeRunAccount(account.data)}))
      .filter(({run}) => run.node.equals(this.address))
  }

  /** Takes the head job with `work`; returns the new run account's address. */
  work(): PublicKey {
    const run = Keypair.generate()
    const anyKey = SystemProgram.programId
    this.send(
      [
        jobsInstruction(
          this.localnet.chain.programId,
          'work',
          {
            run: run.publicKey,
            market: this.localnet.market,
            payer: this.address,
            // The localnet's default market asks for no stake and no access NFT.
            stake: anyKey,
            nft: anyKey,
            metadata: anyKey,
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

  /** Records the result's CID with `finish`, which pays the node and refunds the poster. */
  finish(address: PublicKey, runAddress: PublicKey, resultCid: string): void {
    const job = this.job(address)
    const run = this.run(runAddress)
    if (!job || !run) throw new Error(`job ${address.toBase58()} is no longer running`)
    const {mint, market, chain} = this.localnet
    this.send([
      jobsInstruction(
        chain.programId,
        'finish',
        {
          job: address,
          run: runAddress,
          market,
          vault: findVaultAddress(chain.programId, market, mint)[0],
          deposit: getAssociatedTokenAddressSync(mint, job.payer, true),
          user: getAssociatedTokenAddressSync(mint, this.address, true),
          payerJob: job.payer,
          payerRun: run.payer,
          authority: this.address,
          tokenProgram: TOKEN_PROGRAM_ID,
        },
        {ipfsResult: ipfsHashToBytes(resultCid)},
      ),
    ])
  }

  private account<T>(address: PublicKey, decode: (data: Uint8Array) => T): T | null {
    const state = this.localnet.chain.account(address)
    if (!state || !state.owner.equals(this.localnet.chain.programId)) return null
    try {
      return decode(state.data)
    } catch {
      return null
    }
  }

  private send(instructions: TransactionInstruction[], signers: Keypair[] = []): void {
    const {chain} = this.localnet
    const tx = new Transaction({feePayer: this.address, ...chain.latestBlockhash()}).add(...instructions)
    tx.sign(this.keypair, ...signers)
    const outcome = chain.send(tx.serialize())
    if (outcome.kind === 'landed' && !outcome.execution.err) return
    const reason =
      outcome.kind === 'preflight-failed' && outcome.execution.err
        ? transactionErrorMessage(outcome.execution.err)
        : outcome.kind
    throw new Error(`node transaction failed: ${reason}`)
  }
}
