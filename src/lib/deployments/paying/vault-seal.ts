/**
 * Vault keys sealed at rest: each vault's secret key is encrypted with AES-256-GCM under a key kept in a file beside
 * the database (mode 0600). Lose that file and every vault's funds are lost (docs/deployment-manager.md).
 */
import {createCipheriv, createDecipheriv, randomBytes} from 'node:crypto'
import {readFile, stat} from 'node:fs/promises'

import {Keypair} from '@solana/web3.js'

import {ExitCode, GpunetError} from '../../errors.js'
import {writePrivateFile} from '../../keys/private-file.js'

const FORMAT = 1
const IV_BYTES = 12
const TAG_BYTES = 16

/** Seals and opens vault secret keys with the manager's key. */
export interface VaultSeal {
  seal(keypair: Keypair): Buffer
  open(vault: string, sealed: Buffer): Keypair
}

/**
 * Reads the key file, or creates it (32 random bytes, base64, mode 0600) on first start; with `create: false` (the
 * database already holds vaults or a key check: vault-key-check.ts) a missing file is refused instead.
 */
export async function loadVaultKey(file: string, options: {create?: boolean} = {}): Promise<Buffer> {
  try {
    const info = await stat(file)
    if ((info.mode & 0o077) !== 0) {
      throw new GpunetError('key_file_exposed', `the vault key file ${file} is readable by other users`, {
        exitCode: ExitCode.INVALID_INPUT,
        hint: `run: chmod 600 ${file}`,
      })
    }
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64')
    if (key.length !== 32) {
      throw new GpunetError('key_invalid', `${file} does not hold a 32-byte key`, {
        exitCode: ExitCode.INVALID_INPUT,
        hint: 'restore it from your backup: without it the vaults cannot be opened',
      })
    }
    return key
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  if (options.create === false) {
    throw new GpunetError(
      'vault_key_missing',
      `no vault key at ${file}, and the database already holds sealed vaults`,
      {
        exitCode: ExitCode.INVALID_INPUT,
        hint:
          'a new key could open none of them: copy the key the other managers use there (or pass --vault-key-file), ' +
          'or restore it from your backup',
      },
    )
  }
  const key = randomBytes(32)
  await writePrivateFile(file, `${key.toString('base64')}\n`)
  return key
}

/** The seal made with `key`; the vault's address is the associated data, so a sealed key moved to another row fails. */
export function vaultSeal(key: Buffer): VaultSeal {
  return {
    seal(keypair) {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv('aes-256-gcm', key, iv)
      cipher.setAAD(Buffer.from(keypair.publicKey.toBase58()))
      const body = Buffer.concat([cipher.update(keypair.secretKey), cipher.final()])
      return Buffer.concat([Buffer.from([FORMAT]), iv, cipher.getAuthTag(), body])
    },
    open(vault, sealed) {
      if (sealed[0] !== FORMAT || sealed.length < 1 + IV_BYTES + TAG_BYTES) throw new Error('unknown sealed key format')
      const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(1, 1 + IV_BYTES))
      decipher.setAAD(Buffer.from(vault))
      decipher.setAuthTag(sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES))
      const secret = Buffer.concat([decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES)), decipher.final()])
      const keypair = Keypair.fromSecretKey(secret)
      if (keypair.publicKey.toBase58() !== vault) throw new Error(`the sealed key is not the key of ${vault}`)
      return keypair
    },
  }
}
