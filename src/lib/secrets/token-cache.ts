import {decodeJwt} from 'jose'
import {readFile} from 'node:fs/promises'
import {writePrivateFile} from '../private-file.js'

/** Seconds before expiry at which a cached token is no longer offered, so it cannot expire in flight. */
const MARGIN_SECONDS = 30

type Entries = Record<string, {token: string; expiresAt: number}>

/**
 * Login tokens per service URL, address and job, in one 0600 file (the CLI's: `secrets-tokens.json` in gpunet's own
 * folder, `~/.config/gpunet`).
 */
export class TokenCache {
  constructor(readonly file: string) {}

  /** A token that is still valid for a while, if one is cached. */
  async get(key: string): Promise<string | undefined> {
    const entry = (await this.read())[key]
    return entry && entry.expiresAt - MARGIN_SECONDS > Date.now() / 1000 ? entry.token : undefined
  }

  /** Caches a token until the expiry written inside it; drops entries that have expired. */
  async set(key: string, token: string): Promise<void> {
    const entries = await this.read()
    const now = Date.now() / 1000
    for (const [k, e] of Object.entries(entries)) if (e.expiresAt <= now) delete entries[k]
    entries[key] = {token, expiresAt: decodeJwt(token).exp ?? now}
    await writePrivateFile(this.file, JSON.stringify(entries, null, 2))
  }

  /** Forgets a token the service refused. */
  async delete(key: string): Promise<void> {
    const entries = await this.read()
    if (!(key in entries)) return
    delete entries[key]
    await writePrivateFile(this.file, JSON.stringify(entries, null, 2))
  }

  private async read(): Promise<Entries> {
    try {
      const value = JSON.parse(await readFile(this.file, 'utf8')) as unknown
      return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Entries) : {}
    } catch {
      // A missing or damaged cache only costs a new login.
      return {}
    }
  }
}
