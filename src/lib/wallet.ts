/**
 * The user's wallet: a Solana CLI keypair file (a JSON array of the 64 secret key bytes) or a file holding a
 * base58 secret key, found at `--wallet` > `GPUNET_WALLET` > `~/.config/gpunet/wallet.json`. Both settings are
 * paths, never key text: a key in a flag or an environment variable would show in `ps` and shell history.
 */
import {Keypair, PublicKey} from '@solana/web3.js'
import bs58 from 'bs58'
import {chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {dirname, join} from 'node:path'

import {describeReadError} from './definition/check.js'
import {generateKeypairBytes, signingKey, signMessage} from './ed25519.js'
import {ExitCode, GpunetError} from './errors.js'
import {configDir} from './private-file.js'

/** A Solana keypair: the base58 address and a signer; the secret key stays inside this object. */
export interface Wallet {
  readonly address: string
  readonly publicKey: PublicKey
  readonly file: string
  /** Signs bytes with ed25519, as Solana wallets do. */
  sign(message: Uint8Array): Uint8Array
  /** The web3.js signer, to sign transactions. */
  keypair(): Keypair
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

/** The path of the wallet to use: `--wallet` > `GPUNET_WALLET` > `~/.config/gpunet/wallet.json`. */
export function walletPath(options: WalletOptions = {}): {file: string; isDefault: boolean} {
  const env = options.env ?? process.env
  if (options.path) return {file: options.path, isDefault: false}
  if (env.GPUNET_WALLET) return {file: env.GPUNET_WALLET, isDefault: false}
  return {file: join(configDir(env), 'wallet.json'), isDefault: true}
}

/** Loads the wallet; on localnet (`createIfMissing`) a missing default wallet is created and announced. */
export async function loadWallet(options: WalletOptions = {}): Promise<Wallet> {
  const {file} = walletPath(options)
  const {wallet, created} = loadOrCreateWallet(file, Boolean(options.createIfMissing && !options.path))
  if (created) options.note?.(`created a new localnet wallet at ${file}`)
  return wallet
}

/** Creates a new keypair file with mode 0600. */
export async function createWallet(file: string): Promise<Wallet> {
  const bytes = generateKeypairBytes()
  writeKeypairBytes(file, bytes)
  return walletFromBytes(bytes, file)
}

/** Reads a keypair file as a web3.js Keypair (the localnet's faucet and wallets). */
export function readKeypair(file: string): Keypair {
  return readWallet(file).keypair()
}

/** Writes a keypair file readable by its owner only (0600, in a 0700 folder). */
export function writeKeypair(file: string, keypair: Keypair): void {
  writeKeypairBytes(file, keypair.secretKey)
}

/** Reads the keypair at `file`, creating it first when there is none. */
export function loadOrCreateKeypair(file: string): {keypair: Keypair; created: boolean} {
  const {wallet, created} = loadOrCreateWallet(file, true)
  return {keypair: wallet.keypair(), created}
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
  const secret = Uint8Array.from(bytes)
  const publicKey = new PublicKey(secret.subarray(32, 64))
  return {
    address: publicKey.toBase58(),
    publicKey,
    file,
    sign: (message) => signMessage(message, key),
    keypair: () => Keypair.fromSecretKey(secret, {skipValidation: true}),
  }
}

function loadOrCreateWallet(file: string, create: boolean): {wallet: Wallet; created: boolean} {
  try {
    return {wallet: readWallet(file), created: false}
  } catch (error) {
    const missing = (error as {cause?: NodeJS.ErrnoException}).cause?.code === 'ENOENT'
    if (!missing || !create) throw error
  }
  const bytes = generateKeypairBytes()
  writeKeypairBytes(file, bytes)
  return {wallet: walletFromBytes(bytes, file), created: true}
}

function readWallet(file: string): Wallet {
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
  return walletFromBytes(parseSecretKey(text, file), file)
}

/** The 64 secret key bytes of a keypair file's text: a JSON array of numbers, or a base58 string. */
function parseSecretKey(text: string, file: string): Uint8Array {
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

/** Writes atomically with mode 0600 (a temporary file renamed over the target), synchronously for the localnet. */
function writeKeypairBytes(file: string, bytes: Uint8Array): void {
  mkdirSync(dirname(file), {recursive: true, mode: 0o700})
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  writeFileSync(temporary, `${JSON.stringify([...bytes])}\n`, {mode: 0o600})
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}
