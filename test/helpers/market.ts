import {getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID} from '@solana/spl-token'
import {
  ComputeBudgetProgram,
  Keypair,
  type PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'

import {findVaultAddress, ipfsHashToBytes, jobsInstruction} from '../../src/lib/market/index.js'
import {findStakeAddress} from '../../src/lib/market/codec/pda.js'
import {localnetRewardsAccounts} from '../../src/lib/localnet/rewards.js'
import type {TestLocalnet} from './localnet.js'
import {rpc} from './json-rpc.js'

/** A CIDv0 of a job definition ("hello world\n"). */
export const JOB_CID = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'

/** A throwaway address. */
export const anyKey = (): PublicKey => Keypair.generate().publicKey

/** A `list` of a job on `market`, paid from the payer's associated token account. */
export function listInstruction(options: {
  programId: PublicKey
  market: PublicKey
  mint: PublicKey
  payer: PublicKey
  job: PublicKey
  run: PublicKey
  timeout: bigint
  /** The job's project; the payer by default. */
  authority?: PublicKey
  /** The definition's CIDv0; JOB_CID by default. */
  cid?: string
}): TransactionInstruction {
  const {programId, market, mint, payer, job, run, timeout} = options
  return jobsInstruction(
    programId,
    'list',
    {
      job,
      market,
      run,
      user: getAssociatedTokenAddressSync(mint, payer, true),
      vault: findVaultAddress(programId, market, mint)[0],
      payer,
      ...localnetRewardsAccounts(mint),
      authority: options.authority ?? payer,
      tokenProgram: TOKEN_PROGRAM_ID,
      systemProgram: SystemProgram.programId,
    },
    {ipfsJob: ipfsHashToBytes(options.cid ?? JOB_CID), timeout},
  )
}

/**
 * A `work` by `node` on the localnet's market: the node takes the next queued job, or joins the queue. The node
 * needs a stake account (`t.ln.node.stake(node)`) and a token account of the mint (its NFT account).
 */
export function workInstruction(
  t: Pick<TestLocalnet, 'programId' | 'market' | 'mint'>,
  node: PublicKey,
  run: PublicKey,
): TransactionInstruction {
  return jobsInstruction(
    t.programId,
    'work',
    {
      run,
      market: t.market,
      payer: node,
      stake: findStakeAddress(t.mint, node),
      nft: getAssociatedTokenAddressSync(t.mint, node, true),
      metadata: SystemProgram.programId,
      authority: node,
      systemProgram: SystemProgram.programId,
    },
    {},
  )
}

let unique = 0

/**
 * Signs instructions (the first signer pays the fee) and sends them over JSON-RPC; returns the node's answer. A
 * compute-unit limit that differs each time goes first, so a repeated transaction is not refused as already
 * processed: the instructions given are at index 1 and after.
 */
export async function sendInstructions(
  t: Pick<TestLocalnet, 'connection'>,
  instructions: TransactionInstruction[],
  signers: Keypair[],
) {
  const tx = new Transaction({feePayer: signers[0]!.publicKey, ...(await t.connection.getLatestBlockhash())}).add(
    ComputeBudgetProgram.setComputeUnitLimit({units: 200_000 + unique++}),
    ...instructions,
  )
  tx.sign(...signers)
  return rpc(t.connection.rpcEndpoint, 'sendTransaction', [tx.serialize().toString('base64'), {encoding: 'base64'}])
}

/** Lists a job on the localnet's default market, paid by its wallet; returns the job's address. */
export async function listWithWallet(t: TestLocalnet, timeout: bigint, cid?: string): Promise<PublicKey> {
  const job = Keypair.generate()
  const run = Keypair.generate()
  const ix = listInstruction({
    programId: t.programId,
    market: t.market,
    mint: t.mint,
    payer: t.wallet.publicKey,
    job: job.publicKey,
    run: run.publicKey,
    timeout,
    cid,
  })
  const answer = await sendInstructions(t, [ix], [t.wallet, job, run])
  if (answer.error) throw new Error(`list failed: ${answer.error.message}`)
  return job.publicKey
}
