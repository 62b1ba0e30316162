import {strict as assert} from 'node:assert'
import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {mkdirSync, writeFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import {localnetFiles} from '../../../src/lib/localnet/paths.js'
import {removeDir, tempDir} from '../../helpers/localnet.js'

const MAIN = fileURLToPath(new URL('../../../src/lib/localnet/main.ts', import.meta.url))

describe('localnet process', function () {
  this.timeout(30_000)

  it('refuses a data directory another live process holds, and takes over a stale lock', async () => {
    const dataDir = tempDir()
    try {
      mkdirSync(dataDir, {recursive: true})
      // this test's own pid: a live process holds the lock
      writeFileSync(localnetFiles(dataDir).lock, String(process.pid))
      const refused = spawn(process.execPath, ['--import', 'tsx', MAIN, '--data-dir', dataDir, '--port', '0'], {
        env: {...process.env, GPUNET_WALLET: `${dataDir}/wallet.json`},
      })
      let stderr = ''
      refused.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
      const [code] = (await once(refused, 'exit')) as [number]
      assert.equal(code, 1)
      assert.equal(stderr.trim(), `a localnet (pid ${process.pid}) already uses ${dataDir}`)

      // a pid that cannot be alive: the lock is stale and the localnet starts
      writeFileSync(localnetFiles(dataDir).lock, '999999999')
      const started = spawn(process.execPath, ['--import', 'tsx', MAIN, '--data-dir', dataDir, '--port', '0'], {
        stdio: ['ignore', 'pipe', 'inherit'],
        env: {...process.env, GPUNET_WALLET: `${dataDir}/wallet.json`},
      })
      const [line] = (await once(started.stdout!, 'data')) as [Buffer]
      assert.match(String(line), /^localnet ready at http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)/)
      started.kill('SIGTERM')
      assert.deepEqual(await once(started, 'exit'), [0, null])
    } finally {
      removeDir(dataDir)
    }
  })
})
