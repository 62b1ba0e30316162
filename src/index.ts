/** gpunet as a library: `import {validateJobDefinition} from 'gpunet'`. */
export * from './lib/definition/index.js'
export {ExitCode, GpunetError} from './lib/errors.js'
export {configureHttp, type HttpRetry, type HttpTimeouts} from './lib/http/client.js'
export {SecretsClient, type SecretsClientOptions} from './lib/secrets/client.js'
export * from './lib/secrets/service/index.js'
export {createWallet, loadWallet, type Wallet, walletFromBytes} from './lib/keys/wallet.js'
export {SETTINGS, type SettingKey, type SettingValue} from './lib/settings/catalog.js'
export {localnetDataDir as defaultDataDir, resolveSettings, type Settings, walletPath} from './lib/settings/settings.js'
export * from './lib/market/index.js'
export {computeCidV0} from './lib/ipfs/cid.js'
export {ensureLocalnet, localnetStatus, type LocalnetStatus, runningLocalnet} from './lib/localnet/server/control.js'
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
  type PostSpend,
  stopJob,
  waitForJob,
  type WaitOptions,
} from './lib/job/api.js'
