/** gpunet as a library: `import {validateJobDefinition} from 'gpunet'`. */
export * from './lib/definition/index.js'
export {ExitCode, GpunetError} from './lib/errors.js'
