/** The user's wallet: a Solana CLI keypair file (a JSON array of the 64 secret key bytes), mode 0600. */
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../errors.js'

/** `GPUNET_WALLET`, else `$XDG_CONFIG_HOME/gpunet/wallet.json` (`~/.config/gpunet/wallet.json`). */
export function defaultWalletPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GPUNET_WALLET) return env.GPUNET_WALLET
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'gpunet', 'wallet.json')
}

/** Reads a keypair file. */
export function readKeypair(path: string): Keypair {
  try {
    return Keypair.fromSecretKey(Uint8Array.from(JSON.parse(readFileSync(path, 'utf8')) as number[]))
  } catch (error) {
    throw new GpunetError('wallet_unreadable', `cannot read the keypair file ${path}: ${(error as Error).message}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'A keypair file is a JSON array of 64 numbers, as `solana-keygen new` writes it.',
    })
  }
}

/** Writes a keypair file readable by its owner only. */
export function writeKeypair(path: string, keypair: Keypair): void {
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, JSON.stringify([...keypair.secretKey]), {mode: 0o600, flag: 'wx'})
}

/** Reads the keypair at `path`, creating it first when there is none. */
export function loadOrCreateKeypair(path: string): {keypair: Keypair; created: boolean} {
  if (existsSync(path)) return {keypair: readKeypair(path), created: false}
  const keypair = Keypair.generate()
  writeKeypair(path, keypair)
  return {keypair, created: true}
}
