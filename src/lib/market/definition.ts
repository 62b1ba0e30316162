/** A posted job's definition, read back from the content store (for its service URLs). */
import type {JobDefinition} from '../definition/schema.js'
import {validateJobDefinition} from '../definition/validate.js'
import {isGpunetError} from '../errors.js'
import type {MarketNetwork} from './connect.js'

/** The definition stored under `cid`, or null (with a note saying why) when it cannot be read or is not valid. */
export async function fetchDefinition(
  net: MarketNetwork,
  cid: string,
  note: (line: string) => void,
): Promise<JobDefinition | null> {
  try {
    const result = validateJobDefinition(JSON.parse(new TextDecoder().decode(await net.content().get(cid))))
    if (result.success) return result.data
    note(`the job's definition ${cid} is not a valid job definition: no service URLs shown`)
  } catch (error) {
    if (!isGpunetError(error) && !(error instanceof SyntaxError)) throw error
    note(`cannot read the job's definition ${cid}: ${error.message}`)
  }
  return null
}
