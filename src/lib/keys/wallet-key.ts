/**
 * The wallet's key without web3.js: how its file is read and parsed, and signing with it. Which file is the
 * settings' choice (settings.ts walletPath); wallet.ts builds the full Wallet (web3.js keys and signer, creation)
 * on this, and a command served before web3.js loads (`job exec`, src/cli/fast-start.ts) signs with this alone.
 */
import bs58 from 'bs58'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {signingKey, signMessage} from './ed25519.js'
import {ExitCode, GpunetError} from '../errors.js'
import {describeReadError} from '../text/read-error.js'
import type {InForce, Network} from '../network.js'

/** A wallet's key: its base58 address and a signer; the secret key stays inside this object. */
export interface WalletKey {
  readonly address: string
  readonly file: string
  /** Signs bytes with ed25519, as Solana wallets do. */
  sign(message: Uint8Array): Uint8Array
}

/** What the wallet's file depends on of a command's settings (settings.ts' Settings). */
export interface WalletSettings {
  readonly network: Network
  /** gpunet's own folder, where the default wallet lives. */
  readonly configDir: string
  get(key: 'wallet'): InForce | undefined
}

/**
 * The wallet file of a command: the wallet setting in force (`--wallet` > `GPUNET_WALLET` > the profile's), else
 * `wallet.json` in gpunet's own folder.
 */
export function walletPath(settings: Omit<WalletSettings, 'network'>): {file: string; isDefault: boolean} {
  const set = settings.get('wallet')
  return set ? {file: set.value, isDefault: false} : {file: join(settings.configDir, 'wallet.json'), isDefault: true}
}

/** Reads the key of a command's wallet, the file its settings name (never creating one): what signing alone needs. */
export function openWalletKey(settings: Omit<WalletSettings, 'network'>): Promise<WalletKey> {
  const {file} = walletPath(settings)
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
