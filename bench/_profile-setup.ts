import {spawnSync} from 'node:child_process'
import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Keypair} from '@solana/web3.js'
import {startLocalnet} from '../src/lib/localnet/server.js'
const BIN = fileURLToPath(new URL('../bin/run.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'gpunet-prof-'))
const wallet = Keypair.generate()
const walletFile = join(dir, 'wallet.json')
writeFileSync(walletFile, JSON.stringify([...wallet.secretKey]))
const other = Keypair.generate()
writeFileSync(join(dir, 'other.json'), JSON.stringify([...other.secretKey]))
const ln = await startLocalnet({
  dataDir: join(dir, 'localnet'),
  port: 0,
  wallet: wallet.publicKey,
  node: {gatewayPort: 0, pull: 'never', gpus: 0},
})
const env = {
  ...process.env,
  NO_COLOR: '1',
  GPUNET_LOCALNET_DIR: join(dir, 'localnet'),
  GPUNET_WALLET: walletFile,
  XDG_CONFIG_HOME: join(dir, 'config'),
}
const file = join(dir, 'job.json')
writeFileSync(
  file,
  JSON.stringify({
    version: '0.1',
    type: 'container',
    ops: [
      {id: 'main', type: 'container/run', args: {image: 'localhost/gpunet-test-busybox:latest', cmd: 'sleep 3000'}},
    ],
  }),
)
const r = spawnSync(
  process.execPath,
  [BIN, 'job', 'post', '--file', file, '--timeout', '3000', '--wait-for', 'running', '--json'],
  {env, encoding: 'utf8'},
)
const job = JSON.parse(r.stdout).job
writeFileSync(
  '/tmp/wt40/env.sh',
  `export NO_COLOR=1 GPUNET_LOCALNET_DIR=${join(dir, 'localnet')} GPUNET_WALLET=${walletFile} XDG_CONFIG_HOME=${join(dir, 'config')} JOB=${job} OTHER=${join(dir, 'other.json')}\n`,
)
console.log('ready', job)
process.on('SIGTERM', async () => {
  await ln.close()
  process.exit(0)
})
setInterval(() => {}, 1 << 30)
