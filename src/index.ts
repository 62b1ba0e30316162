/** gpunet as a library: `import {validateJobDefinition} from 'gpunet'`. */
export * from './lib/definition/index.js'
export {ExitCode, GpunetError} from './lib/errors.js'
export * from './lib/market/index.js'
export {computeCidV0} from './lib/ipfs/cid.js'
export {ensureLocalnet, localnetStatus, type LocalnetStatus, runningLocalnet} from './lib/localnet/control.js'
export {defaultDataDir} from './lib/localnet/paths.js'
