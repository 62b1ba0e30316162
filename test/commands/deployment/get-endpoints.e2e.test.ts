/**
 * `gpunet deployment get` on devnet and mainnet, run as users run it, against a stand-in manager on 127.0.0.1: the
 * text shows each endpoint with its kind (the network's manager sends its deployment URLs without one; gpunet's marks
 * each), and `--json` prints the endpoints exactly as the manager sent them.
 */
import {strict as assert} from 'node:assert'
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {Keypair} from '@solana/web3.js'

import {runManagerCli} from '../../helpers/cli.js'
import {removeDir, tempDir} from '../../helpers/files.js'
import {startServer, type TestServer} from '../../helpers/http.js'

const ID = 'Dep1oyment1111111111111111111111111111111111'
const JOB = 'Fh3NmqbHk9bmQ2JYpWZ5dTxQdGNxFDHStbU7zjWBX7bb'

describe('deployment get: endpoints by kind on devnet and mainnet', () => {
  let dir: string
  let server: TestServer
  const owner = Keypair.generate()
  let endpoints: unknown[] = []
  const cli = (network: string, args: string[]) =>
    runManagerCli(['deployment', 'get', ID, '--network', network, ...args], dir, server.url)

  before(async () => {
    dir = tempDir('gpunet-get-endpoints-')
    writeFileSync(join(dir, 'wallet.json'), JSON.stringify(Array.from(owner.secretKey)), {mode: 0o600})
    server = await startServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          id: ID,
          name: 'svc',
          vault: Keypair.generate().publicKey.toBase58(),
          market: Keypair.generate().publicKey.toBase58(),
          owner: owner.publicKey.toBase58(),
          status: 'RUNNING',
          replicas: 1,
          timeout: 10,
          strategy: 'SIMPLE',
          endpoints,
          active_revision: 1,
          active_jobs: 1,
          created_at: '2026-11-27T10:00:00.000Z',
          updated_at: '2026-11-27T10:00:00.000Z',
        }),
      )
    })
  })
  after(async () => {
    await server.close()
    removeDir(dir)
  })

  it("the network's manager's endpoints (no kind) are its deployment URLs; --json keeps them as sent", async () => {
    endpoints = [
      {opId: 'web', port: 8080, url: 'https://4ZbyvbTnRCuBXz8MRQd5pzZ6ciHAoKzEYbPLTQ8Efdpm.node.k8s.prd.nos.ci'},
    ]
    const text = await cli('mainnet', [])
    assert.equal(text.code, 0, text.stderr)
    assert.match(
      text.stdout,
      /^ {2}endpoints:\n {4}deployment {2}https:\/\/4ZbyvbTnRCuBXz8MRQd5pzZ6ciHAoKzEYbPLTQ8Efdpm\.node\.k8s\.prd\.nos\.ci \(web:8080\)$/m,
    )
    const json = await cli('mainnet', ['--json'])
    assert.equal(json.code, 0, json.stderr)
    assert.deepEqual(JSON.parse(json.stdout).endpoints, endpoints)
  })

  it("gpunet's manager on devnet: the network's deployment URL and each replica's, each with its kind", async () => {
    endpoints = [
      {opId: 'web', port: 8080, url: 'https://D3pLoyment.node.k8s.dev.nos.ci', kind: 'deployment'},
      {opId: 'web', port: 8080, url: 'https://R3plica.node.k8s.dev.nos.ci', kind: 'replica', job: JOB},
    ]
    const text = await cli('devnet', [])
    assert.equal(text.code, 0, text.stderr)
    assert.match(text.stdout, /^ {4}deployment {2}https:\/\/D3pLoyment\.node\.k8s\.dev\.nos\.ci \(web:8080\)$/m)
    assert.match(
      text.stdout,
      new RegExp(`^ {4}replica {5}https://R3plica\\.node\\.k8s\\.dev\\.nos\\.ci \\(web:8080, job ${JOB}\\)$`, 'm'),
    )
    const json = await cli('devnet', ['--json'])
    assert.equal(json.code, 0, json.stderr)
    assert.deepEqual(JSON.parse(json.stdout).endpoints, endpoints)
  })
})
