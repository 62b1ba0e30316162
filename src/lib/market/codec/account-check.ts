/**
 * The one rule for an account read from the chain, with or without web3.js: missing, or held by another program
 * than the network's jobs program, or not of the expected type is exit 7; the program's own account that cannot
 * be read whole is the RPC node's fault (exit 5).
 */
import {ExitCode, GpunetError} from '../../errors.js'
import type {AccountDecodeError} from './account-layout.js'

/** An account as the RPC node answered it: its owner program (base58) and its bytes. */
export interface RawAccount {
  owner: string
  data: Uint8Array
}

/** Decodes `info` as a `what` (job, market...) at `address`, or throws the error the rule above names. */
export function decodeChecked<T>(
  info: RawAccount | null,
  programId: string,
  address: string,
  what: string,
  decode: (data: Uint8Array) => T,
): T {
  const missing = () =>
    new GpunetError(`${what}_not_found`, `no ${what} at ${address} on this network`, {
      exitCode: ExitCode.NOT_FOUND,
      hint:
        what === 'job'
          ? "check the address and --network; a delisted job's account is closed (`gpunet job list` still shows it)"
          : `check the address and --network; \`gpunet market list\` shows the network's markets`,
      fields: {[what]: address},
    })
  if (!info) throw missing()
  if (info.owner !== programId) {
    throw new GpunetError(
      `${what}_not_found`,
      `no ${what} at ${address}: that account belongs to program ${info.owner}, not to this network's jobs program ${programId}`,
      {exitCode: ExitCode.NOT_FOUND, hint: 'check the address and --network', fields: {[what]: address}},
    )
  }
  try {
    return decode(info.data)
  } catch (error) {
    if ((error as AccountDecodeError).name === 'AccountDecodeError') throw missing()
    // The program's own account, yet no readable one (cut short): what the RPC node answered is wrong.
    throw new GpunetError(
      'account_unreadable',
      `the RPC node answered an account at ${address} that is no readable ${what}: ${(error as Error).message}`,
      {exitCode: ExitCode.UNAVAILABLE, hint: 'try another RPC node (--rpc)', fields: {[what]: address}},
    )
  }
}
