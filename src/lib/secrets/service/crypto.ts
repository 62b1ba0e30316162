import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
  randomFillSync,
} from 'node:crypto'
import {readFile, stat} from 'node:fs/promises'

import {describeReadError} from '../../text/read-error.js'
import {ExitCode, GpunetError} from '../../errors.js'
import {writePrivateFile} from '../../keys/private-file.js'

/** The environment variable that holds the master key (32 bytes, base64 or hex); wins over the key file. */
export const KEY_ENV = 'GPUNET_SECRETS_KEY'

const FORMAT = 1 // first byte of every sealed value, so the format can change without guessing
const IV_BYTES = 12
const TAG_BYTES = 16

/** The secretsKey setting as the service is given it: the text of `GPUNET_SECRETS_KEY`, by that name. */
export type MasterKeySetting = Partial<Record<typeof KEY_ENV, string>>

/**
 * The master key: the secretsKey setting (`GPUNET_SECRETS_KEY`) when given, else `keyFile`, which is created (mode
 * 0600) on first start. Every instance that shares a database must share this key.
 */
export async function loadMasterKey(keyFile: string, env: MasterKeySetting = {}): Promise<Buffer> {
  const fromEnv = env[KEY_ENV]
  // Named as the setting, not the variable: the value may come from the config file as well as the environment.
  if (fromEnv) return decodeKey(fromEnv, `the secretsKey setting (${KEY_ENV})`)
  try {
    const info = await stat(keyFile)
    if ((info.mode & 0o077) !== 0) {
      throw new GpunetError('key_file_exposed', `the key file ${keyFile} is readable by other users`, {
        exitCode: ExitCode.INVALID_INPUT,
        hint: `run: chmod 600 ${keyFile}`,
      })
    }
    return decodeKey(await readFile(keyFile, 'utf8'), keyFile)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
      if (error instanceof GpunetError) throw error
      throw new GpunetError('key_file_unreadable', `cannot read the key file ${keyFile}: ${describeReadError(error)}`, {
        exitCode: ExitCode.INVALID_INPUT,
      })
    }
  }
  const key = randomBytes(32)
  await writePrivateFile(keyFile, `${key.toString('base64')}\n`)
  return key
}

function decodeKey(text: string, source: string): Buffer {
  const trimmed = text.trim()
  const key = /^[0-9a-f]{64}$/i.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64')
  if (key.length !== 32) {
    throw new GpunetError('key_invalid', `${source} does not hold a 32-byte key`, {
      exitCode: ExitCode.INVALID_INPUT,
      hint: 'make one with: openssl rand -base64 32',
    })
  }
  return key
}

/** Derives a purpose-bound subkey, so the encryption key and the token-signing key are never the same bytes. */
export function deriveKey(master: Buffer, purpose: 'secret-values' | 'login-tokens'): Buffer {
  return Buffer.from(hkdfSync('sha256', master, Buffer.alloc(0), `gpunet-secrets/${purpose}`, 32))
}

/**
 * AES-256-GCM sealing of secret values. Owner and name are the associated data: a sealed value moved to another
 * row (another owner or another name) fails authentication instead of decrypting.
 */
export class SecretCipher {
  // A KeyObject, not bytes: OpenSSL then skips preparing the key on every value (about 40% of a small value's time).
  private readonly key: KeyObject
  private readonly opened = new OpenedValues(16 * 1024 * 1024)
  private readonly ivs = new RandomIvs()

  constructor(master: Buffer) {
    this.key = createSecretKey(deriveKey(master, 'secret-values'))
  }

  /** Encrypts a value for the row (owner, name). */
  seal(owner: string, name: string, value: string): Buffer {
    const iv = this.ivs.next()
    const cipher = createCipheriv('aes-256-gcm', this.key, iv)
    cipher.setAAD(associatedData(owner, name))
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()])
    return Buffer.concat([Buffer.from([FORMAT]), iv, cipher.getAuthTag(), body])
  }

  /** Decrypts a value of the row (owner, name); throws when it was sealed for another row or altered. */
  open(owner: string, name: string, sealed: Buffer): string {
    if (sealed[0] !== FORMAT || sealed.length < 1 + IV_BYTES + TAG_BYTES) throw new Error('unknown sealed value format')
    // The whole sealed value is the key: a changed row, or a tampered byte, misses and goes through AES-GCM.
    const id = `${owner}\0${name}\0${sealed.toString('latin1')}`
    const known = this.opened.get(id)
    if (known !== undefined) return known
    const iv = sealed.subarray(1, 1 + IV_BYTES)
    const tag = sealed.subarray(1 + IV_BYTES, 1 + IV_BYTES + TAG_BYTES)
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv)
    decipher.setAAD(associatedData(owner, name))
    decipher.setAuthTag(tag)
    const value = decipher.update(sealed.subarray(1 + IV_BYTES + TAG_BYTES), undefined, 'utf8') + decipher.final('utf8')
    this.opened.set(id, value)
    return value
  }
}

/**
 * Random IVs drawn from the system's generator 256 at a time: one call per IV cost about 5 µs, a tenth of a seal.
 * Each IV is handed out once; the pool is refilled, never reused.
 */
class RandomIvs {
  private readonly pool = Buffer.alloc(IV_BYTES * 256)
  private used = this.pool.length

  next(): Buffer {
    if (this.used === this.pool.length) {
      randomFillSync(this.pool)
      this.used = 0
    }
    return Buffer.from(this.pool.subarray(this.used, (this.used += IV_BYTES)))
  }
}

/**
 * The values decrypted lately, bounded in bytes: reading an owner's secrets again costs no AES (about 7 µs a
 * value). Plaintext in this process's memory adds nothing for someone who can read it: the key is there too.
 */
class OpenedValues {
  private readonly values = new Map<string, string>()
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  get(id: string): string | undefined {
    return this.values.get(id)
  }

  set(id: string, value: string): void {
    const size = (id.length + value.length) * 2
    if (size > this.maxBytes) return
    this.bytes += size
    this.values.set(id, value)
    for (const [oldest, old] of this.values) {
      if (this.bytes <= this.maxBytes) break
      this.values.delete(oldest)
      this.bytes -= (oldest.length + old.length) * 2
    }
  }
}

function associatedData(owner: string, name: string): Buffer {
  // JSON keeps the pair unambiguous whatever characters the parts contain.
  return Buffer.from(JSON.stringify(['gpunet-secret', owner, name]), 'utf8')
}
