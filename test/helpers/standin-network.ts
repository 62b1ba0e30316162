/**
 * A devnet or mainnet as the deployed jobs program lays it out, on the stand-in RPC node: the default market, a
 * funded wallet, jobs and runs at their allocated sizes, encoded with the official client's codecs (@nosana/kit).
 */
import {JobsClient} from '@nosana/kit'
import {Keypair, PublicKey} from '@solana/web3.js'

import {NETWORK_PRESETS} from '../../src/lib/market/index.js'
import {fundWallet, rentExempt, type StandinRpc} from './standin.js'

export type RealNetwork = 'devnet' | 'mainnet'

/** Addresses from reference/README.md, written out so tests do not derive them with the code under test. */
export const REFERENCE = {
  rewardsProgram: 'nosRB8DUV67oLNrL45bo2pFLrmsWPiewe2Lk2DRNYCp',
  rewardsReflection: '6tjbAfNHnUusWLZqFznMKyBrjs1ZX92eyKwiUi2Bsg3x',
  devnet: {
    rewardsVault: '4wk8dRGWQSCdRzvVJxu1jawHkV9pfzrEfUxYwYfwbXuk',
    vault: '2rdjmeokDBJCzRbeTARttZsuxhyZ7QgLzG6vS5TXw7FS',
  },
  mainnet: {
    rewardsVault: '37xZ4jY3bSMBgxwekwdALRZK1kAUCh7YkkPabA4P2tq8',
    vault: '6xXAonT5D14tkF6RPUfhgvEioTCHy4YKsLZ2xKDumpwU',
  },
}
/** Sizes the program allocates, from reference/README.md. */
export const SIZES = {job: 240, run: 120, market: 10_224}
export const PRICE = 10n
export const MARKET_TIMEOUT = 3600n

const kit = JobsClient as unknown as Record<
  string,
  () => {encode(v: unknown): Uint8Array; decode(b: Uint8Array): unknown}
>

/** The official client's bytes for an account, padded to the size the program allocates. */
export function allocated(name: 'JobAccount' | 'RunAccount' | 'MarketAccount', value: object, size: number): Buffer {
  const bytes = kit[`get${name}Encoder`]!().encode(value)
  return Buffer.concat([Buffer.from(bytes), Buffer.alloc(size - bytes.length)])
}

export interface JobFields {
  ipfsJob: Uint8Array
  timeout: bigint
  state: number
  /** The digest of the result's CIDv0 (none: all zeros). */
  ipfsResult?: Uint8Array
}

/**
 * The network's default market (PRICE per second, MARKET_TIMEOUT), the wallet funded, and each `list` sent
 * creating its job as the program would; `runBy` makes a node take each job at once (a run for it).
 */
export function seedNetwork(rpc: StandinRpc, name: RealNetwork, wallet: PublicKey, runBy?: PublicKey): void {
  const preset = NETWORK_PRESETS[name]
  rpc.set(preset.market!, {
    owner: preset.programId,
    lamports: rentExempt(SIZES.market),
    data: allocated(
      'MarketAccount',
      {
        authority: Keypair.generate().publicKey.toBase58(),
        jobExpiration: 86_400,
        jobPrice: PRICE,
        jobTimeout: MARKET_TIMEOUT,
        jobType: 0,
        vault: REFERENCE[name].vault,
        vaultBump: 255,
        nodeAccessKey: PublicKey.default.toBase58(),
        nodeXnosMinimum: 0,
        queueType: 255,
        queue: [],
      },
      SIZES.market,
    ),
  })
  fundWallet(rpc, wallet, preset.mint!, 5_000_000_000, 1_000_000_000n)
  rpc.onSend = (tx) => {
    const list = tx.instructions.find((ix) => ix.programId.equals(preset.programId))
    if (!list || !Buffer.from(list.data.subarray(0, 8)).equals(Buffer.from(JobsClient.LIST_DISCRIMINATOR))) return
    const args = kit.getListInstructionDataDecoder!().decode(list.data) as {ipfsJob: Uint8Array; timeout: bigint}
    const job = list.keys[0]!.pubkey
    putJobAccount(rpc, name, job, {ipfsJob: args.ipfsJob, timeout: args.timeout, state: 0, payer: wallet})
    if (runBy) putRunAccount(rpc, name, job, runBy, wallet)
  }
}

/** A job of `payer` (also its project) on the default market, owned by the jobs program unless `owner` is given. */
export function putJobAccount(
  rpc: StandinRpc,
  name: RealNetwork,
  address: PublicKey,
  fields: JobFields & {payer: PublicKey},
  // Another owner gives a job account with the right bytes that the jobs program did not write: a forgery.
  owner?: PublicKey,
): void {
  const preset = NETWORK_PRESETS[name]
  rpc.set(address, {
    owner: owner ?? preset.programId,
    lamports: rentExempt(SIZES.job),
    data: allocated(
      'JobAccount',
      {
        ipfsJob: fields.ipfsJob,
        timeout: fields.timeout,
        state: fields.state,
        ipfsResult: fields.ipfsResult ?? new Uint8Array(32),
        market: preset.market!.toBase58(),
        node: PublicKey.default.toBase58(),
        payer: fields.payer.toBase58(),
        price: PRICE,
        project: fields.payer.toBase58(),
        timeEnd: 0,
        timeStart: 0,
      },
      SIZES.job,
    ),
  })
}

/** A run of `job` by `node`, created at unix time `time` (1,700,000,000 unless told); returns its address. */
export function putRunAccount(
  rpc: StandinRpc,
  name: RealNetwork,
  job: PublicKey,
  node: PublicKey,
  payer: PublicKey,
  // A fixed time keeps reports comparable; a run whose paid time must still last is created now.
  time = 1_700_000_000,
): PublicKey {
  const address = Keypair.generate().publicKey
  rpc.set(address, {
    owner: NETWORK_PRESETS[name].programId,
    lamports: rentExempt(SIZES.run),
    data: allocated(
      'RunAccount',
      {job: job.toBase58(), node: node.toBase58(), payer: payer.toBase58(), state: 0, time},
      SIZES.run,
    ),
  })
  return address
}
