/**
 * The wallet's key without web3.js: where its file is, how it is read and parsed, and signing with it. wallet.ts
 * builds the full Wallet (web3.js keys and signer, creation) on this; a command served before web3.js loads
 * (`job exec`, src/fast-start.ts) signs with this alone.
 */
import bs58 from 'bs58'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {activeProfile} from './config.js'
import {signingKey, signMessage} from './ed25519.js'
import {ExitCode, GpunetError} from './errors.js'
import {configDir} from './private-file.js'
import {describeReadError} from './read-error.js'

/** A wallet's key: its base58 address and a signer; the secret key stays inside this object. */
export interface WalletKey {
  readonly address: string
  readonly file: string
  /** Signs bytes with ed25519, as Solana wallets do. */
  sign(message: Uint8Array): Uint8Array
}

export interface WalletOptions {
  /** `--wallet`: wins over `GPUNET_WALLET` and the default path. */
  path?: string
  /**
   * Creates the wallet when it is missing and not named by `--wallet` (only on localnet, where keys hold nothing
   * of value): the default path or `GPUNET_WALLET`, which the localnet's first start also creates and funds.
   */
  createIfMissing?: boolean
  /** Told when a wallet was created (stderr in commands). */
  note?: (line: string) => void
  env?: NodeJS.ProcessEnv
}

/** The path of the wallet to use: `--wallet` > `GPUNET_WALLET` > the profile's > `~/.config/gpunet/wallet.json`. */
export function walletPath(options: WalletOptions = {}): {file: string; isDefault: boolean} {
  const env = options.env ?? process.env
  if (options.path) return {file: options.path, isDefault: false}
  if (env.GPUNET_WALLET) return {file: env.GPUNET_WALLET, isDefault: false}
  const inProfile = activeProfile(env)?.profile.wallet
  if (inProfile) return {file: inProfile, isDefault: false}
  return {file: join(configDir(env), 'wallet.json'), isDefault: true}
}

/** Reads the key of the wallet `options` name (never creating one): what a command that only signs needs. */
export function loadWalletKey(options: Omit<WalletOptions, 'createIfMissing' | 'note'> = {}): Promise<WalletKey> {
  const {file} = walletPath(options)
  return Promise.resolve(walletKeyFromBytes(readKeypairFile(file), file))
}

/** The 64 bytes of the keypair file at `file`; exit 3 when it cannot be read or holds no keypair. */
export function readKeypairFile(file: string): Uint8Array {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new GpunetError('wallet_unreadable', `cannot read the wallet ${file}: ${describeReadError(error)}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'pass --wallet FILE or set GPUNET_WALLET to a Solana keypair file (a JSON array of 64 numbers) or a file holding a base58 secret key',
      cause: error,
    })
  }
  return parseKeypairText(text, file)
}

/** The key of the 64 bytes of a Solana keypair; refuses a public half that does not match the seed. */
export function walletKeyFromBytes(bytes: Uint8Array, file = '<memory>'): WalletKey {
  const key = signingKey(bytes)
  if (!key) {
    throw new GpunetError(
      'wallet_invalid',
      `${file} is not a valid keypair: its public key does not match its secret key`,
      {
        exitCode: ExitCode.INVALID_INPUT,
      },
    )
  }
  return {
    address: bs58.encode(bytes.subarray(32, 64)),
    file,
    sign: (message) => signMessage(message, key),
  }
}

/** The 64 secret key bytes of a keypair's text: a JSON array of numbers (Solana CLI file), or a base58 string. */
export function parseKeypairText(text: string, file: string): Uint8Array {
  const trimmed = text.trim()
  if (trimmed.startsWith('[')) {
    let value: unknown
    try {
      value = JSON.parse(trimmed)
    } catch {
      value = undefined
    }
    const isBytes =
      Array.isArray(value) && value.length === 64 && value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
    if (isBytes) return Uint8Array.from(value as number[])
  } else if (/^[1-9A-HJ-NP-Za-km-z]+$/.test(trimmed)) {
    const bytes = bs58.decode(trimmed)
    if (bytes.length === 64) return bytes
  }
  throw new GpunetError('wallet_invalid', `${file} is not a Solana keypair file`, {
    exitCode: ExitCode.INVALID_INPUT,
    hint: 'a keypair file is a JSON array of 64 numbers, as written by `solana-keygen new`, or a base58 secret key',
  })
}
