/**
 * One vault key per database: managers sharing a database must seal and open with the same key. The database keeps
 * a check value (an HMAC of a fixed text under the key, which reveals nothing of it); a manager whose key gives
 * another value refuses to start, and none ever makes a new key beside vaults sealed with another.
 */
import {createHmac} from 'node:crypto'

import {ExitCode, GpunetError} from '../../errors.js'
import type {DeploymentStore} from '../store/store.js'
import {loadVaultKey, vaultSeal} from './vault-seal.js'

const CHECK_TEXT = 'gpunet deployment manager vault key check v1'

/** The check value of `key`. */
export function vaultKeyCheck(key: Buffer): string {
  return createHmac('sha256', key).update(CHECK_TEXT).digest('base64')
}

function wrongKey(file: string, store: DeploymentStore, why: string): GpunetError {
  return new GpunetError('vault_key_mismatch', `the vault key in ${file} is not the key of ${store.where}: ${why}`, {
    exitCode: ExitCode.INVALID_INPUT,
    hint:
      'every manager on one database needs the same key: copy the key file of the manager that created the vaults ' +
      '(or pass --vault-key-file); never replace it, or the vaults it sealed cannot pay',
  })
}

/**
 * The vault key for `store`: read from `file` (created only when the database holds neither vaults nor a check), and
 * refused unless it is the database's. The first manager to start stores its key's check.
 */
export async function loadCheckedVaultKey(file: string, store: DeploymentStore): Promise<Buffer> {
  const stored = await store.keyCheck()
  const vault = stored ? undefined : await store.anyVault()
  const key = await loadVaultKey(file, {create: !stored && !vault})
  const check = vaultKeyCheck(key)
  if (stored && stored !== check) throw wrongKey(file, store, 'its check value differs from the one the database holds')
  if (vault) {
    // A database from before key checks: the key must open a vault it holds.
    try {
      vaultSeal(key).open(vault.vault, Buffer.from(vault.sealed))
    } catch {
      throw wrongKey(file, store, `it cannot open the sealed key of vault ${vault.vault}`)
    }
  }
  // Two first starters with different keys: the first one stored wins, the other is refused here.
  if ((await store.keepKeyCheck(check)) !== check)
    throw wrongKey(file, store, 'another manager stored another key first')
  return key
}
