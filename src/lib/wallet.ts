import bs58 from 'bs58'
import {readFile} from 'node:fs/promises'
import {join} from 'node:path'

import {describeReadError} from './definition/check.js'
import {generateKeypairBytes, signingKey, signMessage} from './ed25519.js'
import {ExitCode, GpunetError} from './errors.js'
import {configDir, writePrivateFile} from './private-file.js'

/** A Solana keypair: the base58 address and a signer; the secret key never leaves this object. */
export interface Wallet {
  readonly address: string
  readonly file: string
  /** Signs bytes with ed25519, as Solana wallets do. */
  sign(message: Uint8Array): Uint8Array
}

export interface WalletOptions {
  /** `--wallet`: wins over `GPUNET_WALLET` and the default path. */
  path?: string
  /** Creates the default wallet when it is missing (only on localnet, where keys hold nothing of value). */
  createIfMissing?: boolean
  env?: NodeJS.ProcessEnv
}

/** The path of the wallet to use: `--wallet` > `GPUNET_WALLET` > `~/.config/gpunet/wallet.json`. */
export function walletPath(options: WalletOptions = {}): {file: string; isDefault: boolean} {
  const env = options.env ?? process.env
  if (options.path) return {file: options.path, isDefault: false}
  if (env.GPUNET_WALLET) return {file: env.GPUNET_WALLET, isDefault: false}
  return {file: join(configDir(env), 'wallet.json'), isDefault: true}
}

/** Loads a Solana keypair file (a JSON array of 64 bytes: secret seed then public key). */
export async function loadWallet(options: WalletOptions = {}): Promise<Wallet> {
  const {file, isDefault} = walletPath(options)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
    if (missing && isDefault && options.createIfMissing) return createWallet(file)
    throw new GpunetError('wallet_unreadable', `cannot read the wallet ${file}: ${describeReadError(error)}`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'pass --wallet FILE or set GPUNET_WALLET to a Solana keypair file (a JSON array of 64 numbers)',
    })
  }
  return walletFromBytes(parseKeypair(text, file), file)
}

/** Creates a new keypair file with mode 0600. */
export async function createWallet(file: string): Promise<Wallet> {
  const bytes = generateKeypairBytes()
  await writePrivateFile(file, `${JSON.stringify([...bytes])}\n`)
  return walletFromBytes(bytes, file)
}

/** A wallet from the 64 bytes of a Solana keypair; refuses a public half that does not match the seed. */
export function walletFromBytes(bytes: Uint8Array, file = '<memory>'): Wallet {
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
  return {address: bs58.encode(bytes.subarray(32, 64)), file, sign: (message) => signMessage(message, key)}
}

function parseKeypair(text: string, file: string): Uint8Array {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    value = undefined
  }
  const isBytes =
    Array.isArray(value) && value.length === 64 && value.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)
  if (!isBytes) {
    throw new GpunetError('wallet_invalid', `${file} is not a Solana keypair file`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'a keypair file is a JSON array of 64 numbers, as written by `solana-keygen new`',
    })
  }
  return Uint8Array.from(value as number[])
}
