/**
 * Conformance with the network's official client (@nosana/kit, a devDependency): every instruction gpunet builds
 * and every account it encodes or decodes, byte for byte, in both directions, under the devnet and mainnet presets.
 */
import {strict as assert} from 'node:assert'
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {JobsClient} from '@nosana/kit'
import {Keypair, PublicKey} from '@solana/web3.js'

import {
  decodeJobAccount,
  decodeJobsInstructionData,
  decodeMarketAccount,
  decodeRunAccount,
  encodeJobAccount,
  encodeMarketAccount,
  encodeRunAccount,
  instructionAccountSpecs,
  JOB_ACCOUNT_SIZE,
  jobsInstruction,
  type JobsInstructionName,
  MARKET_ACCOUNT_SIZE,
  NETWORK_PRESETS,
  RUN_ACCOUNT_SIZE,
} from '../../../src/lib/market/index.js'

const kit = JobsClient as unknown as Record<string, (...args: unknown[]) => unknown>
const INSTRUCTIONS = fileURLToPath(
  new URL('../../../node_modules/@nosana/jobs-program/dist/instructions/', import.meta.url),
)

const key = () => Keypair.generate().publicKey
const bytes = (n: number) => new Uint8Array(Array.from({length: n}, () => Math.floor(Math.random() * 256)))
const pascal = (name: string) => name[0]!.toUpperCase() + name.slice(1)

/** The official client's accounts of an instruction in order, and which it types as signers (from its declarations). */
function officialAccounts(name: string): {names: string[]; signers: Set<string>} {
  const dts = readFileSync(`${INSTRUCTIONS}${name}.d.ts`, 'utf8')
  const order = /_INSTRUCTION_ACCOUNTS: \{([^}]*)\}/.exec(dts)![1]!
  const names = [...order.matchAll(/readonly (\w+): \d+/g)].map((m) => m[1]!)
  const input = new RegExp(`^export type ${pascal(name)}Input<.*= \\{$([\\s\\S]*?)^\\};`, 'm').exec(dts)![1]!
  const signers = new Set([...input.matchAll(/(\w+)\??: TransactionSigner</g)].map((m) => m[1]!))
  return {names, signers}
}

/** A signer as the official client's builders recognise one: an address that can sign transactions. */
function noopSigner(address: string) {
  return {address, signTransactions: async () => []}
}

/** Random arguments for an instruction, as gpunet types them (the IDL's names, shared by both clients). */
function randomArgs(name: JobsInstructionName): Record<string, unknown> {
  const all: Record<string, unknown> = {
    ipfsJob: bytes(32),
    ipfsResult: bytes(32),
    timeout: 86_400n + BigInt(Math.floor(Math.random() * 1000)),
    jobExpiration: 3600n,
    jobPrice: 1234n,
    jobTimeout: 7200n,
    jobType: 4,
    nodeXnosMinimum: (1n << 70n) + 5n,
    nodeStakeMinimum: (1n << 66n) + 9n,
  }
  const data = decodeJobsInstructionData(
    jobsInstruction(
      PublicKey.default,
      name,
      Object.fromEntries(instructionAccountSpecs(name).map(([n]) => [n, key()])) as never,
      all as never,
    ).data,
  )!
  return data.args as Record<string, unknown>
}

/** Role numbers of @solana/kit: bit 1 signer, bit 0 writable. */
const role = (isSigner: boolean, isWritable: boolean) => (isSigner ? 2 : 0) | (isWritable ? 1 : 0)

const NAMES = Object.keys(
  Object.fromEntries(
    (
      [
        'open',
        'update',
        'close',
        'closeAdmin',
        'assign',
        'list',
        'delist',
        'recover',
        'extend',
        'end',
        'work',
        'stop',
        'claim',
        'complete',
        'finish',
        'quit',
        'quitAdmin',
        'clean',
        'cleanAdmin',
      ] as const
    ).map((n) => [n, true]),
  ),
) as JobsInstructionName[]

