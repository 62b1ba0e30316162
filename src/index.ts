/** gpunet as a library: `import {validateJobDefinition} from 'gpunet'`. */
export * from './lib/definition/index.js'
export {ExitCode, GpunetError} from './lib/errors.js'
export {configureHttp, type HttpRetry, type HttpTimeouts} from './lib/http.js'
export {SecretsClient, type SecretsClientOptions} from './lib/secrets/client.js'
export * from './lib/secrets/service/index.js'
export {createWallet, loadWallet, type Wallet, walletFromBytes} from './lib/wallet.js'
export {resolveSettings, type Settings, SETTINGS, walletPath} from './lib/settings.js'
export * from './lib/market/index.js'
export {computeCidV0} from './lib/ipfs/cid.js'
export {ensureLocalnet, localnetStatus, type LocalnetStatus, runningLocalnet} from './lib/localnet/control.js'
export {defaultDataDir} from './lib/localnet/paths.js'
export {
  connectNetwork,
  type ConnectNetworkOptions,
  extendJob,
  getJob,
  type GpunetNetwork,
  type JobInfo,
  postJob,
  type PostedJob,
  type PostJobOptions,
  stopJob,
  waitForJob,
  type WaitOptions,
} from './lib/jobs-api.js'
