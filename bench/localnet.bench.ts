/**
 * Localnet throughput and start-up: transactions per second of plain SOL transfers and of the jobs program's
 * `list`, sent over JSON-RPC to a `gpunet localnet start` process (sequential and 16 in flight), and the cold
 * start of that command against `node -e 0` measured in the same run. Everything runs on 127.0.0.1 in a temp
 * directory.
 */
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from '@solana/web3.js'

import type {GenesisRecord} from '../src/lib/localnet/node.js'
import {localnetFiles} from '../src/lib/localnet/paths.js'
import {writeKeypair} from '../src/lib/wallet.js'
import {spawnForegroundLocalnet} from '../test/helpers/cli-localnet.js'
import {listInstruction} from '../test/helpers/market.js'

const TRANSACTIONS = 400
const IN_FLIGHT = 16
const STARTS = 5

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gpunet-bench-'))
  try {
    await throughput(join(dir, 'tps'))
    await coldStart(join(dir, 'start'))
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

/** Transactions per second against a localnet process, as a client sees it over JSON-RPC. */
async function throughput(dataDir: string): Promise<void> {
  const payer = Keypair.generate()
  mkdirSync(dataDir, {recursive: true})
  writeKeypair(join(dataDir, 'wallet.json'), payer) // funded by the first start: 100 SOL, 1000 tokens
  const {child, status} = await spawnForegroundLocalnet(dataDir, {GPUNET_WALLET: join(dataDir, 'wallet.json')})
  const rpcUrl = status.rpcUrl!
  try {
    const connection = new Connection(rpcUrl, 'confirmed')
    const genesis = JSON.parse(readFileSync(localnetFiles(dataDir).genesis, 'utf8')) as GenesisRecord
    const [programId, market, mint] = [
      new PublicKey(genesis.programId),
      new PublicKey(genesis.market),
      new PublicKey(genesis.mint),
    ]
    const {blockhash, lastValidBlockHeight} = await connection.getLatestBlockhash()
    const sign = (instructions: TransactionInstruction[], signers: Keypair[]) => {
      const tx = new Transaction({feePayer: payer.publicKey, blockhash, lastValidBlockHeight}).add(...instructions)
      tx.sign(payer, ...signers)
      return tx.serialize().toString('base64')
    }
    const transfers = (count: number) =>
      Array.from({length: count}, () =>
        sign(
          [
            SystemProgram.transfer({
              fromPubkey: payer.publicKey,
              toPubkey: Keypair.generate().publicKey,
              lamports: LAMPORTS_PER_SOL / 100,
            }),
          ],
          [],
        ),
      )
    const lists = (count: number) =>
      Array.from({length: count}, () => {
        const job = Keypair.generate()
        const run = Keypair.generate()
        const ix = listInstruction({
          programId,
          market,
          mint,
          payer: payer.publicKey,
          job: job.publicKey,
          run: run.publicKey,
          timeout: 60n,
        })
        return sign([ix], [job, run])
      })
    // The market queue holds at most 314 jobs, so the two rounds of `list` stay under that.
    for (const [name, build, count] of [
      ['SOL transfer', transfers, TRANSACTIONS],
      ['jobs program list', lists, 150],
    ] as const) {
      // Signed before the clock starts: the figures are the localnet's, not the client's signing.
      const [first, second] = [build(count), build(count)]
      const sequential = await send(rpcUrl, first, 1)
      const parallel = await send(rpcUrl, second, IN_FLIGHT)
      process.stdout.write(
        `${name.padEnd(18)} ${sequential.toFixed(0).padStart(6)} tx/s sequential, ${parallel.toFixed(0).padStart(6)} tx/s with ${IN_FLIGHT} in flight\n`,
      )
    }
  } finally {
    child.kill('SIGTERM')
    await once(child, 'exit')
  }
}

/** Sends signed transactions over JSON-RPC, `inFlight` at a time; returns transactions per second. */
async function send(url: string, transactions: string[], inFlight: number): Promise<number> {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({length: inFlight}, async () => {
      while (next < transactions.length) {
        const tx = transactions[next++]!
        const res = await fetch(url, {
          method: 'POST',
          headers: {'content-type': 'application/json'},
          body: JSON.stringify({jsonrpc: '2.0', id: 1, method: 'sendTransaction', params: [tx, {encoding: 'base64'}]}),
        })
        const answer = (await res.json()) as {error?: {message: string}}
        if (answer.error) throw new Error(`sendTransaction failed: ${answer.error.message}`)
      }
    }),
  )
  return transactions.length / ((performance.now() - started) / 1000)
}

async function coldStart(dataDir: string): Promise<void> {
  const node = await median(() => timeProcess([process.execPath, '-e', '0']))
  const first = await timeLocalnet(dataDir)
  const warm = await median(() => timeLocalnet(dataDir))
  process.stdout.write(`node -e 0          ${node.toFixed(0).padStart(6)} ms\n`)
  process.stdout.write(
    `localnet 1st start ${first.toFixed(0).padStart(6)} ms  (${(first / node).toFixed(1)}× node -e 0; gpunet localnet start until it answers; creates token, market, wallet funds)\n`,
  )
  process.stdout.write(
    `localnet restart   ${warm.toFixed(0).padStart(6)} ms  (${(warm / node).toFixed(1)}× node -e 0; loads the saved chain), median of ${STARTS}\n`,
  )
}

/** Milliseconds from running `gpunet localnet start` until it answers, then stops it. */
async function timeLocalnet(dataDir: string): Promise<number> {
  const started = performance.now()
  const {child} = await spawnForegroundLocalnet(dataDir, {GPUNET_WALLET: join(dataDir, 'wallet.json')})
  const elapsed = performance.now() - started
  child.kill('SIGTERM')
  await once(child, 'exit')
  return elapsed
}

async function timeProcess(argv: string[]): Promise<number> {
  const started = performance.now()
  const child = spawn(argv[0]!, argv.slice(1), {stdio: 'ignore'})
  await once(child, 'exit')
  return performance.now() - started
}

async function median(measure: () => Promise<number>): Promise<number> {
  const samples: number[] = []
  for (let i = 0; i < STARTS; i++) samples.push(await measure())
  return samples.sort((a, b) => a - b)[Math.floor(STARTS / 2)]!
}
