import {Connection, Keypair, LAMPORTS_PER_SOL, PublicKey} from '@solana/web3.js'

import type {LocalnetNodeOptions} from '../../src/lib/localnet/nodes/node-agent.js'
import {type RunningLocalnet, startLocalnet} from '../../src/lib/localnet/server/server.js'
import type {MarketsSpec} from '../../src/lib/localnet/markets/spec.js'
import {removeDir, tempDir} from './files.js'
import {ONE_MARKET} from './markets.js'

export interface TestLocalnet {
  ln: RunningLocalnet
  connection: Connection
  /** Funded on first start like the default wallet. */
  wallet: Keypair
  dataDir: string
  mint: PublicKey
  market: PublicKey
  programId: PublicKey
  close(): Promise<void>
}

/** Starts a real localnet in this process on free ports in a temp directory. */
export async function startTestLocalnet(
  options: {
    dataDir?: string
    slotMs?: number
    wallet?: Keypair
    node?: LocalnetNodeOptions
    contentMaxBytes?: number
    /** Its markets: one market of one node unless given (the default markets run three node agents). */
    markets?: MarketsSpec
    /** Its manager's drain bound (the drainTimeout setting), ms. */
    drainTimeoutMs?: number
  } = {},
): Promise<TestLocalnet> {
  const dataDir = options.dataDir ?? tempDir()
  const wallet = options.wallet ?? Keypair.generate()
  const ln = await startLocalnet({
    dataDir,
    port: 0,
    slotMs: options.slotMs,
    contentMaxBytes: options.contentMaxBytes,
    wallet: wallet.publicKey,
    markets: options.markets ?? ONE_MARKET,
    drainTimeoutMs: options.drainTimeoutMs,
    // Simulated image pulls are instant unless a test asks for them.
    node: options.node && {pullSimulation: {rateMbPerSecond: 50, scale: 1_000_000}, ...options.node},
  })
  // No wsEndpoint: web3.js derives it (port + 1) as it does for any node.
  const connection = new Connection(ln.runtime.rpcUrl, 'confirmed')
  return {
    ln,
    connection,
    wallet,
    dataDir,
    mint: ln.node.mint,
    market: ln.node.market,
    programId: ln.node.chain.programId,
    close: () => ln.close(),
  }
}

/** A localnet started before the suite's tests and removed after them; its members are set once it runs. */
export function useLocalnet(
  options: {
    slotMs?: number
    node?: LocalnetNodeOptions
    contentMaxBytes?: number
    markets?: MarketsSpec
    drainTimeoutMs?: number
  } = {},
): TestLocalnet {
  const t = {} as TestLocalnet
  before(async () => {
    Object.assign(t, await startTestLocalnet(options))
  })
  after(async () => {
    // A suite skipped in an earlier before hook (no podman here) never started it.
    if (!t.ln) return
    await t.close()
    removeDir(t.dataDir)
  })
  return t
}

/** A new keypair holding `sol` SOL from the faucet. */
export async function fundedKeypair(t: TestLocalnet, sol = 10): Promise<Keypair> {
  const keypair = Keypair.generate()
  t.ln.node.fund(keypair.publicKey, {lamports: BigInt(sol * LAMPORTS_PER_SOL)})
  return keypair
}
