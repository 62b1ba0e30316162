/** A posted job's definition, read back from the content store (for its service URLs and health checks). */
import {readNetworkDefinition} from '../../definition/network-form/read.js'
import {specVerdict} from '../../definition/spec-verdict.js'
import {isGpunetError} from '../../errors.js'
import {assertNestingDepth} from '../../text/nesting.js'
import type {MarketNetwork} from '../connect.js'
import type {ExposingDefinition} from '../service-url.js'

/**
 * The definition stored under `cid`, in the network's form or (posted before gpunet translated) the spec's; null
 * (with a note saying why) when it cannot be read or is neither.
 */
export async function fetchDefinition(
  net: MarketNetwork,
  cid: string,
  note: (line: string) => void,
): Promise<ExposingDefinition | null> {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(await net.content().get(cid)))
    // Past the limit no walk of it (the network's validator, a clone) is safe: refused before any.
    assertNestingDepth(value, `the job's definition ${cid}`)
    const read = readNetworkDefinition(value)
    if (read.ok) return read.document
    const spec = await specVerdict(value)
    if (spec.success) return spec.data
    note(`the job's definition ${cid} is not a valid job definition: no service URLs shown`)
  } catch (error) {
    if (!isGpunetError(error) && !(error instanceof SyntaxError)) throw error
    // A gateway that answers other bytes than the CID's is lying: nothing it serves is believed.
    if (isGpunetError(error) && error.code === 'content_mismatch') throw error
    note(`cannot read the job's definition ${cid}: ${error.message}`)
  }
  return null
}