describe('conformance with the official client (@nosana/kit)', () => {
  for (const network of ['devnet', 'mainnet'] as const) {
    const programId = NETWORK_PRESETS[network].programId

    describe(network, () => {
      for (const name of NAMES) {
        it(`builds ${name} as the official client does: program, accounts in order with flags, data`, () => {
          const official = officialAccounts(name)
          const ours = instructionAccountSpecs(name)
          assert.deepEqual(
            ours.map(([n]) => n),
            official.names,
            `${name}: account order`,
          )
          const keys = Object.fromEntries(ours.map(([n]) => [n, key()]))
          const args = randomArgs(name)
          const mine = jobsInstruction(programId, name, keys as never, args as never)
          const input = Object.fromEntries(
            official.names.map((n) => [
              n,
              official.signers.has(n) ? noopSigner(keys[n]!.toBase58()) : keys[n]!.toBase58(),
            ]),
          )
          const theirs = kit[`get${pascal(name)}Instruction`]!(
            {...input, ...args},
            {programAddress: programId.toBase58()},
          ) as {
            programAddress: string
            accounts: {address: string; role: number}[]
            data: Uint8Array
          }
          assert.equal(mine.programId.toBase58(), theirs.programAddress)
          assert.deepEqual(
            mine.keys.map((k) => ({address: k.pubkey.toBase58(), role: role(k.isSigner, k.isWritable)})),
            theirs.accounts.map((a) => ({address: a.address, role: a.role})),
          )
          assert.deepEqual(Buffer.from(mine.data), Buffer.from(theirs.data))
          // Both directions: the official decoder reads our bytes, ours reads theirs.
          const decoded = (
            kit[`get${pascal(name)}InstructionDataDecoder`]!() as {decode(b: Uint8Array): object}
          ).decode(mine.data)
          for (const [arg, value] of Object.entries(args)) {
            assert.deepEqual(normal((decoded as Record<string, unknown>)[arg]), normal(value), `${name}.${arg}`)
          }
          assert.deepEqual(decodeJobsInstructionData(theirs.data)?.args, args)
        })
      }
    })
  }

  const job = () => ({
    ipfsJob: bytes(32),
    ipfsResult: bytes(32),
    market: key(),
    node: key(),
    payer: key(),
    price: 123_456n,
    project: key(),
    state: 3,
    timeEnd: 1_700_000_500n,
    timeStart: 1_700_000_000n,
    timeout: 7200n,
  })
  const market = () => ({
    authority: key(),
    jobExpiration: 86_400n,
    jobPrice: 100n,
    jobTimeout: 7200n,
    jobType: 4,
    vault: key(),
    vaultBump: 253,
    nodeAccessKey: key(),
    nodeXnosMinimum: (1n << 90n) + 1n,
    queueType: 1,
    queue: [key(), key(), key()],
  })
  const run = () => ({job: key(), node: key(), payer: key(), state: 0, time: 1_700_000_123n})

  /** Our fields with keys as base58, as the official codecs take and give them. */
  const asKit = (value: object) =>
    Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        v instanceof PublicKey ? v.toBase58() : Array.isArray(v) ? v.map((x: PublicKey) => x.toBase58()) : v,
      ]),
    )

  const accounts = [
    {name: 'JobAccount', make: job, encode: encodeJobAccount, decode: decodeJobAccount, size: JOB_ACCOUNT_SIZE},
    {name: 'RunAccount', make: run, encode: encodeRunAccount, decode: decodeRunAccount, size: RUN_ACCOUNT_SIZE},
    {
      name: 'MarketAccount',
      make: market,
      encode: encodeMarketAccount,
      decode: decodeMarketAccount,
      size: MARKET_ACCOUNT_SIZE,
    },
  ] as const

  for (const {name, make, encode, decode, size} of accounts) {
    it(`encodes and decodes ${name} as the official client does, at the allocated ${size} bytes`, () => {
      const value = make()
      const ours = encode(value as never)
      const theirs = (kit[`get${name}Encoder`]!() as {encode(v: unknown): Uint8Array}).encode(asKit(value))
      assert.equal(ours.length, size)
      assert.deepEqual(ours.subarray(0, theirs.length), Buffer.from(theirs))
      assert.ok(
        ours.subarray(theirs.length).every((b) => b === 0),
        'the padding is zero',
      )
      // The official decoder reads our allocated bytes; ours reads theirs padded as the chain allocates them.
      const official = (kit[`get${name}Decoder`]!() as {decode(b: Uint8Array): Record<string, unknown>}).decode(ours)
      const {discriminator, ...fields} = official
      assert.equal(discriminator instanceof Uint8Array, true)
      assert.deepEqual(normal(fields), normal(asKit(value)))
      const padded = Buffer.concat([Buffer.from(theirs), Buffer.alloc(size - theirs.length)])
      assert.deepEqual(decode(padded), value)
    })
  }
})

/** Values comparable across the two clients: byte arrays as plain arrays, numbers as bigints. */
function normal(value: unknown): unknown {
  if (value instanceof Uint8Array) return [...value]
  if (typeof value === 'number') return BigInt(value)
  if (Array.isArray(value)) return value.map(normal)
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normal(v)]))
  }
  return value
}
