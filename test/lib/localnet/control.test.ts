import {strict as assert} from 'node:assert'
import {mkdtemp, rm, writeFile} from 'node:fs/promises'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {configureHttp} from '../../../src/lib/http/client.js'
import {runningLocalnet} from '../../../src/lib/localnet/server/control.js'
import {localnetFiles} from '../../../src/lib/localnet/paths.js'
import {startProxy, startServer, type TestServer, withProxyVariables} from '../../helpers/http.js'

describe('runningLocalnet over the shared HTTP client', () => {
  let dataDir: string
  const servers: TestServer[] = []
  beforeEach(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'gpunet-control-'))
    await configureHttp({retry: {minDelayMs: 50}})
  })
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()))
    await configureHttp()
    await rm(dataDir, {recursive: true, force: true})
  })

  /** A runtime record of this (live) process whose RPC is `rpcUrl`. */
  const record = (rpcUrl: string) =>
    writeFile(localnetFiles(dataDir).runtime, JSON.stringify({pid: process.pid, rpcUrl}))

  it('asks /health directly, never through a proxy, and again after a 503', async () => {
    let answers = 0
    const rpc = await startServer((_req, res) => res.writeHead(++answers === 1 ? 503 : 200).end())
    const proxy = await startProxy()
    servers.push(rpc, proxy)
    await record(rpc.url)
    await withProxyVariables({HTTP_PROXY: proxy.url, NO_PROXY: ''}, async () => {
      assert.equal((await runningLocalnet(dataDir))?.rpcUrl, rpc.url)
    })
    assert.deepEqual(rpc.seen, ['GET /health', 'GET /health'])
    assert.deepEqual(proxy.seen, [])
  })

  it('reports no localnet when /health does not answer within its deadline', async () => {
    const rpc = await startServer(() => {})
    servers.push(rpc)
    await record(rpc.url)
    assert.equal(await runningLocalnet(dataDir), null)
  })
})
