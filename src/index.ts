/** gpunet as a library: `import {validateJobDefinition} from 'gpunet'`. */
export * from './lib/definition/index.js'
export {ExitCode, GpunetError} from './lib/errors.js'
export {SecretsClient, type SecretsClientOptions} from './lib/secrets/client.js'
export * from './lib/secrets/service/index.js'
export {createWallet, loadWallet, type Wallet, walletFromBytes} from './lib/wallet.js'
