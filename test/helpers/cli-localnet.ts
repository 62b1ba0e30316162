import {type ChildProcessWithoutNullStreams, spawn} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

import {Connection, type Keypair, PublicKey} from '@solana/web3.js'

import type {LocalnetStatus} from '../../src/lib/localnet/server/control.js'
import {isAlive} from '../../src/lib/process/alive.js'
import {readKeypair} from '../../src/lib/keys/wallet.js'
import {BIN, type CliResult, runCli} from './cli.js'
import {removeDir, tempDir} from './files.js'
import {INSTANT_PULLS, writeOneMarketFile} from './markets.js'

/** An isolated home for CLI tests: localnet data, wallet and XDG folders in one temp directory, free ports. */
export interface CliSandbox {
  dir: string
  dataDir: string
  env: NodeJS.ProcessEnv
  run(args: string[]): Promise<CliResult>
  /** Stops any localnet the test started (by its pid) and removes the directory. */
  cleanup(): Promise<void>
}

/** An isolated CLI home for the tests of a suite: created before them, its localnet stopped and removed after. */
export function useCliSandbox(): CliSandbox {
  const box = {} as CliSandbox
  before(() => {
    Object.assign(box, cliSandbox())
  })
  after(() => box.cleanup?.())
  return box
}

export function cliSandbox(): CliSandbox {
  const dir = tempDir('gpunet-cli-')
  const dataDir = join(dir, 'localnet')
  const env = {
    GPUNET_LOCALNET_DIR: dataDir,
    GPUNET_LOCALNET_PORT: '0',
    GPUNET_GATEWAY_PORT: '0',
    GPUNET_WALLET: join(dir, 'wallet.json'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'data'),
    // One market of one node, and instant simulated pulls: what a test needs unless it says otherwise.
    GPUNET_LOCALNET_MARKETS: writeOneMarketFile(dir),
    GPUNET_LOCALNET_PULL_SCALE: INSTANT_PULLS,
  }
  return {
    dir,
    dataDir,
    env,
    run: (args) => runCli(args, {env}),
    async cleanup() {
      await runCli(['localnet', 'stop'], {env})
      try {
        const {pid} = JSON.parse(readFileSync(join(dataDir, 'localnet.json'), 'utf8')) as {pid: number}
        if (isAlive(pid)) process.kill(pid, 'SIGKILL')
      } catch {
        // no runtime file: nothing runs
      }
      removeDir(dir)
    },
  }
}

/** Runs `gpunet localnet start --json` in the foreground; resolves with the process and its status once it answers. */
export async function spawnForegroundLocalnet(
  dataDir: string,
  env: NodeJS.ProcessEnv = {},
  args: string[] = [],
): Promise<{child: ChildProcessWithoutNullStreams; status: LocalnetStatus}> {
  const argv = [BIN, 'localnet', 'start', '--json', '--data-dir', dataDir, '--port', '0', ...args]
  const pinned = {
    GPUNET_LOCALNET_MARKETS: writeOneMarketFile(dirname(dataDir)),
    GPUNET_LOCALNET_PULL_SCALE: INSTANT_PULLS,
  }
  const child = spawn(process.execPath, argv, {
    env: {...process.env, NO_COLOR: '1', GPUNET_GATEWAY_PORT: '0', ...pinned, ...env},
  })
  let stdout = ''
  child.stdout.setEncoding('utf8')
  for await (const chunk of child.stdout) {
    stdout += chunk as string
    try {
      return {child, status: JSON.parse(stdout) as LocalnetStatus}
    } catch {
      // the document is not complete yet
    }
  }
  throw new Error(`the localnet exited before it was ready: ${stdout}`)
}

/** The chain of a sandbox's localnet, to check from the test what the CLI did. */
export interface SandboxChain {
  connection: Connection
  programId: PublicKey
  market: PublicKey
  mint: PublicKey
  contentStoreUrl: string
  /** The sandbox's default wallet (created and funded by the localnet's first start). */
  wallet: Keypair
}

/** Connects to the localnet a sandbox runs (start it first, e.g. with a command that needs it). */
export async function sandboxChain(box: CliSandbox): Promise<SandboxChain> {
  const status = JSON.parse((await box.run(['localnet', 'status', '--json'])).stdout) as LocalnetStatus
  return {
    connection: new Connection(status.rpcUrl!, 'confirmed'),
    programId: new PublicKey(status.programId!),
    market: new PublicKey(status.market!),
    mint: new PublicKey(status.mint!),
    contentStoreUrl: status.contentStoreUrl!,
    wallet: readKeypair(box.env.GPUNET_WALLET!),
  }
}
