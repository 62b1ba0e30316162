/** Entry of a localnet started in the background: `node main.js --data-dir DIR --port N`. */
import {parseArgs} from 'node:util'

import {isGpunetError} from '../errors.js'
import {serveUntilSignal} from './serve.js'

const {values} = parseArgs({options: {'data-dir': {type: 'string'}, port: {type: 'string'}}})
try {
  await serveUntilSignal(
    {dataDir: values['data-dir']!, port: Number(values.port ?? 0)},
    (runtime) => process.stdout.write(`localnet ready at ${runtime.rpcUrl} (pid ${runtime.pid})\n`),
  )
} catch (error) {
  process.stderr.write(`${isGpunetError(error) ? error.message : (error as Error).stack}\n`)
  process.exitCode = 1
}
